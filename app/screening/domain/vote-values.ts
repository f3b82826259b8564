/**
 * A screening vote's values (docs/screening.md): one zod schema read by the server (the route's action, through
 * parseDraftPost) and by the page (the workspace definition, through schemaFieldErrors), so that a value's problem is
 * said at its field with the same words on both sides. The vote's own rule (a relevant vote names a category of the
 * study) is checkVote in ./screening.ts, applied on both sides too.
 */
import { z } from "zod";
import { TEXT_LIMITS, tooLongMessage } from "../../work-items/domain/text-limits";
import { REVIEW_CONFIDENCES } from "./screening";

export const VoteValuesSchema = z.object({
  relevant: z.enum(["", "yes", "no"]).default(""),
  category: z.string().trim().max(TEXT_LIMITS.category, tooLongMessage("A category", TEXT_LIMITS.category)).default(""),
  confidence: z.enum(["", ...REVIEW_CONFIDENCES]).default(""),
  notes: z.string().max(TEXT_LIMITS.notes, tooLongMessage("Notes", TEXT_LIMITS.notes)).default(""),
});
