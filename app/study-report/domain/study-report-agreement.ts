/** The study report's agreement between the two primary annotations of each case, before adjudication. */
import type { CaseLabel } from "../../labels/labels";
import { parseIcd10 } from "../../icd10/icd10";
import {
  buildRatingTable,
  cohenKappa,
  cohenWeightedKappa,
  type Estimate,
  gwetAc1,
  gwetAc2,
  type IntervalEstimate,
  type IntervalSummary,
  type OrdinalWeights,
  percentAgreement,
  type RatingRow,
  type RatingTable,
} from "../../stats/index";
import type {
  CaseCounts,
  DiagnosisAgreement,
  EarliestSectionAgreement,
  LevelAgreement,
  PerDiagnosisAgreement,
  PerDiagnosisRow,
  StudyCaseRecord,
  StudyReportOptions,
  SufficiencyAgreement,
  WeightedAgreement,
} from "./study-report-types";
import { maxOf } from "../../stats/extremes";

export const SUFFICIENCY_CATEGORIES: ["sufficient", "insufficient"] = ["sufficient", "insufficient"];
export const NO_PAIRS = "no case has both primary annotations yet";
export const NO_SUFFICIENT_PAIRS = "no case was called sufficient by both annotators";
export const UNKNOWN_AGE = "Unknown";

export const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export const share = (part: number, whole: number): number | null => (whole > 0 ? part / whole : null);

/** Collects null values' reasons under their JSON paths. */
export class Reasons {
  readonly byPath: Record<string, string> = {};

  number(path: string, estimate: Estimate): number | null {
    if (estimate.value === null) this.byPath[path] = estimate.reason ?? "undefined";
    return estimate.value;
  }

  interval(path: string, estimate: IntervalEstimate): IntervalSummary {
    if (estimate.value === null) this.byPath[path] = estimate.reason ?? "undefined";
    else if (estimate.standardError === null) this.byPath[`${path}.se`] = estimate.standardErrorReason ?? "undefined";
    return { value: estimate.value, se: estimate.standardError, ci95: estimate.confidenceInterval };
  }

  /** The 95% interval of an estimate whose value is kept as a plain number (its reason is under the value's path). */
  ci95(estimate: IntervalEstimate): [number, number] | null {
    return estimate.value === null ? null : estimate.confidenceInterval;
  }

  missing(path: string, reason: string): null {
    this.byPath[path] = reason;
    return null;
  }

  missingInterval(path: string, reason: string): IntervalSummary {
    this.byPath[path] = reason;
    return { value: null, se: null, ci95: null };
  }
}

/**
 * The two annotators as raters "A" and "B" over one item per case. Rows go A then B, so the table's raters are
 * ["A", "B"] and Cohen's kappa and the confusion matrix read A as rows.
 */
export function pairTable(pairs: readonly (readonly [string, string])[], categories?: readonly string[]): RatingTable {
  const rows: RatingRow[] = [];
  pairs.forEach(([a, b], i) => {
    rows.push({ item: String(i), rater: "A", label: a }, { item: String(i), rater: "B", label: b });
  });
  return buildRatingTable(rows, categories ? { categories } : {});
}

export function countCases(records: readonly StudyCaseRecord[]): CaseCounts {
  const counts: CaseCounts = {
    n_cases: records.length,
    annotations_in: { none: 0, one: 0, both: 0 },
    outcomes: { agreed: 0, disputed: 0, adjudicated: 0 },
    disputes_by_reason: { sufficiency: 0, diagnosis: 0 },
    with_gold: 0,
  };
  for (const r of records) {
    if (r.annotationsIn >= 2) counts.annotations_in.both++;
    else if (r.annotationsIn === 1) counts.annotations_in.one++;
    else counts.annotations_in.none++;
    if (r.outcome) {
      counts.outcomes[r.outcome.status]++;
      if (r.outcome.status !== "agreed" && r.outcome.disputeReason)
        counts.disputes_by_reason[r.outcome.disputeReason]++;
    }
    if (r.gold) counts.with_gold++;
  }
  return counts;
}

