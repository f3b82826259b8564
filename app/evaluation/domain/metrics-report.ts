/**
 * The evaluation report: Vega-Lite specifications of the four figures (docs/evaluation.md, paper Figs. 3, 5, 6, 7–8) and the
 * Markdown report naming its mode. Pure: rendering is app/charts/charts.server.ts's job, writing files the CLI's.
 */
import type { TopLevelSpec } from "vega-lite";
import type { LevelMetrics, Metric, MetricsOutput, MetricsResult } from "./metrics";
import { STAGES } from "./metrics";
import { isSequential, type Strategy } from "./runner-protocol";
import { pushAll } from "../../stats/extremes";

export interface MetricsFigure {
  id: string;
  title: string;
  spec: TopLevelSpec;
}

const STRATEGY_LABELS: Record<Strategy, string> = {
  full_info_no_abstention: "Full info – no abstention",
  full_info_abstention_aware: "Full info – abstention",
  sequential_info_neutral_prompting: "Sequential – no abstention",
  sequential_info_abstention_aware: "Sequential – abstention",
};

// The paper's palettes (evaluations/premature_diagnoses/figures_5_6.py, diagnosis_accuracy/figure7.py).
const TIMING_COLOURS = ["#E94C4C", "#369734", "#2781E9", "#ACACAC"];
const LEVEL_COLOURS = ["#613859", "#53BBB1", "#E7E294"];

const BASE = {
  $schema: "https://vega.github.io/schema/vega-lite/v6.json",
  background: "white",
  padding: 8,
  config: {
    font: "DejaVu Sans, Helvetica, Arial, sans-serif",
    view: { stroke: null },
    axis: { labelFontSize: 11, titleFontSize: 12, gridDash: [3, 3], labelLimit: 360 },
    legend: { labelFontSize: 11, titleFontSize: 12, orient: "bottom", columns: 2, labelLimit: 360 },
  },
} as const;

const round = (v: number | null | undefined, digits = 6): number | null =>
  v === null || v === undefined ? null : Number(v.toFixed(digits));

const label = (r: MetricsResult) => `${r.model} · ${STRATEGY_LABELS[r.strategy]}`;

/** A rate's interval bound in percent, clipped to [0, 100]: a Student-t interval over few seeds may pass 0 or 1. */
const boundPercent = (v: number): number | null => round(100 * Math.min(1, Math.max(0, v)));

/** Shapes of the strategies in the abstention chart, in STRATEGY_LABELS order. */
const STRATEGY_SHAPES = ["circle", "square", "triangle-up", "diamond"];
/** Colours of up to ten models (Tableau 10); more models reuse them, their shapes and the legend still tell them apart. */
const MODEL_COLOURS = [
  "#4E79A7",
  "#F28E2B",
  "#E15759",
  "#76B7B2",
  "#59A14F",
  "#EDC948",
  "#B07AA1",
  "#FF9DA7",
  "#9C755F",
  "#79706E",
];

/**
 * Under- vs over-abstention per model × strategy, with 95% CI bars over seeds (paper Fig. 3): a model's colour, a
 * strategy's shape, both legends listing only what is drawn, the intervals clipped to [0, 100] % and drawn in the
 * point's colour, axes titled with what each rate counts (docs/evaluation.md, "Runs in the app").
 */
