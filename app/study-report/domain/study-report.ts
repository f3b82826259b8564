/**
 * The study report (docs/statistics.md#the-study-agreement-report): agreement between the two primary annotations of each case, before
 * adjudication, and the distributions of the study's gold labels. Pure: the caller loads plain per-case records;
 * the `stats` command and the admin dashboard print the same object.
 *
 * The JSON (`stats --study NAME --json`) is a documented interface; scripts depend on these snake_case keys:
 *
 * - `study` {`id`, `name`}
 * - `case_counts` {`n_cases`, `annotations_in` {`none`, `one`, `both`}, `outcomes` {`agreed`, `disputed`,
 *   `adjudicated`}, `disputes_by_reason` {`sufficiency`, `diagnosis`}, `with_gold`}
 * - `sufficiency` {`n`, `categories`, `matrix` (rows Annotator A, columns B), `n_agreed`, `percent_agreement`,
 *   `cohen_kappa`, `gwet_ac1` {`value`, `se`, `ci95`}}
 * - `earliest_section` (both-sufficient cases) {`n`, `sections`, `matrix`, `n_exact`, `exact_agreement`,
 *   `differences` [{`difference`, `n`, `share`}], `mean_absolute_difference`, `weighted` {`linear`, `quadratic`}
 *   each {`cohen_kappa_weighted`, `gwet_ac2` {`value`, `se`, `ci95`}}}
 * - `diagnosis` (both-sufficient cases) {`n`, `diagnosis_level`, `category`, `group`} each {`n`, `n_agreed`,
 *   `n_categories`, `percent_agreement`, `cohen_kappa`, `gwet_ac1` {`value`, `se`, `ci95`}}
 * - `per_diagnosis` {`source`, `top_n`, `n_categories`, `rows` [{`category`, `title`, `n`, `n_sufficiency_agreed`,
 *   `sufficiency_agreement`, `n_diagnosis_agreed`, `diagnosis_agreement`, `n_category_agreed`,
 *   `category_agreement`}]}
 * - `label_distributions` {`source` {`agreed`, `adjudicated`, `reference`}, `n_gold`, `sufficiency`
 *   {`sufficient`, `insufficient`}, `action_labels` {`columns`, `rows` [{`column`, `clarify`, `diagnose`,
 *   `abstain`, `total`}]}, `icd10_codes` [{`code`, `n`}], `icd10_categories` [{`category`, `title`, `n`}],
 *   `icd10_groups` [{`group`, `n`}], `missing_info` [{`key`, `n`}], `age_groups` [{`age_group`, `n`}],
 *   `section_counts` [{`sections`, `n`}]}
 * - `reference_agreement` (imported agreement flags; null without them) {`n`, `sufficiency`, `diagnosis`} each
 *   {`n`, `n_agreed`, `percent_agreement`}
 * - `reasons` {JSON path → why that value is null}, `notes` [strings about the data]
 *
 * Proportions and coefficients are plain numbers (agreement as a fraction in [0, 1]); an undefined one is null and
 * `reasons` has its path (e.g. `"sufficiency.cohen_kappa"`).
 */
import {
  expertActionLabels,
  MISSING_INFO_KEYS,
  type CaseLabel,
  type DisputeReason,
  type ExpertAction,
  type MissingInfoKey,
} from "../../gold/domain/gold";
import { parseIcd10 } from "../../icd10/icd10";
import {
  buildRatingTable,
  cohenKappa,
  cohenWeightedKappa,
  gwetAc1,
  gwetAc2,
  percentAgreement,
  type Estimate,
  type IntervalEstimate,
  type IntervalSummary,
  type OrdinalWeights,
  type RatingRow,
  type RatingTable,
} from "../../stats/index";

// ---------------------------------------------------------------------------------------------------------------
// Input

export type GoldSource = "agreed" | "adjudicated" | "reference";

