/**
 * What other protocols may use of study-report that runs anywhere (docs/architecture.md, "Public modules"): pure
 * functions, types and constants, safe in a page, a command and another protocol's domain code. Its services are
 * in public.server.ts; everything else in app/study-report/ is its own.
 */
export { withPseudonyms } from "./domain/rater-agreement";
export {
  diagnosisAgreement,
  earliestSectionAgreement,
  NO_PAIRS,
  NO_SUFFICIENT_PAIRS,
  Reasons,
  sufficiencyAgreement,
  type SufficientPair,
} from "./domain/study-report-agreement";
export {
  type DiagnosisAgreement,
  type EarliestSectionAgreement,
  type SufficiencyAgreement,
} from "./domain/study-report-types";
