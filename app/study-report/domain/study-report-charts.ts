/**
 * The study report's charts as Vega-Lite specifications, each with the exact rows it plots (docs/statistics.md#the-study-agreement-report: each
 * chart downloadable with its counts as CSV). Pure; rendering to SVG/PNG is app/charts/charts.server.ts's job.
 */
import type { TopLevelSpec } from "vega-lite";
import { formatCsv } from "../../formats/csv-text";
import type { IntervalSummary } from "../../stats/index";
import type { StudyReport } from "./study-report";
import { rowColumnLabels } from "./study-report-raters";
import { minOf } from "../../stats/extremes";

export type ChartValue = string | number | null;

export interface ReportChart {
  /** Kebab-case, used in download file names: `<id>.svg`, `<id>.png`, `<id>.csv`. */
  id: string;
  title: string;
  caption: string;
  /** Column order of the CSV. */
  fields: string[];
  /** The rows the chart plots, also the CSV's rows. */
  rows: Record<string, ChartValue>[];
  /** Vega-Lite specification with `rows` inlined as its data. */
  spec: TopLevelSpec;
}

// The paper's palette (Safe-Psych evaluations/dataset_analysis/data_analysis.py).
const ACTION_COLOURS = ["#8EA1AD", "#9CC75B", "#DD615D"];
const AGE_COLOUR = "#AD94BB";
const DIAGNOSIS_COLOUR = "#577292";
export const STAT_COLOURS = ["#577292", "#DD615D", "#9CC75B", "#E0A458", "#8EA1AD"];
/** The paper's figure of gold diagnoses shows the 15 most frequent codes. */
export const TOP_CODES = 15;

const BASE = {
  $schema: "https://vega.github.io/schema/vega-lite/v6.json",
  background: "white",
  padding: 8,
  config: {
    font: "DejaVu Sans, Helvetica, Arial, sans-serif",
    view: { stroke: null },
    axis: { labelFontSize: 11, titleFontSize: 12 },
  },
} as const;

const COUNT_AXIS = { tickMinStep: 1, format: "d" };

export const round = (v: number | null, digits = 6): number | null => (v === null ? null : Number(v.toFixed(digits)));

export function chart(
  id: string,
  title: string,
  caption: string,
  fields: string[],
  rows: Record<string, ChartValue>[],
  spec: Record<string, unknown>,
): ReportChart {
  return {
    id,
    title,
    caption,
    fields,
    rows,
    spec: { ...BASE, title, data: { values: rows }, ...spec } as TopLevelSpec,
  };
}

function barChart(
  x: { field: string; title: string | null; sort?: string[] | null },
  colour: string,
  opts: { labelAngle?: number } = {},
) {
  return {
    width: { step: 34 },
    height: 220,
    layer: [
      { mark: { type: "bar", color: colour } },
      { mark: { type: "text", dy: -6, fontSize: 10 }, encoding: { text: { field: "n", type: "quantitative" } } },
    ],
    encoding: {
      x: {
        field: x.field,
        type: "nominal",
        title: x.title,
        sort: x.sort ?? null,
        axis: { labelAngle: opts.labelAngle ?? -45 },
      },
      y: { field: "n", type: "quantitative", title: "Cases", axis: COUNT_AXIS },
    },
  };
}

function horizontalBarChart(field: string, order: string[], colour: string) {
  return {
    width: 320,
    height: { step: 24 },
    layer: [
      { mark: { type: "bar", color: colour } },
      {
        mark: { type: "text", align: "left", dx: 4, fontSize: 10 },
        encoding: { text: { field: "n", type: "quantitative" } },
      },
    ],
    encoding: {
      y: { field, type: "nominal", title: null, sort: order },
      x: { field: "n", type: "quantitative", title: "Cases", axis: COUNT_AXIS },
    },
  };
}