function abstentionFigure(output: MetricsOutput): MetricsFigure | null {
  const rows = output.results
    .filter((r) => r.metrics.under_abstention && r.metrics.over_abstention)
    .map((r) => {
      const under = r.metrics.under_abstention as Metric;
      const over = r.metrics.over_abstention as Metric;
      // In reference mode the bars are the seed script's, around its own mean, as Fig. 3 draws them.
      const ciUnder = output.mode === "reference" ? r.seed_variability?.under_abstention?.ci95 : under.ci95;
      const ciOver = output.mode === "reference" ? r.seed_variability?.over_abstention?.ci95 : over.ci95;
      return {
        model: r.model,
        strategy: STRATEGY_LABELS[r.strategy],
        under: round(100 * under.mean),
        over: round(100 * over.mean),
        under_low: ciUnder ? boundPercent(ciUnder[0]) : null,
        under_high: ciUnder ? boundPercent(ciUnder[1]) : null,
        over_low: ciOver ? boundPercent(ciOver[0]) : null,
        over_high: ciOver ? boundPercent(ciOver[1]) : null,
      };
    });
  if (rows.length === 0) return null;
  const strategies = Object.values(STRATEGY_LABELS).filter((l) => rows.some((r) => r.strategy === l));
  const models = [...new Set(rows.map((r) => r.model))].sort();
  const x = {
    field: "under",
    type: "quantitative",
    title: "Under-abstention (%): insufficient cases diagnosed",
    scale: { domain: [0, 100], clamp: true },
  } as const;
  const y = {
    field: "over",
    type: "quantitative",
    title: "Over-abstention (%): sufficient cases not diagnosed",
    scale: { domain: [0, 100], clamp: true },
  } as const;
  const colour = {
    field: "model",
    type: "nominal",
    title: "Model",
    scale: { domain: models, range: models.map((_, i) => MODEL_COLOURS[i % MODEL_COLOURS.length]!) },
  } as const;
  const shape = {
    field: "strategy",
    type: "nominal",
    title: "Strategy",
    scale: {
      domain: strategies,
      range: strategies.map((l) => STRATEGY_SHAPES[Object.values(STRATEGY_LABELS).indexOf(l)]!),
    },
  } as const;
  const interval = { mark: { type: "rule", opacity: 0.55, strokeWidth: 1.5 } } as const;
  return {
    id: "abstention-tradeoff",
    title: "Under- and over-abstention (lower left is better)",
    spec: {
      ...BASE,
      title: {
        text: "Under- vs over-abstention",
        subtitle: "Mean over seeds with its 95% interval; lower left is better",
      },
      width: 420,
      height: 360,
      data: { values: rows },
      config: {
        ...BASE.config,
        legend: { ...BASE.config.legend, orient: "right", columns: 1, symbolSize: 90 },
      },
      layer: [
        {
          transform: [{ filter: "datum.under_low != null" }],
          ...interval,
          encoding: {
            x: { field: "under_low", type: "quantitative" },
            x2: { field: "under_high" },
            y,
            color: colour,
          },
        },
        {
          transform: [{ filter: "datum.over_low != null" }],
          ...interval,
          encoding: {
            y: { field: "over_low", type: "quantitative" },
            y2: { field: "over_high" },
            x,
            color: colour,
          },
        },
        {
          mark: { type: "point", filled: true, size: 90, opacity: 0.95, stroke: "white", strokeWidth: 0.8 },
          encoding: { x, y, color: colour, shape },
        },
      ],
    } as unknown as TopLevelSpec,
  };
}

/** Timing of the first diagnosis relative to the earliest sufficient section (paper Fig. 5), stacked. */
function timingFigure(output: MetricsOutput): MetricsFigure | null {
  const categories = [
    ["premature", "Premature"],
    ["on_time", "On-time"],
    ["late", "Late"],
    ["never", "Never"],
  ] as const;
  const rows = output.results
    .filter((r) => isSequential(r.strategy))
    .flatMap((r) =>
      categories.map(([key, name], order) => ({
        run: label(r),
        category: name,
        order,
        share: round(100 * (r.metrics.timing[key]?.mean ?? 0)),
      })),
    );
  if (rows.length === 0) return null;
  return {
    id: "timing",
    title: "Timing of the first diagnosis",
    spec: {
      ...BASE,
      title: "Timing of the first diagnosis",
      width: 420,
      data: { values: rows },
      mark: "bar",
      encoding: {
        y: { field: "run", type: "nominal", title: null, sort: null },
        x: { field: "share", type: "quantitative", title: "Cases (%)", stack: "zero", scale: { domain: [0, 100] } },
        color: {
          field: "category",
          type: "nominal",
          title: "Timing",
          scale: { domain: categories.map(([, n]) => n), range: TIMING_COLOURS },
        },
        order: { field: "order" },
      },
    } as unknown as TopLevelSpec,
  };
}

