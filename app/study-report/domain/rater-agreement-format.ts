/**
 * Agreement per pair and over time as text and Markdown (`stats --pairwise` / `--over-time`), in the study report's
 * blocks (study-report-format.ts).
 */
import type { IntervalSummary } from "../../stats/index";
import type { MeasureAgreement, RaterAgreementReport } from "./rater-agreement";
import { blocksMarkdown, blocksText, ci95, fixed3, percent, type Block } from "./study-report-format";

export interface RaterAgreementParts {
  pairwise: boolean;
  overTime: boolean;
}

const NA = "n/a";
const KEYS = ["percent_agreement", "cohen_kappa", "gwet_ac1"] as const;
const MEASURES = [
  ["sufficiency", "Sufficiency"],
  ["diagnosis", "Diagnosis (both sufficient, diagnosis level)"],
] as const;

/** A value with its interval, `0.741 [0.512, 0.970]`; n/a with the reason's key when null. */
function withInterval(e: IntervalSummary, asPercent = false): string {
  if (e.value === null) return NA;
  const v = asPercent ? percent(e.value) : fixed3(e.value);
  if (!e.ci95) return v;
  return asPercent ? `${v} [${percent(e.ci95[0])}, ${percent(e.ci95[1])}]` : `${v} ${ci95(e)}`;
}

const cells = (m: MeasureAgreement) => [
  String(m.n),
  m.n ? `${withInterval(m.percent_agreement, true)} (${m.n_agreed}/${m.n})` : NA,
  withInterval(m.cohen_kappa),
  withInterval(m.gwet_ac1),
];
const HEAD = ["n", "% agreement [95% CI]", "Cohen's κ [95% CI]", "Gwet's AC1 [95% CI]"];

/** The distinct reasons of the null values under `prefix`, for a note under the tables. */
function reasonNotes(report: RaterAgreementReport, prefix: string): string[] {
  const seen = new Set<string>();
  for (const [path, reason] of Object.entries(report.reasons))
    if (path.startsWith(prefix) && KEYS.some((k) => path.endsWith(`.${k}`))) seen.add(reason);
  return [...seen].map((r) => `n/a: ${r}.`);
}

function blocks(study: { name: string }, report: RaterAgreementReport, parts: RaterAgreementParts): Block[] {
  const out: Block[] = [];
  const heading = (text: string, level: 1 | 2 = 2) => out.push({ kind: "heading", text, level });
  const text = (t: string) => out.push({ kind: "text", text: t });
  const table = (header: string[], rows: string[][]) => out.push({ kind: "table", header, rows });
  heading(`Agreement per pair and over time: ${study.name}`, 1);
  text(
    'The two primary annotations of each case, before adjudication (docs/statistics.md, "Agreement per pair and ' +
      'over time"). Sufficiency over every complete pair; diagnosis over the cases both annotators called ' +
      "sufficient, codes compared at diagnosis level. Intervals: 95%, Student t.",
  );
  if (parts.pairwise) {
    heading("Per pair of annotators");
    text(
      `${report.annotators.length} annotator(s), ${report.pairwise.pairs.length} pair(s); each pair's rows are the ` +
        "annotator whose username sorts first.",
    );
    for (const [key, label] of MEASURES) {
      text(`${label}:`);
      table(
        ["Pair", ...HEAD],
        report.pairwise.pairs.map((p) => [`${p.annotators[0]} – ${p.annotators[1]}`, ...cells(p[key])]),
      );
    }
    for (const note of reasonNotes(report, "pairwise.")) text(note);
  }
  if (parts.overTime) {
    const t = report.over_time;
    heading("Over time");
    text(
      `${t.n_cases} case(s) with both annotations, bucketed by the later submission (UTC)` +
        (t.n_untimed ? `; ${t.n_untimed} case(s) without a submission time are left out.` : "."),
    );
    for (const [key, label] of MEASURES) {
      text(`${label}, by ISO week:`);
      table(
        ["Week", "Starts", "Cases", ...HEAD],
        t.by_week.map((w) => [w.week, w.start, String(w.n_cases), ...cells(w[key])]),
      );
    }
    for (const [key, label] of MEASURES) {
      text(`${label}, by batch of ${t.batch_size} cases in completion order:`);
      table(
        ["Batch", "Cases", "Completed", ...HEAD],
        t.by_batch.map((b) => [
          String(b.batch),
          `${b.first}–${b.last}`,
          `${b.from.slice(0, 10)} – ${b.to.slice(0, 10)}`,
          ...cells(b[key]),
        ]),
      );
    }
    for (const note of reasonNotes(report, "over_time.")) text(note);
  }
  return out;
}

export function formatRaterAgreementText(
  study: { name: string },
  report: RaterAgreementReport,
  parts: RaterAgreementParts,
): string {
  return blocksText(blocks(study, report, parts));
}

export function formatRaterAgreementMarkdown(
  study: { name: string },
  report: RaterAgreementReport,
  parts: RaterAgreementParts,
): string {
  return blocksMarkdown(blocks(study, report, parts));
}