function heatmap(
  rowField: string,
  columnField: string,
  order: string[],
  step: number,
  [rowTitle, columnTitle]: [string, string] = ["Annotator A", "Annotator B"],
) {
  return {
    width: { step },
    height: { step: 40 },
    layer: [
      {
        mark: "rect",
        encoding: { color: { field: "n", type: "quantitative", scale: { scheme: "blues" }, legend: null } },
      },
      {
        mark: { type: "text", fontSize: 12 },
        encoding: {
          text: { field: "n", type: "quantitative" },
          color: { condition: { test: "datum.n > 0 && datum.n >= datum.max_n / 2", value: "white" }, value: "black" },
        },
      },
    ],
    transform: [{ joinaggregate: [{ op: "max", field: "n", as: "max_n" }] }],
    encoding: {
      y: { field: rowField, type: "ordinal", title: rowTitle, sort: order },
      x: {
        field: columnField,
        type: "ordinal",
        title: columnTitle,
        sort: order,
        axis: { orient: "top", labelAngle: 0 },
      },
    },
  };
}

export const LEGEND = { orient: "bottom", labelLimit: 320, title: null } as const;

/**
 * The 95% interval of the rows that have one, as a rule over the bar or dot, drawn within the value axis: each bound
 * is clamped to `domain` (an interval that reaches 1 ends at 1, one below the axis's floor ends there) and the mark
 * is clipped, so no line runs past the axis. The rows (and their CSV) keep the interval as computed.
 */
export function intervalRule(domain: readonly [number, number], colour: string | null = "black") {
  const [lo, hi] = domain;
  return {
    transform: [
      { filter: "datum.ci_low !== null && datum.ci_high !== null" },
      { calculate: `clamp(datum.ci_low, ${lo}, ${hi})`, as: "ci_low_drawn" },
      { calculate: `clamp(datum.ci_high, ${lo}, ${hi})`, as: "ci_high_drawn" },
    ],
    mark: { type: "rule", strokeWidth: 1.5, clip: true, ...(colour ? { color: colour } : {}) },
    encoding: {
      y: { field: "ci_low_drawn", type: "quantitative" },
      y2: { field: "ci_high_drawn" },
      ...(colour ? { color: { value: colour } } : {}),
    },
  };
}

/** Kappa-type coefficients can be negative: the axis starts below 0 only then. */
export function valueScale(rows: Record<string, ChartValue>[]) {
  const low = Math.min(
    0,
    minOf(rows.flatMap((r) => [r.value, r.ci_low]).filter((v): v is number => typeof v === "number")),
  );
  return { domain: [Math.floor(low * 10) / 10, 1] as [number, number] };
}

/** The statistics of `statistics` that have a value in at least one row: the series a chart draws. */
export function drawnStatistics(statistics: readonly string[], rows: readonly Record<string, ChartValue>[]): string[] {
  const drawn = new Set(rows.filter((r) => r.value !== null && r.value !== undefined).map((r) => r.statistic));
  return statistics.filter((s) => drawn.has(s));
}

/**
 * One colour per statistic, the legend listing only the statistics the chart draws: a withheld κ (n/a in every row)
 * has no entry, and the others keep their colours (each statistic's colour is fixed by its place in `statistics`).
 */
export function statisticColour(statistics: readonly string[], rows: readonly Record<string, ChartValue>[]) {
  const drawn = drawnStatistics(statistics, rows);
  const shown = drawn.length ? drawn : [...statistics];
  return {
    field: "statistic",
    type: "nominal",
    sort: shown,
    scale: { domain: shown, range: shown.map((s) => STAT_COLOURS[statistics.indexOf(s) % STAT_COLOURS.length]) },
    // Nothing drawn at all: no legend (an empty chart says so by its empty axes).
    legend: drawn.length ? LEGEND : null,
  } as const;
}