export interface StudyCaseRecord {
  caseId: number;
  externalId: string;
  /** T, compacted (docs/safe-psych.md#cases-and-sections). */
  numSections: number;
  ageGroup: string;
  /** Primary annotations submitted or locked (0, 1 or 2). */
  annotationsIn: number;
  /** The two primary annotations as Annotator A and B once both are in (locked); otherwise null. */
  annotations: readonly [CaseLabel, CaseLabel] | null;
  outcome: { status: "agreed" | "disputed" | "adjudicated"; disputeReason: DisputeReason | null } | null;
  gold: CaseLabel | null;
  goldSource: GoldSource | null;
  /** An imported dataset's `diagnosis_sufficiency_agreement` and `diagnosis_agreement` flags, when it has them. */
  referenceAgreement: { sufficiency: boolean | null; diagnosis: boolean | null } | null;
}

export interface StudyReportOptions {
  study: { id: number; name: string };
  /** How many of the most frequent gold categories get a per-diagnosis row; default 15 (the paper's figure). */
  topCategories?: number;
  /** The WHO title of a category (`F32` → "Depressive episode"), when the caller has the code table. */
  categoryTitle?: (category: string) => string | null;
  /** Notes from loading the data (e.g. unreadable reference labels), reported first. */
  notes?: readonly string[];
}

/** An imported dataset's label cells (docs/formats.md#released-csv-datacsv), as stored in reference_labels. */
export interface ReferenceLabelCells {
  diagnosisSufficiency: string | null;
  diagnosisSufficiencyAgreement: string | null;
  diagnosis: string | null;
  diagnosisAgreement: string | null;
  earliestSufficientSection: string | null;
}

const flagOf = (cell: string | null): boolean | null => (cell === "1" ? true : cell === "0" ? false : null);

/**
 * Reads reference labels as a gold label and agreement flags (docs/formats.md#released-csv-datacsv: `1`/`0`, a code and τ in 1..T when
 * sufficient). An imported insufficient label has no missing information. `gold` is null when the cells do not
 * make a label (the import validates them, so only hand-edited databases get here).
 */
export function referenceLabelOf(
  cells: ReferenceLabelCells,
  numSections: number,
): { gold: CaseLabel | null; agreement: { sufficiency: boolean | null; diagnosis: boolean | null } } {
  const agreement = {
    sufficiency: flagOf(cells.diagnosisSufficiencyAgreement),
    diagnosis: flagOf(cells.diagnosisAgreement),
  };
  const sufficiency = flagOf(cells.diagnosisSufficiency);
  if (sufficiency === false)
    return { gold: { sufficiency: "insufficient", missingInfo: [], missingInfoOther: null }, agreement };
  const code = parseIcd10(cells.diagnosis);
  const tau = Number(cells.earliestSufficientSection ?? "");
  if (sufficiency === true && code.ok && Number.isInteger(tau) && tau >= 1 && tau <= numSections) {
    return { gold: { sufficiency: "sufficient", icd10: code.code, earliestSection: tau }, agreement };
  }
  return { gold: null, agreement };
}

// ---------------------------------------------------------------------------------------------------------------
// Output

export interface CaseCounts {
  n_cases: number;
  annotations_in: { none: number; one: number; both: number };
  outcomes: { agreed: number; disputed: number; adjudicated: number };
  /** Cases that were disputed (still disputed or since adjudicated), by the reason of the dispute. */
  disputes_by_reason: { sufficiency: number; diagnosis: number };
  with_gold: number;
}

export interface SufficiencyAgreement {
  /** Cases with both primary annotations. */
  n: number;
  categories: ["sufficient", "insufficient"];
  /** matrix[k][l]: cases labelled categories[k] by Annotator A and categories[l] by Annotator B. */
  matrix: number[][];
  n_agreed: number;
  percent_agreement: number | null;
  cohen_kappa: number | null;
  gwet_ac1: IntervalSummary;
}