export function sufficiencyAgreement(
  pairs: readonly (readonly [CaseLabel, CaseLabel])[],
  reasons: Reasons,
): SufficiencyAgreement {
  const path = "sufficiency";
  const matrix = [
    [0, 0],
    [0, 0],
  ];
  for (const [a, b] of pairs) {
    matrix[SUFFICIENCY_CATEGORIES.indexOf(a.sufficiency)][SUFFICIENCY_CATEGORIES.indexOf(b.sufficiency)]++;
  }
  const base = { n: pairs.length, categories: SUFFICIENCY_CATEGORIES, matrix, n_agreed: matrix[0][0] + matrix[1][1] };
  if (pairs.length === 0) {
    return {
      ...base,
      percent_agreement: reasons.missing(`${path}.percent_agreement`, NO_PAIRS),
      percent_agreement_ci95: null,
      cohen_kappa: reasons.missing(`${path}.cohen_kappa`, NO_PAIRS),
      cohen_kappa_ci95: null,
      gwet_ac1: reasons.missingInterval(`${path}.gwet_ac1`, NO_PAIRS),
    };
  }
  // Both categories always count, so AC1 stays defined when every note is sufficient (irrCAC `categ.labels`).
  const table = pairTable(
    pairs.map(([a, b]) => [a.sufficiency, b.sufficiency]),
    SUFFICIENCY_CATEGORIES,
  );
  const percent = percentAgreement(table);
  const kappa = cohenKappa(table);
  return {
    ...base,
    percent_agreement: reasons.number(`${path}.percent_agreement`, percent),
    percent_agreement_ci95: reasons.ci95(percent),
    cohen_kappa: reasons.number(`${path}.cohen_kappa`, kappa),
    cohen_kappa_ci95: reasons.ci95(kappa),
    gwet_ac1: reasons.interval(`${path}.gwet_ac1`, gwetAc1(table)),
  };
}

export type SufficientPair = readonly [
  { icd10: string; earliestSection: number },
  { icd10: string; earliestSection: number },
  number,
];

export function earliestSectionAgreement(pairs: readonly SufficientPair[], reasons: Reasons): EarliestSectionAgreement {
  const path = "earliest_section";
  const maxSection = Math.max(1, maxOf(pairs.flatMap(([a, b, t]) => [a.earliestSection, b.earliestSection, t])));
  const sections = Array.from({ length: maxSection }, (_, i) => i + 1);
  const matrix = sections.map(() => sections.map(() => 0));
  const differenceCounts = sections.map(() => 0);
  let exact = 0;
  let totalDifference = 0;
  for (const [a, b] of pairs) {
    matrix[a.earliestSection - 1][b.earliestSection - 1]++;
    const d = Math.abs(a.earliestSection - b.earliestSection);
    differenceCounts[d]++;
    totalDifference += d;
    if (d === 0) exact++;
  }
  const n = pairs.length;
  const weighted = {} as Record<OrdinalWeights, WeightedAgreement>;
  // The scale is 1..T_max whatever sections were chosen: the weights depend on its span (Gwet 2014 §3.2).
  const table =
    n > 0
      ? pairTable(
          pairs.map(([a, b]) => [String(a.earliestSection), String(b.earliestSection)]),
          sections.map(String),
        )
      : null;
  for (const w of ["linear", "quadratic"] as const) {
    const at = `${path}.weighted.${w}`;
    weighted[w] = table
      ? weightedAgreement(at, table, w, reasons)
      : {
          cohen_kappa_weighted: reasons.missing(`${at}.cohen_kappa_weighted`, NO_SUFFICIENT_PAIRS),
          cohen_kappa_weighted_ci95: null,
          gwet_ac2: reasons.missingInterval(`${at}.gwet_ac2`, NO_SUFFICIENT_PAIRS),
        };
  }
  return {
    n,
    sections,
    matrix,
    n_exact: exact,
    exact_agreement: n > 0 ? exact / n : reasons.missing(`${path}.exact_agreement`, NO_SUFFICIENT_PAIRS),
    // Exact agreement is the two raters' percent agreement on the section scale: its interval is that one's.
    exact_agreement_ci95: table ? reasons.ci95(percentAgreement(table)) : null,
    differences: differenceCounts.map((count, difference) => ({ difference, n: count, share: share(count, n) })),
    mean_absolute_difference:
      n > 0 ? totalDifference / n : reasons.missing(`${path}.mean_absolute_difference`, NO_SUFFICIENT_PAIRS),
    weighted,
  };
}

function weightedAgreement(at: string, table: RatingTable, w: OrdinalWeights, reasons: Reasons): WeightedAgreement {
  const kappa = cohenWeightedKappa(table, w);
  return {
    cohen_kappa_weighted: reasons.number(`${at}.cohen_kappa_weighted`, kappa),
    cohen_kappa_weighted_ci95: reasons.ci95(kappa),
    gwet_ac2: reasons.interval(`${at}.gwet_ac2`, gwetAc2(table, w)),
  };
}

export function levelAgreement(
  path: string,
  labels: readonly (readonly [string | null, string | null])[],
  reasons: Reasons,
): LevelAgreement {
  const pairs = labels.filter((p): p is [string, string] => p[0] !== null && p[1] !== null);
  const n = pairs.length;
  const n_agreed = pairs.filter(([a, b]) => a === b).length;
  if (n === 0) {
    const reason = labels.length === 0 ? NO_SUFFICIENT_PAIRS : "no pair of codes has this level";
    return {
      n,
      n_agreed,
      n_categories: 0,
      percent_agreement: reasons.missing(`${path}.percent_agreement`, reason),
      percent_agreement_ci95: null,
      cohen_kappa: reasons.missing(`${path}.cohen_kappa`, reason),
      cohen_kappa_ci95: null,
      gwet_ac1: reasons.missingInterval(`${path}.gwet_ac1`, reason),
    };
  }
  const table = pairTable(pairs);
  const percent = percentAgreement(table);
  const kappa = cohenKappa(table);
  return {
    n,
    n_agreed,
    n_categories: table.categories.length,
    percent_agreement: reasons.number(`${path}.percent_agreement`, percent),
    percent_agreement_ci95: reasons.ci95(percent),
    cohen_kappa: reasons.number(`${path}.cohen_kappa`, kappa),
    cohen_kappa_ci95: reasons.ci95(kappa),
    gwet_ac1: reasons.interval(`${path}.gwet_ac1`, gwetAc1(table)),
  };
}