/** Bars of coefficients grouped by `groupField`, one colour per statistic, with the 95% interval where there is one. */
export function groupedCoefficientChart(
  groupField: string,
  groups: string[],
  statistics: string[],
  rows: Record<string, ChartValue>[],
) {
  const scale = valueScale(rows);
  return {
    width: 130 * groups.length,
    height: 220,
    encoding: {
      x: { field: groupField, type: "nominal", title: null, sort: groups, axis: { labelAngle: 0 } },
      xOffset: { field: "statistic", type: "nominal", sort: statistics },
      color: statisticColour(statistics, rows),
    },
    layer: [
      {
        mark: { type: "bar", clip: true },
        encoding: { y: { field: "value", type: "quantitative", title: "Value", scale } },
      },
      intervalRule(scale.domain),
    ],
  };
}

/** One bar per row (x = `label`), coloured by statistic, with the 95% interval where there is one. */
function coefficientChart(labels: string[], statistics: string[], rows: Record<string, ChartValue>[]) {
  const scale = valueScale(rows);
  return {
    width: { step: 70 },
    height: 220,
    encoding: {
      x: { field: "label", type: "nominal", title: null, sort: labels, axis: { labelAngle: -30, labelLimit: 200 } },
      color: statisticColour(statistics, rows),
    },
    layer: [
      {
        mark: { type: "bar", clip: true },
        encoding: { y: { field: "value", type: "quantitative", title: "Value", scale } },
      },
      intervalRule(scale.domain),
    ],
  };
}

export function intervalColumns(e: IntervalSummary) {
  return {
    value: round(e.value),
    se: round(e.se),
    ci_low: round(e.ci95?.[0] ?? null),
    ci_high: round(e.ci95?.[1] ?? null),
  };
}

const plain = (value: number | null) => ({ value: round(value), se: null, ci_low: null, ci_high: null });

