/** One multiple-choice report on the admin page: each table as in the papers, the figures, the downloads. */
import type { McReportSummary, McReportView } from "../reports.server";
import type { ListWindow } from "~/platform/list-window";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";

const col = columnHelper<McReportSummary>();
const columns = [
  col.accessor("name", {
    id: "name",
    header: "Report",
    cell: ({ getValue }) => <a href={`?report=${encodeURIComponent(getValue())}`}>{getValue()}</a>,
  }),
  col.accessor("createdAt", { id: "created", header: "Created" }),
  col.accessor((r) => r.runs.join("; "), { id: "runs", header: "Runs" }),
];

/** A window of the report folders, the newest first (app/mc-evaluation/reports.server.ts:mcReportsWindow). */
export function McReportList({ reports, root }: { reports: ListWindow<McReportSummary>; root: string }) {
  if (reports.total === 0 && !reports.query.filters.q) {
    return (
      <p className="card">
        No reports yet. Write one with <code>npm run concord -- mc-report --runs RUNS --out {root}/NAME</code>.
      </p>
    );
  }
  return (
    <WindowTable
      window={reports}
      columns={columns}
      sortable={[]}
      noun="reports"
      testId="mc-reports"
      filterLabel="Report name starts with"
      rowProps={(r) => ({ "data-report": r.name })}
    />
  );
}

export function McReportDetail({ report }: { report: McReportView }) {
  // runs/<file> keeps its folder in the path (routes/admin.mc-evaluation.$report.runs.$file.ts).
  const file = (f: string) =>
    `/admin/mc-evaluation/${encodeURIComponent(report.name)}/${f.split("/").map(encodeURIComponent).join("/")}`;
  return (
    <>
      <h2>{report.name}</h2>
      <p className="muted">
        Created {report.createdAt}. Reading: {report.reading}. Scoring: {report.scoring}.
      </p>
      {report.figures.map((f) => (
        <figure key={f}>
          <img src={file(f)} alt={f.replace(/\.svg$/, "").replace(/-/g, " ")} style={{ maxWidth: "100%" }} />
          <figcaption>
            <a href={file(f)}>SVG</a> · <a href={file(f.replace(/\.svg$/, ".png"))}>PNG</a>
          </figcaption>
        </figure>
      ))}
      {report.tables.map((t) => (
        <section key={t.name}>
          <h3>{t.title}</h3>
          <div style={{ overflowX: "auto" }}>
            <table>
              <thead>
                <tr>
                  {t.header.map((h) => (
                    <th key={h}>{h}</th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {t.rows.map((row, i) => (
                  <tr key={i}>
                    {row.map((cell, j) => (
                      <td key={j}>{cell}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p>
            <a href={file(`${t.name}.csv`)}>{t.name}.csv</a>
          </p>
        </section>
      ))}
      <h3>Downloads</h3>
      <ul>
        {report.downloads.map((f) => (
          <li key={f}>
            <a href={file(f)}>{f}</a>
          </li>
        ))}
      </ul>
    </>
  );
}
