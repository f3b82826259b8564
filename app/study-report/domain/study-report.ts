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
 *   `percent_agreement_ci95`, `cohen_kappa`, `cohen_kappa_ci95`, `gwet_ac1` {`value`, `se`, `ci95`}}
 * - `earliest_section` (both-sufficient cases) {`n`, `sections`, `matrix`, `n_exact`, `exact_agreement`,
 *   `exact_agreement_ci95`, `differences` [{`difference`, `n`, `share`}], `mean_absolute_difference`, `weighted`
 *   {`linear`, `quadratic`} each {`cohen_kappa_weighted`, `cohen_kappa_weighted_ci95`, `gwet_ac2` {`value`, `se`,
 *   `ci95`}}}
 * - `diagnosis` (both-sufficient cases) {`n`, `diagnosis_level`, `category`, `group`} each {`n`, `n_agreed`,
 *   `n_categories`, `percent_agreement`, `percent_agreement_ci95`, `cohen_kappa`, `cohen_kappa_ci95`, `gwet_ac1`
 *   {`value`, `se`, `ci95`}}
 *   (a `*_ci95` is the 95% Student-t interval [low, high] of the value beside it, null when the value or its
 *   standard error is undefined)
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
 * - `raters` {`rule` (`rater_identity`, `pair_order`, `adjudicator_order`), `description`, `annotators`, `pairs`
 *   [{`annotators`, `n`, `sufficiency` {`matrix`, `percent_agreement`, `cohen_kappa`, `gwet_ac1`},
 *   `diagnosis_level` {`n`, `percent_agreement`, `cohen_kappa`}}], `order_free` {`sufficiency`, `diagnosis_level`}
 *   each {`n`, `fleiss_kappa`, `krippendorff_alpha`, `gwet_ac1`}}: which annotator is the row of every table
 *   (core/study-report-raters.ts, docs/statistics.md)
 * - `reasons` {JSON path → why that value is null}, `notes` [strings about the data]
 *
 * Proportions and coefficients are plain numbers (agreement as a fraction in [0, 1]); an undefined one is null and
 * `reasons` has its path (e.g. `"sufficiency.cohen_kappa"`).
 */
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

export * from "./study-report-types";
import type { StudyCaseRecord, StudyReport, StudyReportOptions } from "./study-report-types";
import { orientByRater, POOLED_COHEN_PATHS, POOLED_COHEN_REASON, raterAgreement } from "./study-report-raters";

/** Sets the pooled Cohen's κ values to null with their reason (rule `pair_order`, study-report-raters.ts). */
function withholdPooledCohen(report: StudyReport): void {
  for (const path of POOLED_COHEN_PATHS) {
    const keys = path.split(".");
    let target = report as unknown as Record<string, unknown>;
    for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
    if (target[keys[keys.length - 1]] === null) continue; // already undefined, with its own reason
    target[keys[keys.length - 1]] = null;
    target[`${keys[keys.length - 1]}_ci95`] = null;
    report.reasons[path] = POOLED_COHEN_REASON;
  }
}

/**
 * Every statistic of docs/statistics.md#the-study-agreement-report for one study. Agreement uses the two primary annotations of each case whose
 * annotations are both in (docs/statistics.md#the-study-agreement-report: before adjudication), as raters "Annotator A" and "Annotator B"; Cohen's kappa
 * depends on which is which, AC1, percent agreement and the absolute differences do not. Label distributions use
 * the gold labels given (agreed, adjudicated or imported reference labels); disputed cases have none yet.
 *
 * @example buildStudyReport(records, { study: { id: 1, name: "Pilot" } }).sufficiency.gwet_ac1.value
 */
export function buildStudyReport(given: readonly StudyCaseRecord[], options: StudyReportOptions): StudyReport {
  // Rows are one annotator and columns the other by a stable rule, never the adjudicator's random A/B order.
  const oriented = orientByRater(given);
  const records = oriented.records;
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
    raters: raterAgreement(oriented.rule, records),
    reasons: reasons.byPath,
    notes,
  };
  if (oriented.rule === "pair_order") withholdPooledCohen(report);
  return report;
}
