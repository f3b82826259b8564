/**
 * Agreement statistics (docs/statistics.md): pure functions over a RatingTable built from long-format ratings.
 * No I/O, clock or randomness; shared by the web app and the `agreement` command.
 */
export { buildRatingTable, isNumericLabel, ratingCount, sortLabels } from "./rating-table";
export type { RatingRow, RatingTable, RatingTableOptions } from "./rating-table";
export type {
  ChanceCorrectedCoefficient,
  Estimate,
  IntervalEstimate,
  IntervalOptions,
  Sample,
  WeightScheme,
} from "./result";
export { fleissKappa, gwetAc1, gwetAc2, percentAgreement } from "./chance-corrected";
export type { PercentAgreement } from "./chance-corrected";
export { cohenKappa, cohenWeightedKappa, confusionMatrix } from "./cohen";
export type { ConfusionMatrix, PairOptions } from "./cohen";
export { krippendorffAlpha } from "./krippendorff";
export type { KrippendorffAlpha, MeasurementLevel } from "./krippendorff";
export { agreementWeights } from "./weights";
export { logBeta, logGamma, regularizedIncompleteBeta, studentTCdf, studentTQuantile } from "./student-t";
export { summariseAgreement } from "./summary";
export type { AgreementSummary, IntervalSummary, OrdinalWeights, Scale, SummaryOptions } from "./summary";
