import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { TASKS } from "~/judge-validation/domain/judge-report";
import { getDb } from "~/platform/db.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { setLabels } from "~/judge-validation/judge-candidates.server";
import { getJudgeSet } from "~/judge-validation/judge-sets.server";
import { buildJudgeReport, JUDGE_PREFIX } from "~/judge-validation/domain/judge-report";
import { raterAction } from "~/evaluation/domain/judge";

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
    const action = l.rater.startsWith(JUDGE_PREFIX) ? l.action ?? null : raterAction(l.primaryAnswer, l.infoRequest);
    (byResponse[l.responseId] ??= {})[l.rater] = action;
  }
  return { set, report, byResponse };
}

const fmt = (v: number | null | undefined) => (v === null || v === undefined ? "—" : v.toFixed(3));

export default function JudgeReportPage() {
  const { set, report, byResponse } = useLoaderData<typeof loader>();
  const judges = Object.keys(report.judges);
  const humans = Object.keys(report.humans);
  const responses = Object.keys(report.majority);
  const withMajority = responses.filter((r) => report.majority[r] !== null).length;
  return (
    <section>
      <p>
        <Link to="/admin/judge">Judge validation</Link> › <Link to={`/admin/judge/${set.id}`}>{set.name}</Link> ›
      </p>
      <div className="row">
        <h1>Report</h1>
        <span className="spacer" />
        <a href={`/admin/judge/${set.id}/export/labels.csv`} className="button secondary" download>
          labels.csv
        </a>
      </div>
      <p className="muted">
        Submitted ratings only. The majority is the action with at least two of three human votes (docs/judge-validation.md, INTEROP
        §5.5); a split (1-1-1) has none and is left out of the scores. The same numbers come from{" "}
        <code>npm run concord -- judge-report --labels labels.csv</code>.
      </p>
      {report.warnings.map((w) => (
        <p key={w} className="notice warn">
          {w}
        </p>
      ))}
      <div className="card">
        <strong data-testid="report-summary">
          {report.n_responses} responses rated, {withMajority} with a majority, {report.ties.length} ties (split votes, no majority)
        </strong>
        {report.ties.length ? <p data-testid="ties">Ties (no majority): {report.ties.join(", ")}</p> : null}
        {report.too_few_votes.length ? <p>Fewer than two human actions: {report.too_few_votes.join(", ")}</p> : null}
      </div>

      <h2>Human consistency</h2>
      <table data-testid="humans">
        <thead>
          <tr>
            <th>Rater</th>
            <th className="num">Macro-F1 vs majority</th>
            <th className="num">n</th>
          </tr>
        </thead>
        <tbody>
          {humans.map((h) => (
            <tr key={h} data-rater={h}>
              <td>{h}</td>
              <td className="num">{fmt(report.humans[h].macro_f1)}</td>
              <td className="num">{report.humans[h].n}</td>
            </tr>
          ))}
          <tr>
            <th>Mean</th>
            <th className="num" data-testid="human-f1-mean">
              {fmt(report.human_macro_f1_mean)}
            </th>
            <th />
          </tr>
        </tbody>
      </table>
      <p>
        Fleiss' κ across raters: <strong data-testid="human-fleiss">{fmt(report.human_fleiss_kappa)}</strong>{" "}
        <span className="muted">({report.human_fleiss_n} responses with every rater's action)</span>
      </p>

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
          {judges.map((j) => {
            const s = report.judges[j];
            const labels = Object.keys(s.confusion);
            return (
              <details key={j} className="card" open={judges.length === 1}>
                <summary>
                  <strong>{j}</strong>: per task, per label, confusion
                </summary>
                <table>
                  <thead>
                    <tr>
                      <th>Task</th>
                      <th className="num">n</th>
                      <th className="num">Accuracy</th>
                      <th className="num">Balanced acc.</th>
                      <th className="num">Macro-F1</th>
                      <th className="num">Weighted F1</th>
                      <th className="num">Cohen's κ</th>
                      <th className="num">Fleiss' κ consensus+judge</th>
                      <th className="num">Fleiss' κ humans+judge</th>
                      <th className="num">n Fleiss</th>
                    </tr>
                  </thead>
                  <tbody>
                    {TASKS.map((t) => {
                      const x = s.tasks[t];
                      return (
                        <tr key={t}>
                          <td>{t}</td>
                          <td className="num">{x.n}</td>
                          <td className="num">{fmt(x.accuracy)}</td>
                          <td className="num">{fmt(x.balanced_accuracy)}</td>
                          <td className="num">{fmt(x.macro_f1)}</td>
                          <td className="num">{fmt(x.weighted_f1)}</td>
                          <td className="num">{fmt(x.cohen_kappa)}</td>
                          <td className="num">{fmt(x.fleiss_kappa_consensus_judge)}</td>
                          <td className="num">{fmt(x.fleiss_kappa_humans_plus_judge)}</td>
                          <td className="num">{x.n_fleiss}</td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
                {labels.length ? (
                  <div className="grid2">
                    <table>
                      <thead>
                        <tr>
                          <th>Action</th>
                          <th className="num">Precision</th>
                          <th className="num">Recall</th>
                        </tr>
                      </thead>
                      <tbody>
                        {labels.map((l) => (
                          <tr key={l}>
                            <td>{l}</td>
                            <td className="num">{fmt(s.precision[l])}</td>
                            <td className="num">{fmt(s.recall[l])}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                    <table aria-label={`Confusion matrix of ${j}`}>
                      <thead>
                        <tr>
                          <th>majority ↓ / judge →</th>
                          {labels.map((l) => (
                            <th key={l} className="num">
                              {l}
                            </th>
                          ))}
                        </tr>
                      </thead>
                      <tbody>
                        {labels.map((t) => (
                          <tr key={t}>
                            <th>{t}</th>
                            {labels.map((p) => (
                              <td key={p} className="num">
                                {s.confusion[t][p]}
                              </td>
                            ))}
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                ) : null}
              </details>
            );
          })}
        </>
      )}

      <h2>Majority per response</h2>
      <table data-testid="majority">
        <thead>
          <tr>
            <th>Response</th>
            <th>Majority action</th>
            <th>Raters' actions</th>
            {judges.map((j) => (
              <th key={j}>{j}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {responses.map((r) => {
            const actions = byResponse[r] ?? {};
            const human = Object.entries(actions).filter(([name]) => !name.startsWith(JUDGE_PREFIX));
            return (
              <tr key={r} data-response={r}>
                <td>{r}</td>
                <td data-testid="majority-action">
                  {report.majority[r] ?? (report.ties.includes(r) ? <em>tie</em> : <em className="muted">too few</em>)}
                </td>
                <td>{human.map(([name, a]) => `${name}: ${a ?? "—"}`).join(", ")}</td>
                {judges.map((j) => (
                  <td key={j}>{actions[JUDGE_PREFIX + j] ?? "—"}</td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
