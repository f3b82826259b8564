import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
import { getDb } from "~/platform/db.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { listStudyAnnotators } from "~/annotation/assignments.server";
import { CASE_STATES, FINAL_STATES, type CaseProgressState } from "~/annotation/domain/case-progress";
import { goldExportRefusal } from "~/gold/gold-export.server";
import { progressWindow, type ProgressRow } from "~/gold/progress-window.server";
import { getStudy } from "~/annotation/studies.server";
import { getTimeOnTaskOffThread } from "~/study-report/study-report.server";
import { formatDuration, type TimeOnTask } from "~/study-report/domain/time-on-task";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Progress · ${data?.study.name ?? ""} · Concord` },
];

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const study = requireById(params.studyId, (id) => getStudy(db, id), "No such study.");
  // One window of the cases, as the URL asks; the counts kept by the database (docs/architecture.md, "Pages are
  // windows"); the time-on-task medians, which read every submitted annotation, on the statistics worker thread.
  const search = new URL(request.url).searchParams;
  const { counts, ...cases } = progressWindow(db, study.id, search);
  // After a refused download (the export route sends the admin back here): the reason, as it stands now.
  const refused = search.get("refused")
    ? goldExportRefusal(db, study.id, `tick “allow partial (final cases only)” to export the final cases only`)
    : null;
  return {
    study,
    cases,
    counts,
    annotators: listStudyAnnotators(db, study.id),
    time: await getTimeOnTaskOffThread(db, study.id),
    refused,
    asReleased: search.get("asReleased") === "1",
  };
}

const LABELS: Record<CaseProgressState, string> = {
  unassigned: "unassigned",
  in_annotation: "in annotation",
  disputed: "disputed",
  agreed: "final (agreed)",
  adjudicated: "final (adjudicated)",
  reference: "final (imported labels)",
};

const col = columnHelper<ProgressRow>();

export default function Progress() {
  const { study, cases, counts, annotators, time, refused, asReleased } = useLoaderData<typeof loader>();
  const annotatorMedian = new Map(time.per_annotator.map((a) => [a.annotator, a.median_ms]));
  const final = FINAL_STATES.reduce((n, s) => n + counts[s], 0);
  const all = CASE_STATES.reduce((n, s) => n + counts[s], 0);
  const columns = useMemo(
    () => [
      col.accessor("position", { id: "position", header: "#" }),
      col.accessor("externalId", {
        header: "Case",
        cell: (i) => <Link to={`/admin/cases/${i.row.original.caseId}`}>{i.getValue()}</Link>,
      }),
      col.accessor("state", { header: "State", cell: (i) => LABELS[i.getValue()] }),
      // Soft hyphens: on a phone the long headings break instead of widening the table past the screen.
      col.accessor("assigned", { header: "Annota\u00adtors" }),
      col.accessor("submitted", { header: "Sub\u00admitted" }),
      col.accessor("medianActiveMs", {
        header: "Median active time",
        cell: (i) => formatDuration(i.getValue()),
      }),
    ],
    [],
  );
  const base = `/admin/studies/${study.id}/export`;
  return (
    // fit-narrow: on a phone the tables wrap their headings and drop the bars, so the page fits 390 px (app/styles.css).
    <section className="fit-narrow">
      <p>
        <Link to="/admin">Studies</Link> › <Link to={`/admin/studies/${study.id}`}>{study.name}</Link> ›
      </p>
      <h1>Progress and export</h1>
      <div className="grid2">
        <table data-testid="state-counts">
          <tbody>
            {CASE_STATES.map((s) => (
              <tr key={s} data-state={s}>
                <th>{LABELS[s]}</th>
                <td className="num">{counts[s]}</td>
              </tr>
            ))}
            <tr>
              <th>final, all</th>
              <td className="num">
                {final} of {all}
              </td>
            </tr>
          </tbody>
        </table>
        <form method="get" action={base} className="card">
          <h3 style={{ marginTop: 0 }}>Export gold labels</h3>
          <p className="muted">
            Safe-Psych formats (<Link to="/help/guides/admin#the-gold-export">the gold export</Link>): data_gt.json,
            samples.json, data.csv and manifest.json. Not-final cases make the export refuse unless partial export is
            chosen.
          </p>
          {refused ? (
            <p className="notice warn" role="alert" data-testid="export-refused">
              Export refused: {refused}
            </p>
          ) : null}
          <label className="inline">
            <input type="checkbox" name="asReleased" value="1" defaultChecked={asReleased} /> as released (without
            presenting_symptoms_label)
          </label>
          <label className="inline">
            <input type="checkbox" name="allowPartial" value="1" /> allow partial (final cases only)
          </label>
          <div className="row" style={{ marginTop: "0.5rem" }}>
            {["data_gt.json", "samples.json", "data.csv", "manifest.json"].map((f) => (
              <button key={f} type="submit" name="file" value={f} className="secondary">
                {f}
              </button>
            ))}
          </div>
        </form>
      </div>
      <h2>Annotators</h2>
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th>Annotator</th>
              <th className="num">Assigned</th>
              <th className="num">Submitted</th>
              <th className="num">Median active time</th>
              <th className="wide-only">Progress</th>
            </tr>
          </thead>
          <tbody>
            {annotators
              .filter((a) => a.assigned > 0)
              .map((a) => (
                <tr key={a.id}>
                  <td>{a.username}</td>
                  <td className="num">{a.assigned}</td>
                  <td className="num">{a.submitted}</td>
                  <td className="num" data-testid={`median-time-${a.username}`}>
                    {formatDuration(annotatorMedian.get(a.username) ?? null)}
                  </td>
                  <td className="wide-only" style={{ width: "40%" }}>
                    <div
                      className="progress"
                      role="progressbar"
                      aria-label={`Submitted by ${a.username}`}
                      aria-valuemin={0}
                      aria-valuemax={a.assigned}
                      aria-valuenow={a.submitted}
                    >
                      <div style={{ width: `${(100 * a.submitted) / Math.max(a.assigned, 1)}%` }} />
                    </div>
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      </div>
      <p className="muted" data-testid="time-on-task">
        Time on task (active time per submitted annotation, idle gaps over a minute excluded):{" "}
        {time.n
          ? `median ${formatDuration(time.median_ms)} over ${time.n} annotations, ${formatDuration(time.total_ms)} in all.`
          : "nothing recorded yet."}
      </p>
      <AdjudicationTime time={time.adjudication} />
      <h2>Cases</h2>
      <WindowTable
        window={cases}
        columns={columns}
        sortable={["position"]}
        filterLabel="Case id starts with"
        noun="cases"
        testId="progress-cases"
        rowProps={(r) => ({ "data-case": r.externalId, "data-state": r.state })}
        filters={
          <select name="state" aria-label="Filter by state" defaultValue={cases.query.filters.state}>
            <option value="">All states</option>
            {CASE_STATES.map((s) => (
              <option key={s} value={s}>
                {LABELS[s]} ({counts[s]})
              </option>
            ))}
          </select>
        }
      />
    </section>
  );
}

/** The adjudicators' time on their decided cases (docs/statistics.md, "Time on task"). */
function AdjudicationTime({ time }: { time: TimeOnTask["adjudication"] }) {
  if (!time) return null;
  return (
    <>
      <p className="muted" data-testid="adjudication-time">
        Time on task of adjudication (active time per decided case: drafts, independent judgement and decision):{" "}
        {time.n
          ? `median ${formatDuration(time.median_ms)} over ${time.n} decisions, ${formatDuration(time.total_ms)} in all.`
          : "nothing recorded yet."}
      </p>
      {time.n ? (
        <table aria-label="Adjudicators' time on task">
          <thead>
            <tr>
              <th>Adjudicator</th>
              <th className="num">Decisions</th>
              <th className="num">Median active time</th>
              <th className="num">Total</th>
            </tr>
          </thead>
          <tbody>
            {time.per_adjudicator.map((a) => (
              <tr key={a.adjudicator}>
                <td>{a.adjudicator}</td>
                <td className="num">{a.n}</td>
                <td className="num" data-testid={`adjudication-median-${a.adjudicator}`}>
                  {formatDuration(a.median_ms)}
                </td>
                <td className="num">{formatDuration(a.total_ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}
