/**
 * A judge-validation rating's values (docs/judge-validation.md, "Response features and the action rule"): one zod
 * schema read by the server (the route's action, through parseDraftPost) and by the page (the workspace definition,
 * through schemaFieldErrors), so that a value's problem is said at its field with the same words on both sides; and
 * the rule that a submitted rating names both features.
 */
import { z } from "zod";
import { INFO_REQUESTS, PRIMARY_ANSWERS } from "../../evaluation/public";
import { TEXT_LIMITS, tooLongMessage } from "../../work-items/domain/text-limits";

export const RatingValuesSchema = z.object({
  primaryAnswer: z.enum(["", ...PRIMARY_ANSWERS]).default(""),
  infoRequest: z.enum(["", ...INFO_REQUESTS]).default(""),
  icdCodes: z.string().trim().max(TEXT_LIMITS.icdCodes, tooLongMessage("The codes", TEXT_LIMITS.icdCodes)).default(""),
  diagnosisNames: z
    .string()
    .trim()
    .max(TEXT_LIMITS.diagnosisNames, tooLongMessage("The diagnosis names", TEXT_LIMITS.diagnosisNames))
    .default(""),
  notes: z.string().max(TEXT_LIMITS.notes, tooLongMessage("Notes", TEXT_LIMITS.notes)).default(""),
});
export type RatingValues = z.infer<typeof RatingValuesSchema>;

export const RATING_INCOMPLETE = "Both features are needed to submit; see the marked fields.";

/** What a rating lacks to be submitted, at its fields (empty when it is complete). */
export function ratingIncomplete(values: RatingValues): Record<string, string> {
  const errors: Record<string, string> = {};
  if (!values.primaryAnswer) errors.primaryAnswer = "Choose the primary answer (O, D or N).";
  if (!values.infoRequest) errors.infoRequest = "Choose the information request (P, G or X).";
  return errors;
}
