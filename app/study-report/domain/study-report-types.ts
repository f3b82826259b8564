/**
 * The shapes of the study report (docs/statistics.md, "The study agreement report"), shared by its builder and its
 * parts (agreement, distributions, charts, text).
 */
import type { CaseLabel, MissingInfoKey } from "../../labels/labels";
import type { DisputeReason } from "../../gold/public";
import { parseIcd10 } from "../../icd10/icd10";
import type { IntervalSummary, OrdinalWeights } from "../../stats/index";
import type { RaterAgreement } from "./study-report-raters";

export type GoldSource = "agreed" | "adjudicated" | "reference";

export interface StudyCaseRecord {
  caseId: number;
  externalId: string;
  /** T, compacted (docs/safe-psych.md#cases-and-sections). */
  numSections: number;
  ageGroup: string;
  /** Primary annotations submitted or locked (0, 1 or 2). */
  annotationsIn: number;
  /** The two primary annotations once both are in (locked); otherwise null. */
  annotations: readonly [CaseLabel, CaseLabel] | null;
  /**
   * The usernames of their authors, in the same order; the report orients the pairs by them (study-report-raters.ts).
   * Without them the pairs are read as given (Annotator A then B).
   */
  annotators?: readonly [string, string] | null;
  /**
   * When the later of the two primary annotations was submitted (ms since the epoch): the time the pair was complete,
   * which agreement over time buckets by (rater-agreement.ts). Null or absent when not known.
   */
  completedAt?: number | null;
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
  /** 95% Student-t interval of percent agreement (irrCAC pa.coeff.raw), null with the value or its SE. */
  percent_agreement_ci95: [number, number] | null;
  cohen_kappa: number | null;
  /** 95% interval of Cohen's κ (irrCAC kappa2.table's SE), null with the value or its SE. */
  cohen_kappa_ci95: [number, number] | null;
  gwet_ac1: IntervalSummary;
}

export interface WeightedAgreement {
  cohen_kappa_weighted: number | null;
  cohen_kappa_weighted_ci95: [number, number] | null;
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
  /** 95% interval of exact agreement (percent agreement on the section scale). */
  exact_agreement_ci95: [number, number] | null;
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
  percent_agreement_ci95: [number, number] | null;
  cohen_kappa: number | null;
  cohen_kappa_ci95: [number, number] | null;
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
  raters: RaterAgreement;
  /** Why each null value is null, keyed by its JSON path. */
  reasons: Record<string, string>;
  notes: string[];
}
