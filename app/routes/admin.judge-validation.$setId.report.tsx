import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { getDb } from "~/platform/db.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { setLabels } from "~/judge-validation/judge-candidates.server";
import { getJudgeSet } from "~/judge-validation/judge-sets.server";
import { buildJudgeReport, JUDGE_PREFIX } from "~/judge-validation/domain/judge-report";
import { raterAction } from "~/evaluation/domain/judge";
import { fmt, HumanConsistency, JudgeDetails, MajorityTable } from "~/judge-validation/ui/judge-report-sections";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Report · ${data?.set.name ?? "Validation set"} · Concord` },
];

/** The report over the set's own labels: the same core function as `judge-report --labels` (app/judge-validation/domain/judge-report.ts). */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const set = requireById(params.setId, (id) => getJudgeSet(db, id), "No such validation set.");
  const labels = setLabels(db, set.id);
  const report = buildJudgeReport(labels);
  // Per response, every rater's and judge's action, for the admin's table (the report holds only the aggregates).
  const byResponse: Record<string, Record<string, string | null>> = {};
  for (const l of labels) {
    const action = l.rater.startsWith(JUDGE_PREFIX) ? (l.action ?? null) : raterAction(l.primaryAnswer, l.infoRequest);
    (byResponse[l.responseId] ??= {})[l.rater] = action;
  }
  return { set, report, byResponse };
}

export default function JudgeReportPage() {
  const { set, report, byResponse } = useLoaderData<typeof loader>();
  const judges = Object.keys(report.judges);
  const responses = Object.keys(report.majority);
  const withMajority = responses.filter((r) => report.majority[r] !== null).length;
  return (
    <section>
      <p>
        <Link to="/admin/judge-validation">Judge validation</Link> ›{" "}
        <Link to={`/admin/judge-validation/${set.id}`}>{set.name}</Link> ›
      </p>
      <div className="row">
        <h1>Report</h1>
        <span className="spacer" />
        <a href={`/admin/judge-validation/${set.id}/export/labels.csv`} className="button secondary" download>
          labels.csv
        </a>
      </div>
      <p className="muted">
        Submitted ratings only. The majority is the action with at least two of three human votes
        (docs/judge-validation.md); a split (1-1-1) has none and is left out of the scores. The same numbers come from{" "}
        <code>npm run concord -- judge-report --labels labels.csv</code>.
      </p>
      {report.warnings.map((w) => (
        <p key={w} className="notice warn">
          {w}
        </p>
      ))}
      <div className="card">
        <strong data-testid="report-summary">
          {report.n_responses} responses rated, {withMajority} with a majority, {report.ties.length} ties (split votes,
          no majority)
        </strong>
        {report.ties.length ? <p data-testid="ties">Ties (no majority): {report.ties.join(", ")}</p> : null}
        {report.too_few_votes.length ? <p>Fewer than two human actions: {report.too_few_votes.join(", ")}</p> : null}
      </div>

      <h2>Human consistency</h2>
      <HumanConsistency report={report} />

      <h2>Candidate judges</h2>
      {judges.length === 0 ? (
        <p className="muted">No judge outputs imported yet (on the set page).</p>
      ) : (
        <>
          <table data-testid="judges">
            <thead>
              <tr>
                <th>Judge</th>
                <th className="num">Macro-F1 (action)</th>
                <th className="num">Fleiss' κ with judge</th>
                <th className="num">n</th>
              </tr>
            </thead>
            <tbody>
              {judges.map((j) => (
                <tr key={j} data-judge={j}>
                  <td>
                    {j} {j === report.best_judge ? <span className="badge submitted">best</span> : null}
                  </td>
                  <td className="num">{fmt(report.judges[j].macro_f1)}</td>
                  <td className="num">{fmt(report.judges[j].fleiss_kappa_with_judge)}</td>
                  <td className="num">{report.judges[j].n}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p>
            Best judge by action macro-F1: <strong data-testid="best-judge">{report.best_judge ?? "—"}</strong>
          </p>
          {judges.map((j) => (
            <JudgeDetails key={j} j={j} s={report.judges[j]} open={judges.length === 1} />
          ))}
        </>
      )}

      <h2>Majority per response</h2>
      <MajorityTable report={report} byResponse={byResponse} />
    </section>
  );
}