export interface WeightedAgreement {
  cohen_kappa_weighted: number | null;
  gwet_ac2: IntervalSummary;
}

export interface EarliestSectionAgreement {
  /** Cases both annotators called sufficient. */
  n: number;
  /** The ordinal scale 1..T_max (T_max: the most sections of those cases); the weights span it. */
  sections: number[];
  /** matrix[i][j]: cases where Annotator A chose sections[i] and Annotator B sections[j]. */
  matrix: number[][];
  n_exact: number;
  exact_agreement: number | null;
  /** |s_A − s_B| for 0..T_max − 1; absolute because which annotator is A is arbitrary. */
  differences: { difference: number; n: number; share: number | null }[];
  mean_absolute_difference: number | null;
  weighted: Record<OrdinalWeights, WeightedAgreement>;
}

export interface LevelAgreement {
  /** Both-sufficient cases whose two codes have this level (a code outside every WHO block has no group). */
  n: number;
  n_agreed: number;
  /** Distinct labels the annotators used at this level: the q of AC1's chance agreement. */
  n_categories: number;
  percent_agreement: number | null;
  cohen_kappa: number | null;
  gwet_ac1: IntervalSummary;
}

export interface DiagnosisAgreement {
  /** Cases both annotators called sufficient. */
  n: number;
  diagnosis_level: LevelAgreement;
  category: LevelAgreement;
  group: LevelAgreement;
}

export interface PerDiagnosisRow {
  /** Gold ICD-10 category (three-character base, docs/icd10.md#levels). */
  category: string;
  title: string | null;
  n: number;
  n_sufficiency_agreed: number;
  sufficiency_agreement: number | null;
  n_diagnosis_agreed: number;
  diagnosis_agreement: number | null;
  /** Null when the source is reference labels, whose flags say nothing about categories. */
  n_category_agreed: number | null;
  category_agreement: number | null;
}

export interface PerDiagnosisAgreement {
  /**
   * `primary_annotations`: cases with a gold label and both primary annotations; `reference_labels`: an imported
   * dataset's agreement flags (when no case has two annotations); null when neither exists.
   */
  source: "primary_annotations" | "reference_labels" | null;
  top_n: number;
  /** Gold categories in all, of which the `top_n` most frequent have rows. */
  n_categories: number;
  rows: PerDiagnosisRow[];
}

export const ACTION_COLUMNS_FINAL = "Final";

export interface ActionLabelRow {
  /** `S1` … `S{T_max − 1}`, then `Final` (each case's last section). */
  column: string;
  clarify: number;
  diagnose: number;
  abstain: number;
  total: number;
}

export interface LabelDistributions {
  /** How many of the gold labels below come from each source. */
  source: Record<GoldSource, number>;
  n_gold: number;
  sufficiency: { sufficient: number; insufficient: number };
  action_labels: { columns: string[]; rows: ActionLabelRow[] };
  icd10_codes: { code: string; n: number }[];
  icd10_categories: { category: string; title: string | null; n: number }[];
  icd10_groups: { group: string; n: number }[];
  missing_info: { key: MissingInfoKey; n: number }[];
  /** Over all cases of the study, gold label or not; an empty age group is "Unknown". */
  age_groups: { age_group: string; n: number }[];
  /** Over all cases of the study. */
  section_counts: { sections: number; n: number }[];
}

export interface FlagAgreement {
  n: number;
  n_agreed: number;
  percent_agreement: number | null;
}

export interface ReferenceAgreement {
  n: number;
  sufficiency: FlagAgreement;
  diagnosis: FlagAgreement;
}

export interface StudyReport {
  study: { id: number; name: string };
  case_counts: CaseCounts;
  sufficiency: SufficiencyAgreement;
  earliest_section: EarliestSectionAgreement;
  diagnosis: DiagnosisAgreement;
  per_diagnosis: PerDiagnosisAgreement;
  label_distributions: LabelDistributions;
  reference_agreement: ReferenceAgreement | null;
  /** Why each null value is null, keyed by its JSON path. */
  reasons: Record<string, string>;
  notes: string[];
}

