/**
 * Time on task of a study (docs/statistics.md, "Time on task"): the active time recorded with each submitted
 * annotation (app/work-items/domain/active-time.ts), as medians per annotator and per case — the figure a study needs
 * to plan its clinicians' hours. Medians, not means: one annotation left open over lunch must not move the plan.
 */
import { median } from "../../work-items/domain/active-time";

export interface TimedWork {
  annotator: string;
  caseId: number;
  externalId: string;
  activeMs: number;
}

export interface TimeOnTask {
  /** Submitted annotations with recorded active time. */
  n: number;
  median_ms: number | null;
  total_ms: number;
  per_annotator: { annotator: string; n: number; median_ms: number; total_ms: number }[];
  per_case: { case_id: number; external_id: string; n: number; median_ms: number }[];
}

/** The medians of `work` (one entry per submitted annotation with active time); annotators by name, cases by id. */
export function summariseTimeOnTask(work: readonly TimedWork[]): TimeOnTask {
  const byAnnotator = new Map<string, number[]>();
  const byCase = new Map<number, { externalId: string; ms: number[] }>();
  for (const w of work) {
    byAnnotator.set(w.annotator, [...(byAnnotator.get(w.annotator) ?? []), w.activeMs]);
    const c = byCase.get(w.caseId) ?? { externalId: w.externalId, ms: [] };
    c.ms.push(w.activeMs);
    byCase.set(w.caseId, c);
  }
  const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    n: work.length,
    median_ms: median(work.map((w) => w.activeMs)),
    total_ms: sum(work.map((w) => w.activeMs)),
    per_annotator: [...byAnnotator]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([annotator, ms]) => ({ annotator, n: ms.length, median_ms: median(ms)!, total_ms: sum(ms) })),
    per_case: [...byCase]
      .sort(([a], [b]) => a - b)
      .map(([id, c]) => ({ case_id: id, external_id: c.externalId, n: c.ms.length, median_ms: median(c.ms)! })),
  };
}

/** "1 h 02 min", "4 min 05 s", "12 s": a duration as a planner reads it. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return "—";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

/** The summary as text lines, for the `stats` command. */
export function formatTimeOnTaskText(t: TimeOnTask): string {
  const lines = ["Time on task (active time of submitted annotations)"];
  if (!t.n) return lines.concat("  no active time recorded yet", "").join("\n");
  lines.push(`  ${t.n} annotations, median ${formatDuration(t.median_ms)}, total ${formatDuration(t.total_ms)}`);
  lines.push("  per annotator (median):");
  for (const a of t.per_annotator) lines.push(`    ${a.annotator}: ${formatDuration(a.median_ms)} over ${a.n}`);
  const perCase = t.per_case.map((c) => c.median_ms);
  lines.push(
    `  per case: median of the case medians ${formatDuration(median(perCase))} over ${t.per_case.length} cases`,
  );
  return lines.join("\n") + "\n";
}

/** The summary as Markdown tables, for `stats --md`. */
export function formatTimeOnTaskMarkdown(t: TimeOnTask): string {
  const lines = ["## Time on task", ""];
  if (!t.n) return lines.concat("No active time recorded yet.", "").join("\n");
  lines.push(
    `Active time of ${t.n} submitted annotations: median ${formatDuration(t.median_ms)}, total ${formatDuration(t.total_ms)}.`,
    "",
    "| annotator | annotations | median | total |",
    "|---|---:|---:|---:|",
    ...t.per_annotator.map(
      (a) => `| ${a.annotator} | ${a.n} | ${formatDuration(a.median_ms)} | ${formatDuration(a.total_ms)} |`,
    ),
    "",
    "| case | annotations | median |",
    "|---|---:|---:|",
    ...t.per_case.map((c) => `| ${c.external_id} | ${c.n} | ${formatDuration(c.median_ms)} |`),
  );
  return lines.join("\n") + "\n";
}
