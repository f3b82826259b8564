/**
 * A case review's values (docs/case-review.md): one zod schema read by the server (the route's action, through
 * parseDraftPost) and by the page (the workspace definition, through schemaFieldErrors), so that a value's problem is
 * said at its field with the same words on both sides.
 */
import { z } from "zod";
import { TEXT_LIMITS, tooLongMessage } from "../../work-items/domain/text-limits";

export const ReviewValuesSchema = z.object({
  naturalness: z.number().int().min(1).max(5).nullable().default(null),
  validity: z.number().int().min(1).max(5).nullable().default(null),
  realism: z.number().int().min(1).max(5).nullable().default(null),
  decision: z.enum(["accept", "reject"]).nullable().default(null),
  reason: z.string().max(TEXT_LIMITS.comment, tooLongMessage("A reason", TEXT_LIMITS.comment)).default(""),
  comment: z.string().max(TEXT_LIMITS.comment, tooLongMessage("A comment", TEXT_LIMITS.comment)).default(""),
});
export type ReviewValues = z.infer<typeof ReviewValuesSchema>;