// ---------------------------------------------------------------------------------------------------------------

const SUFFICIENCY_CATEGORIES: ["sufficient", "insufficient"] = ["sufficient", "insufficient"];
const NO_PAIRS = "no case has both primary annotations yet";
const NO_SUFFICIENT_PAIRS = "no case was called sufficient by both annotators";
const UNKNOWN_AGE = "Unknown";

const share = (part: number, whole: number): number | null => (whole > 0 ? part / whole : null);

/** Collects null values' reasons under their JSON paths. */
class Reasons {
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
function pairTable(pairs: readonly (readonly [string, string])[], categories?: readonly string[]): RatingTable {
  const rows: RatingRow[] = [];
  pairs.forEach(([a, b], i) => {
    rows.push({ item: String(i), rater: "A", label: a }, { item: String(i), rater: "B", label: b });
  });
  return buildRatingTable(rows, categories ? { categories } : {});
}

function countCases(records: readonly StudyCaseRecord[]): CaseCounts {
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

function sufficiencyAgreement(
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
      cohen_kappa: reasons.missing(`${path}.cohen_kappa`, NO_PAIRS),
      gwet_ac1: reasons.missingInterval(`${path}.gwet_ac1`, NO_PAIRS),
    };
  }
  // Both categories always count, so AC1 stays defined when every note is sufficient (irrCAC `categ.labels`).
  const table = pairTable(
    pairs.map(([a, b]) => [a.sufficiency, b.sufficiency]),
    SUFFICIENCY_CATEGORIES,
  );
  return {
    ...base,
    percent_agreement: reasons.number(`${path}.percent_agreement`, percentAgreement(table)),
    cohen_kappa: reasons.number(`${path}.cohen_kappa`, cohenKappa(table)),
    gwet_ac1: reasons.interval(`${path}.gwet_ac1`, gwetAc1(table)),
  };
}

type SufficientPair = readonly [
  { icd10: string; earliestSection: number },
  { icd10: string; earliestSection: number },
  number,
];

function earliestSectionAgreement(pairs: readonly SufficientPair[], reasons: Reasons): EarliestSectionAgreement {
  const path = "earliest_section";
  const maxSection = Math.max(1, ...pairs.flatMap(([a, b, t]) => [a.earliestSection, b.earliestSection, t]));
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
      ? {
          cohen_kappa_weighted: reasons.number(`${at}.cohen_kappa_weighted`, cohenWeightedKappa(table, w)),
          gwet_ac2: reasons.interval(`${at}.gwet_ac2`, gwetAc2(table, w)),
        }
      : {
          cohen_kappa_weighted: reasons.missing(`${at}.cohen_kappa_weighted`, NO_SUFFICIENT_PAIRS),
          gwet_ac2: reasons.missingInterval(`${at}.gwet_ac2`, NO_SUFFICIENT_PAIRS),
        };
  }
  return {
    n,
    sections,
    matrix,
    n_exact: exact,
    exact_agreement: n > 0 ? exact / n : reasons.missing(`${path}.exact_agreement`, NO_SUFFICIENT_PAIRS),
    differences: differenceCounts.map((count, difference) => ({ difference, n: count, share: share(count, n) })),
    mean_absolute_difference:
      n > 0 ? totalDifference / n : reasons.missing(`${path}.mean_absolute_difference`, NO_SUFFICIENT_PAIRS),
    weighted,
  };
}

function levelAgreement(
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
      cohen_kappa: reasons.missing(`${path}.cohen_kappa`, reason),
      gwet_ac1: reasons.missingInterval(`${path}.gwet_ac1`, reason),
    };
  }
  const table = pairTable(pairs);
  return {
    n,
    n_agreed,
    n_categories: table.categories.length,
    percent_agreement: reasons.number(`${path}.percent_agreement`, percentAgreement(table)),
    cohen_kappa: reasons.number(`${path}.cohen_kappa`, cohenKappa(table)),
    gwet_ac1: reasons.interval(`${path}.gwet_ac1`, gwetAc1(table)),
  };
}