export function diagnosisAgreement(
  pairs: readonly SufficientPair[],
  reasons: Reasons,
  notes: string[],
): DiagnosisAgreement {
  const parsed = pairs.map(([a, b]) => [parseIcd10(a.icd10), parseIcd10(b.icd10)] as const);
  const unreadable = parsed.filter(([a, b]) => !a.ok || !b.ok).length;
  if (unreadable > 0)
    notes.push(
      `${unreadable} both-sufficient case(s) have a code that is not ICD-10 chapter V; left out of diagnosis agreement`,
    );
  const level = (f: (p: ReturnType<typeof parseIcd10>) => string | null) =>
    parsed.map(([a, b]) => [f(a), f(b)] as const);
  return {
    n: pairs.length,
    // Equal diagnosis-level forms: the rule that decides disputes (gold.ts sameDiagnosis, docs/safe-psych.md#disagreement-and-adjudication, docs/icd10.md).
    diagnosis_level: levelAgreement(
      "diagnosis.diagnosis_level",
      level((p) => (p.ok ? p.diagnosisLevel : null)),
      reasons,
    ),
    category: levelAgreement(
      "diagnosis.category",
      level((p) => (p.ok ? p.category : null)),
      reasons,
    ),
    group: levelAgreement(
      "diagnosis.group",
      level((p) => (p.ok ? p.block : null)),
      reasons,
    ),
  };
}

export function goldCategory(gold: CaseLabel | null): string | null {
  if (gold?.sufficiency !== "sufficient") return null;
  const p = parseIcd10(gold.icd10);
  return p.ok ? p.category : null;
}

export function perDiagnosis(
  records: readonly StudyCaseRecord[],
  options: StudyReportOptions,
  reasons: Reasons,
): PerDiagnosisAgreement {
  const topN = options.topCategories ?? 15;
  const title = options.categoryTitle ?? (() => null);
  const rows = new Map<string, PerDiagnosisRow>();
  const row = (category: string): PerDiagnosisRow => {
    let r = rows.get(category);
    if (!r) {
      r = {
        category,
        title: title(category),
        n: 0,
        n_sufficiency_agreed: 0,
        sufficiency_agreement: null,
        n_diagnosis_agreed: 0,
        diagnosis_agreement: null,
        n_category_agreed: 0,
        category_agreement: null,
      };
      rows.set(category, r);
    }
    return r;
  };

  const annotated = records.filter((r) => r.annotations !== null && goldCategory(r.gold) !== null);
  const flagged = records.filter((r) => r.referenceAgreement?.diagnosis != null && goldCategory(r.gold) !== null);
  let source: PerDiagnosisAgreement["source"] = null;
  if (annotated.length > 0) {
    source = "primary_annotations";
    for (const r of annotated) {
      const [a, b] = r.annotations!;
      const target = row(goldCategory(r.gold)!);
      target.n++;
      if (a.sufficiency === b.sufficiency) target.n_sufficiency_agreed++;
      if (a.sufficiency === "sufficient" && b.sufficiency === "sufficient") {
        const [pa, pb] = [parseIcd10(a.icd10), parseIcd10(b.icd10)];
        if (pa.ok && pb.ok && pa.diagnosisLevel === pb.diagnosisLevel) target.n_diagnosis_agreed++;
        if (pa.ok && pb.ok && pa.category === pb.category) target.n_category_agreed!++;
      }
    }
  } else if (flagged.length > 0) {
    source = "reference_labels";
    for (const r of flagged) {
      const target = row(goldCategory(r.gold)!);
      target.n++;
      target.n_category_agreed = null;
      if (r.referenceAgreement!.sufficiency) target.n_sufficiency_agreed++;
      if (r.referenceAgreement!.diagnosis) target.n_diagnosis_agreed++;
    }
  } else {
    reasons.missing(
      "per_diagnosis.rows",
      "no case has both a gold diagnosis and two primary annotations (or imported agreement flags)",
    );
  }
  const all = [...rows.values()].sort((x, y) => y.n - x.n || compareText(x.category, y.category));
  for (const r of all) {
    r.sufficiency_agreement = share(r.n_sufficiency_agreed, r.n);
    r.diagnosis_agreement = share(r.n_diagnosis_agreed, r.n);
    r.category_agreement = r.n_category_agreed === null ? null : share(r.n_category_agreed, r.n);
  }
  return { source, top_n: topN, n_categories: all.length, rows: all.slice(0, topN) };
}
