/**
 * The paper's tables of an evaluation as the evaluation page shows and downloads them (docs/evaluation.md, "Runs in
 * the app"): abstention (under / over), stage-1 clarification, timing of the first diagnosis and diagnostic accuracy
 * at the three ICD-10 levels, one row per model × strategy, each cell a metric over seeds (mean, s.d., 95% Student-t
 * interval) exactly as `metrics` computed it. Only arrangement happens here: the numbers are the MetricsOutput's.
 * Pure.
 */
import type { TopLevelSpec } from "vega-lite";
import type { Metric, MetricsOutput, MetricsResult } from "./metrics";
import { formatMetric, metricsFigures } from "./metrics-report";

export const TABLE_IDS = ["abstention", "clarification", "timing", "accuracy"] as const;
export type TableId = (typeof TABLE_IDS)[number];

export interface MetricsTable {
  id: TableId;
  title: string;
  columns: { key: string; label: string }[];
  rows: {
    model: string;
    strategy: string;
    seeds: number;
    cells: (Metric | null)[];
    /** Each cell as the metrics report writes it (metrics-report.ts:formatMetric). */
    texts: string[];
  }[];
}

type PickMetric = (r: MetricsResult) => Metric | null;

const TABLES: Record<
  TableId,
  { title: string; columns: [string, string, PickMetric][]; rows?: (r: MetricsResult) => boolean }
> = {
  abstention: {
    title: "Abstention",
    columns: [
      ["under_abstention", "Under-abstention", (r) => r.metrics.under_abstention],
      ["over_abstention", "Over-abstention", (r) => r.metrics.over_abstention],
    ],
  },
  clarification: {
    title: "Clarification-seeking at stage 1",
    columns: [["stage1_clarification_rate", "Stage-1 clarification", (r) => r.metrics.stage1_clarification_rate]],
    rows: (r) => r.strategy.startsWith("sequential"),
  },
  timing: {
    title: "Timing of the first diagnosis",
    columns: [
      ["premature", "Premature", (r) => r.metrics.timing.premature],
      ["on_time", "On time", (r) => r.metrics.timing.on_time],
      ["late", "Late", (r) => r.metrics.timing.late],
      ["never", "Never", (r) => r.metrics.timing.never],
    ],
    rows: (r) => r.strategy.startsWith("sequential"),
  },
  accuracy: {
    title: "Diagnostic accuracy",
    columns: [
      ["diagnosis", "Diagnosis level", (r) => r.metrics.accuracy.diagnosis],
      ["category", "Category", (r) => r.metrics.accuracy.category],
      ["group", "Group", (r) => r.metrics.accuracy.group],
    ],
  },
};

export function metricsTables(output: Pick<MetricsOutput, "results" | "mode">): MetricsTable[] {
  return TABLE_IDS.map((id) => {
    const t = TABLES[id];
    return {
      id,
      title: t.title,
      columns: t.columns.map(([key, label]) => ({ key, label })),
      rows: output.results
        .filter((r) => t.rows?.(r) ?? true)
        .map((r) => ({
          model: r.model,
          strategy: r.strategy,
          seeds: r.n_seeds,
          cells: t.columns.map(([, , pick]) => pick(r)),
          texts: t.columns.map(([, , pick]) => formatMetric(pick(r), output.mode)),
        })),
    };
  });
}

/**
 * The table as CSV rows (the caller writes them with the one formula-safe writer): model, strategy, seeds, then per
 * metric its mean, s.d., interval bounds and n, as fractions in [0, 1] with full precision; empty when undefined.
 */
export function tableCsvRows(table: MetricsTable): string[][] {
  const num = (x: number | null | undefined) => (x === null || x === undefined ? "" : String(x));
  return [
    [
      "model",
      "strategy",
      "seeds",
      ...table.columns.flatMap((c) => [
        `${c.key}_mean`,
        `${c.key}_sd`,
        `${c.key}_ci95_low`,
        `${c.key}_ci95_high`,
        `${c.key}_n`,
      ]),
    ],
    ...table.rows.map((r) => [
      r.model,
      r.strategy,
      String(r.seeds),
      ...r.cells.flatMap((m) => [num(m?.mean), num(m?.sd), num(m?.ci95?.[0]), num(m?.ci95?.[1]), num(m?.n)]),
    ]),
  ];
}

/** The chart of each table: the metrics report's own figures, and a bar chart of the stage-1 rate. */
export function tableChart(output: MetricsOutput, id: TableId): TopLevelSpec | null {
  const figures = metricsFigures(output);
  const byId = (f: string) => figures.find((x) => x.id === f)?.spec ?? null;
  if (id === "abstention") return byId("abstention-tradeoff");
  if (id === "timing") return byId("timing");
  if (id === "accuracy") return byId("accuracy");
  const rows = output.results
    .filter((r) => r.metrics.stage1_clarification_rate)
    .map((r) => {
      const m = r.metrics.stage1_clarification_rate as Metric;
      return {
        run: `${r.model} · ${r.strategy}`,
        rate: Math.round(1000 * m.mean) / 10,
        low: m.ci95 ? Math.round(1000 * m.ci95[0]) / 10 : null,
        high: m.ci95 ? Math.round(1000 * m.ci95[1]) / 10 : null,
      };
    });
  if (rows.length === 0) return null;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "Stage-1 clarification rate (%)",
    width: 420,
    data: { values: rows },
    layer: [
      {
        mark: { type: "bar", color: "#4c78a8" },
        encoding: {
          y: { field: "run", type: "nominal", title: null, sort: null },
          x: { field: "rate", type: "quantitative", title: "Stage-1 clarification (%)", scale: { domain: [0, 100] } },
        },
      },
      {
        mark: { type: "rule", color: "#333" },
        encoding: {
          y: { field: "run", type: "nominal", sort: null },
          x: { field: "low", type: "quantitative" },
          x2: { field: "high" },
        },
      },
    ],
  } as TopLevelSpec;
}