function diagnosisAgreement(pairs: readonly SufficientPair[], reasons: Reasons, notes: string[]): DiagnosisAgreement {
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

function goldCategory(gold: CaseLabel | null): string | null {
  if (gold?.sufficiency !== "sufficient") return null;
  const p = parseIcd10(gold.icd10);
  return p.ok ? p.category : null;
}

function perDiagnosis(
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

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Age groups in the order of their first number (18–27 … 78+), anything else after them, Unknown last. */
function compareAgeGroups(a: string, b: string): number {
  const rank = (s: string) => (s === UNKNOWN_AGE ? Infinity : Number(/^\d+/.exec(s)?.[0] ?? NaN) || 1e9);
  return rank(a) - rank(b) || compareText(a, b);
}

function tally<K>(keys: Iterable<K>): Map<K, number> {
  const counts = new Map<K, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}

const byCountThenKey =
  <T extends { n: number }>(key: (x: T) => string) =>
  (x: T, y: T) =>
    y.n - x.n || compareText(key(x), key(y));

function actionLabels(records: readonly StudyCaseRecord[], notes: string[]): LabelDistributions["action_labels"] {
  const withGold = records.filter((r) => r.gold !== null);
  const maxSections = Math.max(0, ...withGold.map((r) => r.numSections));
  // docs/evaluation.md#expert-labels-script / paper Fig. 3: a case's last section goes to "Final", so T = 3 and T = 5 notes end together.
  const columns = [
    ...Array.from({ length: Math.max(0, maxSections - 1) }, (_, i) => `S${i + 1}`),
    ...(maxSections > 0 ? [ACTION_COLUMNS_FINAL] : []),
  ];
  const rows = columns.map((column): ActionLabelRow => ({ column, clarify: 0, diagnose: 0, abstain: 0, total: 0 }));
  const key: Record<ExpertAction, "clarify" | "diagnose" | "abstain"> = {
    Clarify: "clarify",
    Diagnose: "diagnose",
    Abstain: "abstain",
  };
  let skipped = 0;
  for (const r of withGold) {
    let labels: ExpertAction[];
    try {
      labels = expertActionLabels(r.gold!, r.numSections);
    } catch {
      skipped++;
      continue;
    }
    labels.forEach((action, i) => {
      const target = i === labels.length - 1 ? rows[rows.length - 1] : rows[i];
      target[key[action]]++;
      target.total++;
    });
  }
  if (skipped > 0)
    notes.push(`${skipped} gold label(s) have an earliest section outside 1..T: left out of the action labels`);
  return { columns, rows };
}

function labelDistributions(
  records: readonly StudyCaseRecord[],
  options: StudyReportOptions,
  notes: string[],
): LabelDistributions {
  const title = options.categoryTitle ?? (() => null);
  const gold = records.filter((r) => r.gold !== null);
  const source: Record<GoldSource, number> = { agreed: 0, adjudicated: 0, reference: 0 };
  for (const r of gold) if (r.goldSource) source[r.goldSource]++;
  const sufficient = gold.map((r) => r.gold!).filter((g) => g.sufficiency === "sufficient");
  const insufficient = gold.map((r) => r.gold!).filter((g) => g.sufficiency === "insufficient");
  const parsed = sufficient.map((g) => parseIcd10(g.icd10));
  const codes = parsed.map((p, i) => (p.ok ? p.code : sufficient[i].icd10.trim().toUpperCase() || "(empty)"));
  const missing = tally(insufficient.flatMap((g) => g.missingInfo));

  return {
    source,
    n_gold: gold.length,
    sufficiency: { sufficient: sufficient.length, insufficient: insufficient.length },
    action_labels: actionLabels(records, notes),
    icd10_codes: [...tally(codes)].map(([code, n]) => ({ code, n })).sort(byCountThenKey((x) => x.code)),
    icd10_categories: [...tally(parsed.flatMap((p) => (p.ok ? [p.category] : [])))]
      .map(([category, n]) => ({ category, title: title(category), n }))
      .sort(byCountThenKey((x) => x.category)),
    icd10_groups: [...tally(parsed.flatMap((p) => (p.ok && p.block ? [p.block] : [])))]
      .map(([group, n]) => ({ group, n }))
      .sort((x, y) => compareText(x.group, y.group)),
    missing_info: MISSING_INFO_KEYS.filter((k) => missing.has(k)).map((key) => ({ key, n: missing.get(key)! })),
    age_groups: [...tally(records.map((r) => r.ageGroup.trim() || UNKNOWN_AGE))]
      .map(([age_group, n]) => ({ age_group, n }))
      .sort((x, y) => compareAgeGroups(x.age_group, y.age_group)),
    section_counts: [...tally(records.map((r) => r.numSections))]
      .map(([sections, n]) => ({ sections, n }))
      .sort((x, y) => x.sections - y.sections),
  };
}

function referenceAgreement(records: readonly StudyCaseRecord[]): ReferenceAgreement | null {
  const flags = records.flatMap((r) => (r.referenceAgreement ? [r.referenceAgreement] : []));
  if (flags.length === 0) return null;
  const flag = (values: (boolean | null)[]): FlagAgreement => {
    const known = values.filter((v): v is boolean => v !== null);
    const agreed = known.filter(Boolean).length;
    return { n: known.length, n_agreed: agreed, percent_agreement: share(agreed, known.length) };
  };
  return {
    n: flags.length,
    sufficiency: flag(flags.map((f) => f.sufficiency)),
    diagnosis: flag(flags.map((f) => f.diagnosis)),
  };
}

/**
 * Every statistic of docs/statistics.md#the-study-agreement-report for one study. Agreement uses the two primary annotations of each case whose
 * annotations are both in (docs/statistics.md#the-study-agreement-report: before adjudication), as raters "Annotator A" and "Annotator B"; Cohen's kappa
 * depends on which is which, AC1, percent agreement and the absolute differences do not. Label distributions use
 * the gold labels given (agreed, adjudicated or imported reference labels); disputed cases have none yet.
 *
 * @example buildStudyReport(records, { study: { id: 1, name: "Pilot" } }).sufficiency.gwet_ac1.value
 */
export function buildStudyReport(records: readonly StudyCaseRecord[], options: StudyReportOptions): StudyReport {
  const reasons = new Reasons();
  const notes = [...(options.notes ?? [])];
  const pairs = records.flatMap((r) => (r.annotations ? [r.annotations] : []));
  const sufficientPairs: SufficientPair[] = records.flatMap((r) => {
    const [a, b] = r.annotations ?? [];
    return a?.sufficiency === "sufficient" && b?.sufficiency === "sufficient" ? [[a, b, r.numSections] as const] : [];
  });

  const case_counts = countCases(records);
  if (case_counts.outcomes.disputed > 0) {
    notes.push(
      `${case_counts.outcomes.disputed} disputed case(s) await adjudication: they have no gold label yet and are left out of per-diagnosis agreement and the label distributions`,
    );
  }
  const report: StudyReport = {
    study: { ...options.study },
    case_counts,
    sufficiency: sufficiencyAgreement(pairs, reasons),
    earliest_section: earliestSectionAgreement(sufficientPairs, reasons),
    diagnosis: diagnosisAgreement(sufficientPairs, reasons, notes),
    per_diagnosis: perDiagnosis(records, options, reasons),
    label_distributions: labelDistributions(records, options, notes),
    reference_agreement: referenceAgreement(records),
    reasons: reasons.byPath,
    notes,
  };
  return report;
}
