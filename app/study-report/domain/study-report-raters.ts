/**
 * Which annotator is the row and which the column of the study report's tables, and the agreement figures that
 * depend on it (docs/statistics.md, "Study report: which annotator is which").
 *
 * Cohen's κ and the cells off the diagonal of a 2×2 table depend on which rater is which; percent agreement, Gwet's
 * AC1/AC2, Fleiss' κ (Scott's π for two raters) and Krippendorff's α do not. Reading the pairs in the adjudicator's
 * random "Annotator A/B" order would make κ a draw of that order rather than a property of the two psychiatrists, so
 * the report orients every pair by rater identity:
 *
 * - `rater_identity`: the study has exactly two annotators. Rows are the one whose username sorts first, columns the
 *   other, on every case; κ is Cohen's κ between the two psychiatrists, and the off-diagonal cells show who was
 *   stricter.
 * - `pair_order`: more than two annotators share the cases. Each case's pair is still read in username order (a
 *   stable rule), but a pooled Cohen's κ would mix different pairs of raters, so the report gives Cohen's κ per pair
 *   (`raters.pairs`) and, for the pooled figure, the order-free coefficients over the real raters
 *   (`raters.order_free`: Fleiss' κ, Krippendorff's α, Gwet's AC1); the pooled `cohen_kappa` fields are null.
 * - `adjudicator_order`: the records do not say who annotated (input built without usernames); pairs are read as
 *   given, Annotator A then B.
 */
import type { CaseLabel } from "../../labels/labels";
import { parseIcd10 } from "../../icd10/icd10";
import {
  buildRatingTable,
  cohenKappa,
  fleissKappa,
  gwetAc1,
  krippendorffAlpha,
  percentAgreement,
  type RatingRow,
} from "../../stats/index";

export type RaterRule = "rater_identity" | "pair_order" | "adjudicator_order";

/** The fields of a study record this module reads (core/study-report.ts StudyCaseRecord). */
export interface RaterRecord {
  annotations: readonly [CaseLabel, CaseLabel] | null;
  /** The usernames of the two annotations' authors, in the same order as `annotations`. */
  annotators?: readonly [string, string] | null;
}

export interface PairAgreement {
  /** [row annotator, column annotator]. */
  annotators: [string, string];
  n: number;
  sufficiency: {
    matrix: number[][];
    percent_agreement: number | null;
    cohen_kappa: number | null;
    gwet_ac1: number | null;
  };
  /** Both-sufficient cases, at the diagnosis level (the level that decides disputes). */
  diagnosis_level: { n: number; percent_agreement: number | null; cohen_kappa: number | null };
}

export interface OrderFreeAgreement {
  n: number;
  fleiss_kappa: number | null;
  krippendorff_alpha: number | null;
  gwet_ac1: number | null;
}

