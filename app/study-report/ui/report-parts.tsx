/** The building blocks of the study report page: a chart with its downloads, values with their reasons, tables. */
import { createContext, useContext, type ReactNode } from "react";
import type { IntervalSummary } from "~/stats/index";
import { ci95, fixed3 } from "~/study-report/domain/study-report-format";

/** A chart as the page names it: its SVG is an image at `src`, asked for once its fold is open. */
export interface ChartOnPage {
  id: string;
  title: string;
  caption: string;
  src: string;
}

/**
 * A chart with its downloads; `query` (e.g. `?batch=25`) is added to the download links. The chart is an image
 * loaded lazily (a closed fold's charts are not asked for), so its SVG is sent once and only when it is seen
 * (docs/architecture.md, "Pages are windows"); it scales down to its column.
 */
export function Chart({ chart, base, query = "" }: { chart: ChartOnPage | undefined; base: string; query?: string }) {
  if (!chart) return null;
  return (
    <figure className="card" data-chart={chart.id} style={{ margin: "0 0 1rem" }}>
      <img src={chart.src} alt={chart.title} loading="lazy" style={{ maxWidth: "100%", height: "auto" }} />
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

/**
 * The page's reasons for "n/a", numbered once each: a value refers to its reason's number, and `ReasonNotes` says the
 * reason once, however many values share it (docs/statistics.md, "The study agreement report").
 */
const ReasonNumbers = createContext<ReadonlyMap<string, number> | null>(null);

/** Numbers the distinct reasons in the order given (the report's order of paths), from 1. */
export function numberReasons(reasons: Record<string, string>): Map<string, number> {
  const numbers = new Map<string, number>();
  for (const reason of Object.values(reasons)) if (!numbers.has(reason)) numbers.set(reason, numbers.size + 1);
  return numbers;
}

export function ReasonNumbersProvider({ reasons, children }: { reasons: Record<string, string>; children: ReactNode }) {
  return <ReasonNumbers.Provider value={numberReasons(reasons)}>{children}</ReasonNumbers.Provider>;
}

/** Every reason of the page once, numbered as the values that refer to it. */
export function ReasonNotes({ reasons }: { reasons: Record<string, string> }) {
  const numbers = [...numberReasons(reasons)];
  if (numbers.length === 0) return null;
  return (
    <ol className="muted reason-notes" data-testid="na-notes" aria-label="Why a figure is n/a">
      {numbers.map(([reason, n]) => (
        <li key={n} id={`na-note-${n}`} value={n}>
          <small>n/a: {reason}</small>
        </li>
      ))}
    </ol>
  );
}

/** A value, or "n/a" with its reason: the number of the page's note that says it, or the reason itself outside one. */
export function Value({ text, path, reasons }: { text: string; path: string; reasons: Record<string, string> }) {
  const numbers = useContext(ReasonNumbers);
  const reason = reasons[path];
  if (!reason) return <>{text}</>;
  const n = numbers?.get(reason);
  return n !== undefined ? (
    <span title={reason} data-reason={path}>
      {text}
      <sup>
        <a href={`#na-note-${n}`} aria-label={`note ${n}`}>
          {n}
        </a>
      </sup>
    </span>
  ) : (
    <span title={reason} data-reason={path}>
      {text} <small className="muted">({reason})</small>
    </span>
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

/** A detail section of a report page, folded under its title: the page leads with its headline figures. */
export function Fold({
  title,
  id,
  open = false,
  children,
}: {
  title: string;
  id: string;
  open?: boolean;
  children: ReactNode;
}) {
  return (
    <details className="fold" id={id} data-fold={id} open={open}>
      <summary>
        <h2>{title}</h2>
      </summary>
      {children}
    </details>
  );
}