/** Every chart of the dashboard, in page order. */
export function studyReportCharts(report: StudyReport): ReportChart[] {
  const charts: ReportChart[] = [];
  const c = report.case_counts;

  const states: [string, number][] = [
    ["No annotation", c.annotations_in.none],
    ["One annotation", c.annotations_in.one],
    ["Agreed", c.outcomes.agreed],
    ["Disputed", c.outcomes.disputed],
    ["Adjudicated", c.outcomes.adjudicated],
  ];
  charts.push(
    chart(
      "case-states",
      "Cases by state",
      "Cases by annotation and adjudication state; agreed and adjudicated cases have a gold label.",
      ["state", "n"],
      states.map(([state, n]) => ({ state, n })),
      horizontalBarChart(
        "state",
        states.map(([state]) => state),
        DIAGNOSIS_COLOUR,
      ),
    ),
  );

  const s = report.sufficiency;
  // Rows and columns by the report's stated rule (study-report-raters.ts), e.g. the two annotators' names.
  const labels = rowColumnLabels(report.raters);
  charts.push(
    chart(
      "sufficiency-matrix",
      `Sufficiency: ${labels.join(" × ")}`,
      `The 2×2 matrix of the ${s.n} cases with both primary annotations.`,
      ["annotator_a", "annotator_b", "n"],
      s.categories.flatMap((a, i) =>
        s.categories.map((b, j) => ({ annotator_a: a, annotator_b: b, n: s.matrix[i][j] })),
      ),
      heatmap("annotator_a", "annotator_b", [...s.categories], 90, labels),
    ),
  );

  const d = report.diagnosis;
  const measures: [string, number, number, StudyReport["diagnosis"]["category"] | null][] = [
    ["Sufficiency", s.n, s.n_agreed, null],
    ["Diagnosis level", d.diagnosis_level.n, d.diagnosis_level.n_agreed, d.diagnosis_level],
    ["Category", d.category.n, d.category.n_agreed, d.category],
    ["Group", d.group.n, d.group.n_agreed, d.group],
  ];
  const agreementStats = ["Percent agreement", "Cohen's kappa", "Gwet's AC1"];
  const agreementRows = measures.flatMap(([measure, n, nAgreed, level]) => {
    const source = level ?? s;
    return [
      { measure, statistic: agreementStats[0], n, n_agreed: nAgreed, ...plain(source.percent_agreement) },
      { measure, statistic: agreementStats[1], n, n_agreed: nAgreed, ...plain(source.cohen_kappa) },
      { measure, statistic: agreementStats[2], n, n_agreed: nAgreed, ...intervalColumns(source.gwet_ac1) },
    ];
  });
  charts.push(
    chart(
      "agreement-coefficients",
      "Agreement: sufficiency and diagnosis at three levels",
      "Percent agreement, Cohen's kappa and Gwet's AC1 (bar: value; line: 95% CI). Diagnosis levels among cases both annotators called sufficient.",
      ["measure", "statistic", "n", "n_agreed", "value", "se", "ci_low", "ci_high"],
      agreementRows,
      groupedCoefficientChart(
        "measure",
        measures.map(([m]) => m),
        agreementStats,
        agreementRows,
      ),
    ),
  );

  const e = report.earliest_section;
  const sectionNames = e.sections.map(String);
  charts.push(
    chart(
      "earliest-section-matrix",
      `Earliest sufficient section: ${labels.join(" × ")}`,
      `Cases both annotators called sufficient (${e.n}).`,
      ["annotator_a", "annotator_b", "n"],
      e.sections.flatMap((a, i) =>
        e.sections.map((b, j) => ({ annotator_a: String(a), annotator_b: String(b), n: e.matrix[i][j] })),
      ),
      heatmap("annotator_a", "annotator_b", sectionNames, 40, labels),
    ),
  );
  charts.push(
    chart(
      "earliest-section-differences",
      "Earliest sufficient section: |A − B|",
      "Distribution of the absolute difference between the two annotators' earliest sufficient sections.",
      ["difference", "n", "share"],
      e.differences.map((x) => ({ difference: String(x.difference), n: x.n, share: round(x.share) })),
      barChart(
        { field: "difference", title: "|A − B| (sections)", sort: e.differences.map((x) => String(x.difference)) },
        DIAGNOSIS_COLOUR,
        {
          labelAngle: 0,
        },
      ),
    ),
  );
  const earliestStats = ["Exact agreement", "Cohen's weighted kappa", "Gwet's AC2"];
  const earliestRows = [
    { label: "Exact agreement", statistic: earliestStats[0], weights: "", n: e.n, ...plain(e.exact_agreement) },
    ...(["linear", "quadratic"] as const).flatMap((w) => [
      {
        label: `Weighted κ, ${w}`,
        statistic: earliestStats[1],
        weights: w,
        n: e.n,
        ...plain(e.weighted[w].cohen_kappa_weighted),
      },
      {
        label: `AC2, ${w}`,
        statistic: earliestStats[2],
        weights: w,
        n: e.n,
        ...intervalColumns(e.weighted[w].gwet_ac2),
      },
    ]),
  ];
  charts.push(
    chart(
      "earliest-section-agreement",
      "Earliest sufficient section: agreement",
      "Exact agreement and the weighted coefficients with linear and quadratic weights (line: 95% CI).",
      ["label", "statistic", "weights", "n", "value", "se", "ci_low", "ci_high"],
      earliestRows,
      coefficientChart(
        earliestRows.map((r) => r.label),
        earliestStats,
        earliestRows,
      ),
    ),
  );

  const p = report.per_diagnosis;
  const perRows = p.rows.map((r) => ({
    category: r.category,
    title: r.title,
    n: r.n,
    n_diagnosis_agreed: r.n_diagnosis_agreed,
    diagnosis_agreement: round(r.diagnosis_agreement),
    n_category_agreed: r.n_category_agreed,
    category_agreement: round(r.category_agreement),
  }));
  charts.push(
    chart(
      "per-diagnosis",
      "Diagnosis agreement by gold category",
      `Share of cases on which the two annotators gave the same diagnosis, for the ${p.rows.length} most frequent gold categories (label: n).`,
      [
        "category",
        "title",
        "n",
        "n_diagnosis_agreed",
        "diagnosis_agreement",
        "n_category_agreed",
        "category_agreement",
      ],
      perRows,
      {
        width: 360,
        height: { step: 20 },
        encoding: {
          y: { field: "category", type: "nominal", title: "Gold category", sort: perRows.map((r) => r.category) },
          x: {
            field: "diagnosis_agreement",
            type: "quantitative",
            title: "Diagnosis agreement",
            scale: { domain: [0, 1] },
            axis: { format: "%" },
          },
        },
        layer: [
          {
            mark: { type: "bar", color: DIAGNOSIS_COLOUR },
            encoding: { tooltip: [{ field: "title" }, { field: "n" }] },
          },
          {
            mark: { type: "text", align: "left", dx: 4, fontSize: 10 },
            encoding: { text: { field: "n", type: "quantitative" } },
          },
        ],
      },
    ),
  );

  const actions = report.label_distributions.action_labels;
  const actionRows = actions.rows.flatMap((r) =>
    (
      [
        ["Clarify", r.clarify],
        ["Diagnose", r.diagnose],
        ["Abstain", r.abstain],
      ] as const
    ).map(([action, n]) => ({ column: r.column, action, n, share: round(r.total > 0 ? n / r.total : null) })),
  );
  charts.push(
    chart(
      "action-labels",
      "Expert action labels by section",
      "Share of each expert action per section; each case's last section is in the Final column (docs/statistics.md).",
      ["column", "action", "n", "share"],
      actionRows,
      {
        width: { step: 48 },
        height: 240,
        mark: "bar",
        encoding: {
          x: { field: "column", type: "nominal", title: null, sort: actions.columns, axis: { labelAngle: 0 } },
          y: { field: "n", type: "quantitative", stack: "normalize", title: "Share of labels", axis: { format: "%" } },
          color: {
            field: "action",
            type: "nominal",
            title: null,
            sort: ["Clarify", "Diagnose", "Abstain"],
            scale: { domain: ["Clarify", "Diagnose", "Abstain"], range: ACTION_COLOURS },
            legend: { orient: "top" },
          },
          order: { field: "action_order", type: "quantitative" },
        },
        transform: [{ calculate: "indexof(['Clarify', 'Diagnose', 'Abstain'], datum.action)", as: "action_order" }],
      },
    ),
  );

  const codes = report.label_distributions.icd10_codes.slice(0, TOP_CODES);
  charts.push(
    chart(
      "icd10-codes",
      "Gold ICD-10 codes",
      `The ${codes.length} most frequent gold codes (of ${report.label_distributions.icd10_codes.length}).`,
      ["code", "n"],
      codes.map((r) => ({ code: r.code, n: r.n })),
      barChart({ field: "code", title: "", sort: codes.map((r) => r.code) }, DIAGNOSIS_COLOUR),
    ),
  );
  const groups = report.label_distributions.icd10_groups;
  charts.push(
    chart(
      "icd10-groups",
      "Gold diagnoses by WHO block",
      "Gold diagnoses by ICD-10 chapter V block (docs/icd10.md group).",
      ["group", "n"],
      groups.map((r) => ({ group: r.group, n: r.n })),
      barChart({ field: "group", title: "", sort: groups.map((r) => r.group) }, DIAGNOSIS_COLOUR),
    ),
  );
  const ages = report.label_distributions.age_groups;
  charts.push(
    chart(
      "age-groups",
      "Cases by age group",
      "All cases of the study by age group.",
      ["age_group", "n"],
      ages.map((r) => ({ age_group: r.age_group, n: r.n })),
      barChart({ field: "age_group", title: "", sort: ages.map((r) => r.age_group) }, AGE_COLOUR),
    ),
  );
  return charts;
}

/** The CSV of a chart's rows (CRLF, minimal quoting); a null is an empty cell. */
export function chartCsv(chart: ReportChart): string {
  // For spreadsheets: formula-like cells are neutralised, numbers kept (docs/security.md, "Spreadsheet exports").
  return formatCsv([
    chart.fields,
    ...chart.rows.map((r) => chart.fields.map((f) => (r[f] === null || r[f] === undefined ? "" : String(r[f])))),
  ]);
}
