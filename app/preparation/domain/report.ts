/**
 * The preparation report's figures (docs/preparation.md, "The report"): a distribution's median and quartiles, its
 * histogram, the CSV rows and the chart's Vega-Lite specification. Pure; the data are gathered by report.server.ts.
 */
import type { TopLevelSpec } from "vega-lite";
import type { PrepCategory } from "../../../db/vocabulary";

export interface Distribution {
  metric: "BLEU" | "chrF" | "COMET";
  /** Notes with the score. */
  n: number;
  median: number | null;
  q1: number | null;
  q3: number | null;
  /** The project's figure: corpus-level BLEU or chrF over every scored section; COMET's mean over the notes. */
  project: number | null;
  bins: { from: number; to: number; count: number }[];
}

/** The p-quantile by linear interpolation between order statistics (Hyndman and Fan's type 7, numpy's default). */
export function quantile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/**
 * Bins of `width` from `from` to `to`: each holds the values v with from ≤ v < to, the last one also its upper end
 * (a BLEU of 100 in the 90–100 bin).
 */
export function histogram(values: readonly number[], from: number, to: number, width: number) {
  const count = Math.max(1, Math.round((to - from) / width));
  const bins = Array.from({ length: count }, (_, i) => ({
    from: Number((from + i * width).toFixed(6)),
    to: Number((from + (i + 1) * width).toFixed(6)),
    count: 0,
  }));
  for (const v of values) {
    const i = Math.min(count - 1, Math.max(0, Math.floor((v - from) / width + 1e-9)));
    bins[i]!.count++;
  }
  return bins;
}

/** The distribution of one metric over the notes: BLEU and chrF in bins of 10 from 0 to 100, COMET of 0.02. */
export function distribution(
  metric: Distribution["metric"],
  values: readonly number[],
  project: number | null,
): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  let bins: Distribution["bins"] = [];
  if (metric !== "COMET") bins = histogram(sorted, 0, 100, 10);
  else if (sorted.length) {
    const from = Math.floor(sorted[0]! * 50) / 50;
    const to = Math.max(from + 0.02, Math.ceil(sorted[sorted.length - 1]! * 50) / 50);
    bins = histogram(sorted, from, to, 0.02);
  }
  return {
    metric,
    n: sorted.length,
    median: quantile(sorted, 0.5),
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
    project,
    bins,
  };
}

export interface ReportData {
  project: { id: number; name: string; sourceLanguage: string };
  cases: { total: number; reviewed: number; excluded: number; pending: number; differ: number };
  /** Over the final reviews of the cases kept: each category's proposals accepted, edited, rejected, and marks added. */
  proposals: { category: PrepCategory; accepted: number; edited: number; rejected: number; missed: number }[];
  exclusions: { note: string; reason: string }[];
  scores: Distribution[];
  quality: {
    scored: number;
    needsCorrection: number;
    /** Notes needing correction of which a section has a corrected text. */
    corrected: number;
    notesWithMismatches: number;
    mismatches: number;
    /** Mismatches in a section that has a corrected text. */
    mismatchesCorrected: number;
  };
  thresholds: { minBleu: number | null; minChrf: number | null; minComet: number | null; tests: string[] };
  notes: {
    note: string;
    bleu: number | null;
    chrf: number | null;
    comet: number | null;
    needsCorrection: boolean;
    reason: string;
    corrected: boolean;
  }[];
}

const num = (x: number | null, digits = 4) => (x === null ? "" : String(Number(x.toFixed(digits))));

/** The report as CSV rows (long form: part, item, measure, value), for the one formula-safe writer. */
export function reportCsvRows(r: ReportData): string[][] {
  const rows: string[][] = [["part", "item", "measure", "value"]];
  for (const [k, v] of Object.entries(r.cases)) rows.push(["cases", "", k, String(v)]);
  for (const p of r.proposals)
    for (const m of ["accepted", "edited", "rejected", "missed"] as const)
      rows.push(["proposals", p.category, m, String(p[m])]);
  for (const e of r.exclusions) rows.push(["exclusion", e.note, "reason", e.reason]);
  for (const d of r.scores) {
    rows.push(["scores", d.metric, "n", String(d.n)]);
    rows.push(["scores", d.metric, "median", num(d.median)]);
    rows.push(["scores", d.metric, "q1", num(d.q1)]);
    rows.push(["scores", d.metric, "q3", num(d.q3)]);
    rows.push(["scores", d.metric, "project", num(d.project)]);
    for (const b of d.bins) rows.push(["histogram", d.metric, `${b.from}-${b.to}`, String(b.count)]);
  }
  for (const [k, v] of Object.entries(r.quality)) rows.push(["quality", "", k, String(v)]);
  for (const n of r.notes) {
    rows.push(["note", n.note, "bleu", num(n.bleu)]);
    rows.push(["note", n.note, "chrf", num(n.chrf)]);
    rows.push(["note", n.note, "comet", num(n.comet)]);
    rows.push(["note", n.note, "needs_correction", n.needsCorrection ? "yes" : "no"]);
    rows.push(["note", n.note, "reason", n.reason]);
    rows.push(["note", n.note, "corrected", n.corrected ? "yes" : "no"]);
  }
  return rows;
}

/** The chart: one histogram per metric with scores, stacked, the median marked. */
export function reportChartSpec(r: ReportData): TopLevelSpec {
  const shown = r.scores.filter((d) => d.n > 0);
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: `${r.project.name}: back-translation scores per note`,
    vconcat: shown.map((d) => ({
      width: 320,
      height: 120,
      title: `${d.metric} (n = ${d.n}, median ${num(d.median, 3)})`,
      layer: [
        {
          data: { values: d.bins },
          mark: { type: "bar", color: "#4c78a8" },
          encoding: {
            x: { field: "from", type: "quantitative", bin: { binned: true }, title: d.metric },
            x2: { field: "to" },
            y: { field: "count", type: "quantitative", title: "notes" },
          },
        },
        {
          data: { values: [{ median: d.median }] },
          mark: { type: "rule", color: "#e45756", strokeWidth: 2 },
          encoding: { x: { field: "median", type: "quantitative" } },
        },
      ],
    })),
  } as TopLevelSpec;
}
