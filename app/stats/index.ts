/**
 * Agreement statistics (docs/statistics.md): pure functions over a RatingTable built from long-format ratings.
 * No I/O, clock or randomness; shared by the web app and the `agreement` command.
 */
export { buildCodedRatingTable, buildRatingTable, isNumericLabel, ratingCount, sortLabels } from "./rating-table";
export type { RatingRow, RatingTable } from "./rating-table";
export type { Estimate, IntervalEstimate } from "./result";
export { fleissKappa, gwetAc1, gwetAc2, percentAgreement } from "./chance-corrected";
export { cohenKappa, cohenWeightedKappa, confusionMatrix } from "./cohen";
export { krippendorffAlpha } from "./krippendorff";
export { agreementWeights } from "./weights";
export { logGamma, regularizedIncompleteBeta, studentTCdf, studentTQuantile } from "./student-t";
export { summariseAgreement } from "./summary";
export type { AgreementSummary, IntervalSummary, OrdinalWeights, Scale } from "./summary";