/** Cumulative share of cases diagnosed by each stage beside the expert sufficiency curve (paper Fig. 6). */
function cumulativeFigure(output: MetricsOutput): MetricsFigure | null {
  const rows = output.results
    .filter((r) => r.cumulative)
    .flatMap((r) =>
      STAGES.map((stage, i) => ({
        curve: label(r),
        stage,
        share: round(100 * (r.cumulative!.model[i]?.mean ?? 0)),
        expert: false,
      })),
    );
  if (rows.length === 0) return null;
  const expert = STAGES.map((stage, i) => ({
    curve: "Expert sufficiency",
    stage,
    share: round(100 * (output.expert_curve[i] ?? 0)),
    expert: true,
  }));
  return {
    id: "cumulative",
    title: "Cumulative diagnoses by stage and the expert sufficiency curve",
    spec: {
      ...BASE,
      title: "Cumulative diagnoses by stage",
      width: 420,
      height: 320,
      data: { values: [...rows, ...expert] },
      mark: { type: "line", point: true },
      encoding: {
        x: { field: "stage", type: "ordinal", title: "Stage (section)", axis: { labelAngle: 0 } },
        y: { field: "share", type: "quantitative", title: "Cumulative cases (%)", scale: { domain: [0, 100] } },
        color: { field: "curve", type: "nominal", title: null },
        strokeDash: {
          field: "expert",
          type: "nominal",
          legend: null,
          scale: {
            domain: [false, true],
            range: [
              [1, 0],
              [6, 4],
            ],
          },
        },
      },
    } as unknown as TopLevelSpec,
  };
}

/** Accuracy at the three ICD-10 levels per model × strategy, with 95% CI bars over seeds (paper Figs. 7–8). */
function accuracyFigure(output: MetricsOutput): MetricsFigure | null {
  const levels = [
    ["diagnosis", "Diagnosis level"],
    ["category", "Category (3-character)"],
    ["group", "Group (WHO block)"],
  ] as const;
  const rows = output.results.flatMap((r) =>
    levels
      .filter(([key]) => r.metrics.accuracy[key])
      .map(([key, name]) => {
        const m = r.metrics.accuracy[key] as Metric;
        return {
          run: label(r),
          level: name,
          accuracy: round(100 * m.mean),
          low: m.ci95 ? round(100 * m.ci95[0]) : null,
          high: m.ci95 ? round(100 * m.ci95[1]) : null,
        };
      }),
  );
  if (rows.length === 0) return null;
  const colour = {
    field: "level",
    type: "nominal",
    title: "ICD-10 level",
    scale: { domain: levels.map(([, n]) => n), range: LEVEL_COLOURS },
  } as const;
  return {
    id: "accuracy",
    title: "Diagnostic accuracy",
    spec: {
      ...BASE,
      title: "Diagnostic accuracy",
      data: { values: rows },
      facet: {
        row: {
          field: "run",
          type: "nominal",
          title: null,
          sort: null,
          header: { labelAngle: 0, labelAlign: "left", labelLimit: 360 },
        },
      },
      spec: {
        width: 360,
        height: 54,
        layer: [
          {
            mark: "bar",
            encoding: {
              y: { field: "level", type: "nominal", title: null, axis: null },
              x: { field: "accuracy", type: "quantitative", title: "Accuracy (%)", scale: { domain: [0, 100] } },
              color: colour,
            },
          },
          {
            transform: [{ filter: "datum.low != null" }],
            mark: { type: "rule", color: "#333" },
            encoding: {
              y: { field: "level", type: "nominal" },
              x: { field: "low", type: "quantitative" },
              x2: { field: "high" },
            },
          },
        ],
      },
    } as unknown as TopLevelSpec,
  };
}