export interface RaterAgreement {
  rule: RaterRule;
  /** What the rule means for this report, in words. */
  description: string;
  /** Every annotator with at least one complete pair, by username. */
  annotators: string[];
  pairs: PairAgreement[];
  /** Pooled over all cases and raters, whatever the rule (the raters are the real annotators unless unknown). */
  order_free: { sufficiency: OrderFreeAgreement; diagnosis_level: OrderFreeAgreement };
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const SUFFICIENCY = ["sufficient", "insufficient"] as const;

/**
 * The records with each pair put in the rule's order (the first username first), and the rule. Records without a
 * pair are returned unchanged.
 */
export function orientByRater<R extends RaterRecord>(records: readonly R[]): { rule: RaterRule; records: R[] } {
  const complete = records.filter((r) => r.annotations !== null);
  if (complete.length === 0 || complete.some((r) => !r.annotators))
    return { rule: "adjudicator_order", records: [...records] };
  const names = new Set(complete.flatMap((r) => r.annotators!));
  const oriented = records.map((r) => {
    if (!r.annotations || !r.annotators) return r;
    const [a, b] = r.annotators;
    if (compareText(a, b) <= 0) return r;
    return { ...r, annotations: [r.annotations[1], r.annotations[0]], annotators: [b, a] } as R;
  });
  return { rule: names.size === 2 ? "rater_identity" : "pair_order", records: oriented };
}

const DESCRIPTIONS: Record<RaterRule, (names: string[]) => string> = {
  rater_identity: ([a, b]) =>
    `Cohen's kappa between the study's two annotators: rows ${a}, columns ${b} on every case.`,
  pair_order: (names) =>
    `${names.length} annotators share the cases: each case's pair is read in username order, Cohen's kappa is ` +
    "given per pair (below, under 'Agreement per pair of annotators') and the pooled figures are order-free " +
    "(Fleiss' kappa, Krippendorff's alpha, Gwet's AC1).",
  adjudicator_order: () =>
    "The annotators are not known: pairs are read as Annotator A and B as the adjudicator saw them.",
};

const value = (e: { value: number | null }) => e.value;

function orderFree(rows: RatingRow[], categories?: readonly string[]): OrderFreeAgreement {
  const n = new Set(rows.map((r) => r.item)).size;
  if (n === 0) return { n, fleiss_kappa: null, krippendorff_alpha: null, gwet_ac1: null };
  const table = buildRatingTable(rows, categories ? { categories } : {});
  return {
    n,
    fleiss_kappa: value(fleissKappa(table)),
    krippendorff_alpha: value(krippendorffAlpha(table, "nominal")),
    gwet_ac1: value(gwetAc1(table)),
  };
}

function diagnosisLevelOf(label: CaseLabel): string | null {
  if (label.sufficiency !== "sufficient") return null;
  const p = parseIcd10(label.icd10);
  return p.ok ? p.diagnosisLevel : null;
}

function pairAgreement(annotators: [string, string], pairs: (readonly [CaseLabel, CaseLabel])[]): PairAgreement {
  const matrix = [
    [0, 0],
    [0, 0],
  ];
  const rows: RatingRow[] = [];
  const diagnosisRows: RatingRow[] = [];
  pairs.forEach(([a, b], i) => {
    matrix[SUFFICIENCY.indexOf(a.sufficiency)][SUFFICIENCY.indexOf(b.sufficiency)]++;
    rows.push(
      { item: String(i), rater: "row", label: a.sufficiency },
      { item: String(i), rater: "column", label: b.sufficiency },
    );
    const [da, db] = [diagnosisLevelOf(a), diagnosisLevelOf(b)];
    if (da !== null && db !== null)
      diagnosisRows.push({ item: String(i), rater: "row", label: da }, { item: String(i), rater: "column", label: db });
  });
  const table = buildRatingTable(rows, { categories: SUFFICIENCY });
  const nDiagnosis = diagnosisRows.length / 2;
  const diagnosisTable = nDiagnosis > 0 ? buildRatingTable(diagnosisRows) : null;
  return {
    annotators,
    n: pairs.length,
    sufficiency: {
      matrix,
      percent_agreement: value(percentAgreement(table)),
      cohen_kappa: value(cohenKappa(table)),
      gwet_ac1: value(gwetAc1(table)),
    },
    diagnosis_level: {
      n: nDiagnosis,
      percent_agreement: diagnosisTable ? value(percentAgreement(diagnosisTable)) : null,
      cohen_kappa: diagnosisTable ? value(cohenKappa(diagnosisTable)) : null,
    },
  };
}

/** The `raters` section of the study report from records already oriented by {@link orientByRater}. */
export function raterAgreement(rule: RaterRule, records: readonly RaterRecord[]): RaterAgreement {
  const complete = records.filter((r) => r.annotations !== null);
  const nameOf = (r: RaterRecord, k: 0 | 1) =>
    rule === "adjudicator_order" ? (k === 0 ? "A" : "B") : r.annotators![k];
  const byPair = new Map<string, { annotators: [string, string]; pairs: (readonly [CaseLabel, CaseLabel])[] }>();
  const sufficiencyRows: RatingRow[] = [];
  const diagnosisRows: RatingRow[] = [];
  complete.forEach((r, i) => {
    const names: [string, string] = [nameOf(r, 0), nameOf(r, 1)];
    const key = JSON.stringify(names);
    if (!byPair.has(key)) byPair.set(key, { annotators: names, pairs: [] });
    byPair.get(key)!.pairs.push(r.annotations!);
    r.annotations!.forEach((label, k) => {
      sufficiencyRows.push({ item: String(i), rater: names[k], label: label.sufficiency });
    });
    const levels = r.annotations!.map(diagnosisLevelOf);
    if (levels[0] !== null && levels[1] !== null)
      levels.forEach((label, k) => diagnosisRows.push({ item: String(i), rater: names[k], label: label! }));
  });
  const pairs = [...byPair.values()]
    .sort((x, y) => compareText(x.annotators[0], y.annotators[0]) || compareText(x.annotators[1], y.annotators[1]))
    .map((p) => pairAgreement(p.annotators, p.pairs));
  const annotators =
    rule === "adjudicator_order" ? [] : [...new Set(complete.flatMap((r) => r.annotators!))].sort(compareText);
  return {
    rule,
    description: DESCRIPTIONS[rule](annotators),
    annotators,
    pairs,
    order_free: {
      sufficiency: orderFree(sufficiencyRows, SUFFICIENCY),
      diagnosis_level: orderFree(diagnosisRows),
    },
  };
}

/** The JSON paths of the pooled Cohen's κ values that `pair_order` leaves null, with the reason. */
export const POOLED_COHEN_PATHS = [
  "sufficiency.cohen_kappa",
  "earliest_section.weighted.linear.cohen_kappa_weighted",
  "earliest_section.weighted.quadratic.cohen_kappa_weighted",
  "diagnosis.diagnosis_level.cohen_kappa",
  "diagnosis.category.cohen_kappa",
  "diagnosis.group.cohen_kappa",
] as const;

export const POOLED_COHEN_REASON =
  "more than two annotators: a pooled Cohen's kappa would mix different pairs of raters; it is given per pair (the table 'Agreement per pair of annotators'; raters.pairs in the JSON), beside the order-free Fleiss' kappa, Krippendorff's alpha and Gwet's AC1";

/** How the rows and columns of the report's tables are labelled under each rule. */
export function rowColumnLabels(raters: Pick<RaterAgreement, "rule" | "annotators">): [string, string] {
  if (raters.rule === "rater_identity") return [raters.annotators[0]!, raters.annotators[1]!];
  if (raters.rule === "pair_order") return ["First annotator (by username)", "Second annotator"];
  return ["Annotator A", "Annotator B"];
}
