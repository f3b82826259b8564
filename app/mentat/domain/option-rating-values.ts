/**
 * A MENTAT option rating's values (docs/mentat.md): one zod schema read by the server (the route's action, through
 * parseDraftPost) and by the page (the workspace definition, through schemaFieldErrors), so that a value's problem is
 * said at its field with the same words on both sides. An option not rated yet has no score (null).
 */
import { z } from "zod";
import { OPTION_COUNT } from "../../expert-panel/domain/expert-scales";
import { TEXT_LIMITS, tooLongMessage } from "../../work-items/domain/text-limits";

export const OptionRatingSchema = z.object({
  /** In the order the expert saw the options. */
  scores: z
    .array(
      z
        .number()
        .int("Scores are whole numbers.")
        .min(0, "Scores run from 0 to 100.")
        .max(100, "Scores run from 0 to 100.")
        .nullable(),
    )
    .length(OPTION_COUNT),
  comment: z.string().max(TEXT_LIMITS.comment, tooLongMessage("A comment", TEXT_LIMITS.comment)).default(""),
});
export type OptionRatingValues = z.infer<typeof OptionRatingSchema>;