export function metricsFigures(output: MetricsOutput): MetricsFigure[] {
  return [abstentionFigure(output), timingFigure(output), cumulativeFigure(output), accuracyFigure(output)].filter(
    (f): f is MetricsFigure => f !== null,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Markdown

/** "41.2% ± 3.1 [36.0–46.4]" (paper mode) or "41.18%" (reference mode, the scripts' rounding); "—" when undefined. */
export function formatMetric(m: Metric | null | undefined, mode: MetricsOutput["mode"]): string {
  if (!m) return "—";
  const p = (x: number) => (100 * x).toFixed(mode === "reference" ? 2 : 1);
  if (m.sd === null || m.ci95 === null) return `${p(m.mean)}%`;
  return `${p(m.mean)}% ± ${p(m.sd)} [${p(m.ci95[0])}–${p(m.ci95[1])}]`;
}

const cell = (text: string) => text.replace(/\|/g, "\\|");

function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.map(cell).join(" | ")} |`,
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ].join("\n");
}

const MODE_TEXT = {
  paper:
    "**Mode: paper** — the paper's definitions (docs/evaluation.md, paper appendix 9.2), the same for every strategy and seed. " +
    "Trajectories with an empty model output or a judge failure are excluded from every metric and counted under " +
    "quality control. Under-abstention = diagnosed insufficient cases / insufficient cases; over-abstention = " +
    "undiagnosed sufficient cases / sufficient cases. The stage-1 clarification rate (sequential strategies) is over " +
    "cases whose expert stage-1 label is Clarify (not sufficient at section 1). Timing (sequential strategies) is over " +
    "cases with a sufficient gold label and an earliest sufficient section τ: first diagnosis before τ premature, at " +
    "τ on time, after τ late, none never. Accuracy is over diagnosed cases with a gold code, using the code the judge " +
    "extracted at the first diagnosis (none counts as wrong), matched by docs/icd10.md (WHO blocks, F40–F48). Values over " +
    "seeds: mean ± sample s.d. [95% Student-t interval].",
  reference:
    "**Mode: reference** — each Safe-Psych evaluation script's own numbers, quirks included (docs/evaluation.md): " +
    "under/over-abstention from abstention_rate/process.py (Finished and empty trajectories count as abstained; cases " +
    "with an empty output dropped), stage-1 clarification from clarification_seeking/process.py (denominator: cases " +
    "whose presenting_symptoms_label is empty or Clarify), timing from premature_diagnoses/process.py (only " +
    "cases whose annotators agreed on the diagnosis), accuracy from diagnosis_accuracy/process.py (code fallback X, " +
    "no empty-output exclusion, F40–F49), seed variability from multiple_seed_runs/process.py (F40–F48, its own " +
    "abstained definition). Seeds are pooled as the scripts pool them (n = 1); percentages are rounded as the scripts " +
    "round them. Full tables: metrics.json → reference_scripts.",
} as const;

function levelsRow(l: LevelMetrics, mode: MetricsOutput["mode"]): string[] {
  return [formatMetric(l.diagnosis, mode), formatMetric(l.category, mode), formatMetric(l.group, mode)];
}

export interface ReportContext {
  version: string;
  goldPath: string;
  runs: string[];
  /** Figure ids written beside the report, as figures/<id>.svg and .png. */
  figures: MetricsFigure[];
}

export function buildReport(output: MetricsOutput, context: ReportContext): string {
  const mode = output.mode;
  const lines: string[] = [
    "# Concord evaluation metrics",
    "",
    MODE_TEXT[mode],
    "",
    `Concord ${context.version}. Gold labels: ${context.goldPath} (${output.gold.cases} usable cases: ` +
      `${output.gold.sufficient} sufficient, ${output.gold.insufficient} insufficient` +
      `${output.gold.unusable ? `; ${output.gold.unusable} unusable` : ""}). Runs: ${context.runs.join(", ")}.`,
    "",
    "## Results",
    "",
  ];
  if (output.results.length === 0) lines.push("No trajectories were found.", "");
  else {
    lines.push(
      table(
        ["model", "strategy", "seeds", "under-abstention", "over-abstention", "stage-1 clarification"],
        output.results.map((r) => [
          r.model,
          r.strategy,
          String(r.n_seeds),
          formatMetric(r.metrics.under_abstention, mode),
          formatMetric(r.metrics.over_abstention, mode),
          formatMetric(r.metrics.stage1_clarification_rate, mode),
        ]),
      ),
      "",
      "### Timing of the first diagnosis",
      "",
      table(
        ["model", "strategy", "premature", "on time", "late", "never"],
        output.results
          .filter((r) => isSequential(r.strategy))
          .map((r) => [
            r.model,
            r.strategy,
            formatMetric(r.metrics.timing.premature, mode),
            formatMetric(r.metrics.timing.on_time, mode),
            formatMetric(r.metrics.timing.late, mode),
            formatMetric(r.metrics.timing.never, mode),
          ]),
      ),
      "",
      "### Diagnostic accuracy",
      "",
      table(
        ["model", "strategy", "diagnosis level", "category", "group"],
        output.results.map((r) => [r.model, r.strategy, ...levelsRow(r.metrics.accuracy, mode)]),
      ),
      "",
      "### Accuracy by timing (premature vs on time) and by annotator agreement",
      "",
      table(
        ["model", "strategy", "subset", "diagnosis level", "category", "group"],
        output.results.flatMap((r) => [
          ...(r.accuracy_by_timing
            ? (["premature", "on_time", "late"] as const).map((t) => [
                r.model,
                r.strategy,
                t,
                ...levelsRow(r.accuracy_by_timing![t], mode),
              ])
            : []),
          [r.model, r.strategy, "agreement", ...levelsRow(r.accuracy_by_agreement.agreement, mode)],
          [r.model, r.strategy, "disagreement", ...levelsRow(r.accuracy_by_agreement.disagreement, mode)],
        ]),
      ),
      "",
      "### Accuracy per gold category (the ten most frequent per run)",
      "",
      table(
        ["model", "strategy", "category", "cases", "diagnosis level", "category match", "group"],
        output.results.flatMap((r) =>
          r.accuracy_by_category
            .slice(0, 10)
            .map((c) => [r.model, r.strategy, c.category, String(c.cases), ...levelsRow(c.accuracy, mode)]),
        ),
      ),
      "",
      "## Quality control",
      "",
    );
    const keys = [...new Set(output.results.flatMap((r) => Object.keys(r.qc)))];
    lines.push(
      table(
        ["model", "strategy", ...keys],
        output.results.map((r) => [
          r.model,
          r.strategy,
          ...keys.map((k) => (r.qc[k] === undefined ? "—" : String(r.qc[k]))),
        ]),
      ),
      "",
    );
  }
  if (context.figures.length > 0) {
    lines.push("## Figures", "");
    for (const f of context.figures) lines.push(`![${f.title}](figures/${f.id}.svg)`, "");
  }
  if (mode === "reference" && output.reference_scripts) {
    lines.push("## Reference scripts", "");
    for (const [name, value] of Object.entries(output.reference_scripts)) {
      const v = value as { status?: string; error?: string };
      lines.push(`- ${name}: ${v.status === "crashed" ? `would stop with ${v.error}` : "ran"}`);
    }
    lines.push("");
  }
  if (output.warnings.length > 0) {
    pushAll(lines, ["## Warnings", "", ...output.warnings.map((w) => `- ${w}`), ""]);
  }
  return lines.join("\n");
}
