/**
 * The study report: agreement between the two primary annotations of each case, before
 * adjudication, and the distributions of the study's gold labels. Pure: the caller loads plain per-case records;
 * the `stats` command and the admin dashboard print the same object.
 * The agreement is computed in study-report-agreement.ts, the distributions in study-report-distributions.ts.
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
import type { CaseLabel, DisputeReason, MissingInfoKey } from "../../gold/domain/gold";
import { parseIcd10 } from "../../icd10/icd10";
import type { IntervalSummary, OrdinalWeights } from "../../stats/index";
import {
  countCases,
  diagnosisAgreement,
  earliestSectionAgreement,
  perDiagnosis,
  Reasons,
  sufficiencyAgreement,
  type SufficientPair,
} from "./study-report-agreement";
import { labelDistributions, referenceAgreement } from "./study-report-distributions";

// ---------------------------------------------------------------------------------------------------------------
// Input

export type GoldSource = "agreed" | "adjudicated" | "reference";

export interface StudyCaseRecord {
  caseId: number;
  externalId: string;
  /** T, compacted (SPEC §2). */
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

/** An imported dataset's label cells (INTEROP §1), as stored in reference_labels. */
export interface ReferenceLabelCells {
  diagnosisSufficiency: string | null;
  diagnosisSufficiencyAgreement: string | null;
  diagnosis: string | null;
  diagnosisAgreement: string | null;
  earliestSufficientSection: string | null;
}

const flagOf = (cell: string | null): boolean | null => (cell === "1" ? true : cell === "0" ? false : null);

/**
 * Reads reference labels as a gold label and agreement flags (INTEROP §1: `1`/`0`, a code and τ in 1..T when
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
  /** Gold ICD-10 category (three-character base, SPEC §6). */
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

/**
 * Every statistic of SPEC §7 for one study. Agreement uses the two primary annotations of each case whose
 * annotations are both in (SPEC §7: before adjudication), as raters "Annotator A" and "Annotator B"; Cohen's kappa
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
