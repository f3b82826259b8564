/**
 * Time on task of a study (docs/statistics.md, "Time on task"): the active time recorded with each submitted
 * annotation (app/work-items/domain/active-time.ts), as medians per annotator and per case, and with each decision of
 * an adjudicator, as medians per adjudicator — the figures a study needs to plan its clinicians' hours. Medians, not
 * means: one annotation left open over lunch must not move the plan.
 */
import { median } from "../../work-items/domain/active-time";
import { pushAll } from "../../stats/extremes";

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
  /** The adjudicators' time on their decisions (added by the study's service; absent from a summary of annotations). */
  adjudication?: AdjudicationTime;
}

/** One adjudicator's decided case with the active time recorded on it (drafts, independent judgement, decision). */
export interface TimedDecision {
  adjudicator: string;
  caseId: number;
  activeMs: number;
}

export interface AdjudicationTime {
  /** Decided cases with recorded active time, one per (case, adjudicator). */
  n: number;
  median_ms: number | null;
  total_ms: number;
  per_adjudicator: { adjudicator: string; n: number; median_ms: number; total_ms: number }[];
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** n, median and total of each person's times, people in code-point order of their names. */
function perPerson(work: readonly { who: string; activeMs: number }[]) {
  const byWho = new Map<string, number[]>();
  for (const w of work) {
    const list = byWho.get(w.who);
    if (list) list.push(w.activeMs);
    else byWho.set(w.who, [w.activeMs]);
  }
  return [...byWho]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([who, ms]) => ({ who, n: ms.length, median_ms: median(ms)!, total_ms: sum(ms) }));
}

/** The medians of the adjudicators' `work` (one entry per decided case and adjudicator with active time). */
export function summariseAdjudicationTime(work: readonly TimedDecision[]): AdjudicationTime {
  return {
    n: work.length,
    median_ms: median(work.map((w) => w.activeMs)),
    total_ms: sum(work.map((w) => w.activeMs)),
    per_adjudicator: perPerson(work.map((w) => ({ who: w.adjudicator, activeMs: w.activeMs }))).map(
      ({ who, ...rest }) => ({ adjudicator: who, ...rest }),
    ),
  };
}

/** The medians of `work` (one entry per submitted annotation with active time); annotators by name, cases by id. */
export function summariseTimeOnTask(work: readonly TimedWork[]): TimeOnTask {
  const byCase = new Map<number, { externalId: string; ms: number[] }>();
  for (const w of work) {
    const c = byCase.get(w.caseId) ?? { externalId: w.externalId, ms: [] };
    c.ms.push(w.activeMs);
    byCase.set(w.caseId, c);
  }
  return {
    n: work.length,
    median_ms: median(work.map((w) => w.activeMs)),
    total_ms: sum(work.map((w) => w.activeMs)),
    per_annotator: perPerson(work.map((w) => ({ who: w.annotator, activeMs: w.activeMs }))).map(({ who, ...rest }) => ({
      annotator: who,
      ...rest,
    })),
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
  if (!t.n)
    return lines.concat("  no active time recorded yet", "").join("\n") + formatAdjudicationTimeText(t.adjudication);
  lines.push(`  ${t.n} annotations, median ${formatDuration(t.median_ms)}, total ${formatDuration(t.total_ms)}`);
  lines.push("  per annotator (median):");
  for (const a of t.per_annotator) lines.push(`    ${a.annotator}: ${formatDuration(a.median_ms)} over ${a.n}`);
  const perCase = t.per_case.map((c) => c.median_ms);
  lines.push(
    `  per case: median of the case medians ${formatDuration(median(perCase))} over ${t.per_case.length} cases`,
  );
  return lines.join("\n") + "\n" + formatAdjudicationTimeText(t.adjudication);
}

function formatAdjudicationTimeText(a: AdjudicationTime | undefined): string {
  if (!a) return "";
  const lines = ["Time on task of adjudication (active time of decided cases)"];
  if (!a.n) return lines.concat("  no active time recorded yet", "").join("\n");
  lines.push(`  ${a.n} decisions, median ${formatDuration(a.median_ms)}, total ${formatDuration(a.total_ms)}`);
  lines.push("  per adjudicator (median):");
  for (const p of a.per_adjudicator) lines.push(`    ${p.adjudicator}: ${formatDuration(p.median_ms)} over ${p.n}`);
  return lines.join("\n") + "\n";
}

/** The summary as Markdown tables, for `stats --md`. */
export function formatTimeOnTaskMarkdown(t: TimeOnTask): string {
  const lines = ["## Time on task", ""];
  if (!t.n) pushAll(lines, ["No active time recorded yet."]);
  else
    pushAll(lines, [
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
    ]);
  const a = t.adjudication;
  if (a?.n)
    pushAll(lines, [
      "",
      `Active time of ${a.n} adjudicated cases: median ${formatDuration(a.median_ms)}, total ${formatDuration(a.total_ms)}.`,
      "",
      "| adjudicator | decisions | median | total |",
      "|---|---:|---:|---:|",
      ...a.per_adjudicator.map(
        (p) => `| ${p.adjudicator} | ${p.n} | ${formatDuration(p.median_ms)} | ${formatDuration(p.total_ms)} |`,
      ),
    ]);
  else if (a) lines.push("", "No active time of adjudication recorded yet.");
  return lines.join("\n") + "\n";
}
