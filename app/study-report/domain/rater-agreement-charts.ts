/**
 * The charts of agreement per pair and over time (docs/statistics.md, "Agreement per pair and over time"), each with
 * the rows it plots (its CSV). Pure, like the study report's charts (study-report-charts.ts), whose helpers they use.
 */
import type { MeasureAgreement, RaterAgreementReport } from "./rater-agreement";
import {
  chart,
  groupedCoefficientChart,
  intervalColumns,
  intervalRule,
  statisticColour,
  valueScale,
  type ChartValue,
  type ReportChart,
} from "./study-report-charts";

const STATISTICS = ["Percent agreement", "Cohen's kappa", "Gwet's AC1"] as const;
const KEYS = ["percent_agreement", "cohen_kappa", "gwet_ac1"] as const;
const MEASURES = [
  ["sufficiency", "Sufficiency", "cases with both primary annotations"],
  ["diagnosis", "Diagnosis", "cases both annotators called sufficient, codes compared at diagnosis level"],
] as const;
const COEFFICIENT_FIELDS = ["statistic", "n", "n_agreed", "value", "se", "ci_low", "ci_high"];

/** The three statistics of one measure as chart rows, each with `extra` (the pair or the bucket) first. */
function statisticRows(extra: Record<string, ChartValue>, m: MeasureAgreement): Record<string, ChartValue>[] {
  return KEYS.map((k, i) => ({
    ...extra,
    statistic: STATISTICS[i],
    n: m.n,
    n_agreed: m.n_agreed,
    ...intervalColumns(m[k]),
  }));
}

/**
 * The value axis: from the lowest value or interval bound, but not below −1 (κ and AC1 are at least −1 for two
 * raters); the t interval of a handful of cases can reach far below, and is cut at the axis.
 */
function valueAxis(rows: Record<string, ChartValue>[]) {
  const low = Math.max(-1, valueScale(rows).domain[0]);
  return { type: "quantitative", title: "Value", scale: { domain: [low, 1] as [number, number] } } as const;
}

/** Bars of the three statistics per pair, with the 95% interval as a rule (as the report's coefficient charts). */
function pairChart(pairs: string[], rows: Record<string, ChartValue>[]) {
  const spec = groupedCoefficientChart("pair", pairs, [...STATISTICS], rows);
  const axis = valueAxis(rows);
  return {
    ...spec,
    layer: [
      { mark: { type: "bar", clip: true }, encoding: { y: { field: "value", ...axis } } },
      intervalRule(axis.scale.domain),
    ],
  };
}

/** Dots for the values and whiskers for the 95% intervals, one group per bucket, one colour per statistic. */
function driftChart(field: string, title: string, buckets: string[], rows: Record<string, ChartValue>[]) {
  const axis = valueAxis(rows);
  return {
    width: Math.max(240, 36 * buckets.length),
    height: 220,
    encoding: {
      x: { field, type: "nominal", title, sort: buckets, axis: { labelAngle: field === "batch" ? 0 : -45 } },
      xOffset: { field: "statistic", type: "nominal", sort: STATISTICS },
      color: statisticColour(STATISTICS, rows),
    },
    layer: [
      intervalRule(axis.scale.domain, null),
      {
        transform: [{ filter: "datum.value !== null" }],
        mark: { type: "point", filled: true, size: 45, opacity: 1, clip: true },
        encoding: {
          y: { field: "value", ...axis },
          tooltip: [{ field }, { field: "statistic" }, { field: "value" }, { field: "n" }],
        },
      },
    ],
  };
}

/** Every chart of the section, in page order: per pair (sufficiency, diagnosis), by week, by batch. */
export function raterAgreementCharts(report: RaterAgreementReport): ReportChart[] {
  const charts: ReportChart[] = [];
  const pairs = report.pairwise.pairs;
  const pairName = (p: (typeof pairs)[number]) => `${p.annotators[0]} – ${p.annotators[1]}`;
  for (const [key, label, about] of MEASURES) {
    const rows = pairs.flatMap((p) =>
      statisticRows({ pair: pairName(p), annotator_row: p.annotators[0], annotator_column: p.annotators[1] }, p[key]),
    );
    charts.push(
      chart(
        `pairwise-${key}`,
        `${label} agreement per pair of annotators`,
        `Percent agreement, Cohen's kappa and Gwet's AC1 per pair (bar: value; line: 95% CI), over the ${about}; a pair with no shared case has no bars; intervals below −1 are cut at the axis.`,
        ["pair", "annotator_row", "annotator_column", ...COEFFICIENT_FIELDS],
        rows,
        pairChart(pairs.map(pairName), rows),
      ),
    );
  }
  const kappaNote =
    report.rule === "pair_order"
      ? " Cohen's kappa is not pooled over different pairs of annotators, so it is absent."
      : "";
  const weeks = report.over_time.by_week;
  const batches = report.over_time.by_batch;
  for (const [key, label, about] of MEASURES) {
    const rows = weeks.flatMap((w) => statisticRows({ week: w.week, start: w.start, n_cases: w.n_cases }, w[key]));
    charts.push(
      chart(
        `${key}-by-week`,
        `${label} agreement by week`,
        `By ISO week (UTC) of the later of the two submissions, over the ${about}; weeks without a completed case are empty (dot: value; line: 95% CI, cut at −1).${kappaNote}`,
        ["week", "start", "n_cases", ...COEFFICIENT_FIELDS],
        rows,
        driftChart(
          "week",
          "ISO week",
          weeks.map((w) => w.week),
          rows,
        ),
      ),
    );
  }
  for (const [key, label, about] of MEASURES) {
    const rows = batches.flatMap((b) =>
      statisticRows(
        { batch: String(b.batch), first: b.first, last: b.last, from: b.from, to: b.to, n_cases: b.n_cases },
        b[key],
      ),
    );
    charts.push(
      chart(
        `${key}-by-batch`,
        `${label} agreement by batch of ${report.over_time.batch_size} cases`,
        `Consecutive batches of ${report.over_time.batch_size} cases in the order their pairs were completed (the last may be smaller), over the ${about} (dot: value; line: 95% CI, cut at −1).${kappaNote}`,
        ["batch", "first", "last", "from", "to", "n_cases", ...COEFFICIENT_FIELDS],
        rows,
        driftChart(
          "batch",
          "Batch",
          batches.map((b) => String(b.batch)),
          rows,
        ),
      ),
    );
  }
  return charts;
}
