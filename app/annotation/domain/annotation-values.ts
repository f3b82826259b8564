/**
 * An annotation's values (docs/safe-psych.md, "Annotation"): one zod schema read by the server (the route's action,
 * through parseDraftPost) and by the page (the workspace definition, through schemaFieldErrors), so that a value's
 * problem is said at its field with the same words on both sides. A draft may be incomplete; a submission must pass
 * the case label's rules (checkLabelValues).
 */
import { z } from "zod";
import { TEXT_LIMITS, tooLongMessage } from "../../work-items/domain/text-limits";
import { LabelValuesSchema } from "../../labels/label-values";

export const AnnotationValuesSchema = LabelValuesSchema.extend({
  notes: z.string().max(TEXT_LIMITS.notes, tooLongMessage("Notes", TEXT_LIMITS.notes)).default(""),
});
export type AnnotationValues = z.infer<typeof AnnotationValuesSchema>;

export const EMPTY_VALUES: AnnotationValues = {
  sufficiency: "",
  icd10: "",
  earliestSection: null,
  missingInfo: [],
  missingOther: "",
  notes: "",
};
