/** The building blocks of the study report page: a chart with its downloads, values with their reasons, tables. */
import type { IntervalSummary } from "~/stats/index";
import { ci95, fixed3 } from "~/study-report/domain/study-report-format";
import type { RenderedChart } from "~/study-report/study-report.server";

/** A chart with its downloads; `query` (e.g. `?batch=25`) is added to the download links. */
export function Chart({ chart, base, query = "" }: { chart: RenderedChart | undefined; base: string; query?: string }) {
  if (!chart) return null;
  return (
    <figure className="card" data-chart={chart.id} style={{ margin: "0 0 1rem" }}>
      <div
        role="img"
        aria-label={chart.title}
        // Vega's SVG escapes every text it draws; the chart scales down to its column (the SVG has a viewBox).
        dangerouslySetInnerHTML={{ __html: chart.svg.replace("<svg ", '<svg style="max-width:100%;height:auto" ') }}
      />
      <figcaption>
        <small className="muted">{chart.caption}</small>{" "}
        <small>
          Download:{" "}
          <a href={`${base}/${chart.id}.svg${query}`} download>
            SVG
          </a>{" "}
          ·{" "}
          <a href={`${base}/${chart.id}.png${query}`} download>
            PNG
          </a>{" "}
          ·{" "}
          <a href={`${base}/${chart.id}.csv${query}`} download>
            data (CSV)
          </a>
        </small>
      </figcaption>
    </figure>
  );
}

/** A value, or "n/a" with the reason as a tooltip (reasons are keyed by the value's JSON path). */
export function Value({ text, path, reasons }: { text: string; path: string; reasons: Record<string, string> }) {
  const reason = reasons[path];
  return reason ? (
    <span title={reason} data-reason={path}>
      {text} <small className="muted">({reason})</small>
    </span>
  ) : (
    <>{text}</>
  );
}

export function Interval({ e, path, reasons }: { e: IntervalSummary; path: string; reasons: Record<string, string> }) {
  return (
    <>
      <td className="num">
        <Value text={fixed3(e.value)} path={path} reasons={reasons} />
      </td>
      <td className="num">{e.se === null ? "" : fixed3(e.se)}</td>
      <td className="num">{ci95(e)}</td>
    </>
  );
}

/** Two columns that keep their own heights (a table beside its chart). */
export function Pair({ children }: { children: React.ReactNode }) {
  return (
    <div className="grid2" style={{ alignItems: "start" }}>
      {children}
    </div>
  );
}

export function CountTable({ head, rows }: { head: [string, string]; rows: [string, number][] }) {
  return (
    <table>
      <thead>
        <tr>
          <th>{head[0]}</th>
          <th className="num">{head[1]}</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={2} className="muted">
              None yet.
            </td>
          </tr>
        ) : (
          rows.map(([k, n]) => (
            <tr key={k}>
              <td>{k}</td>
              <td className="num">{n}</td>
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}
