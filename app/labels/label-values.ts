/**
 * A case label's values as the annotator's and the adjudicator's forms hold them (docs/safe-psych.md, "Annotation"):
 * one zod schema for the label's fields, which each workspace's value schema extends (annotation with its notes,
 * adjudication with its rationale) and which both the page (app/work-items/ui/workspace-page.tsx) and the server's
 * parse (app/platform/forms.ts:parseDraftPost) read; and the label's rules (app/labels/labels.ts:checkCaseLabel)
 * as field errors, at the fields of these values.
 */
import { z } from "zod";
import { checkCaseLabel, MISSING_INFO_KEYS, type CaseLabel } from "./labels";
import { TEXT_LIMITS, tooLongMessage } from "../work-items/domain/text-limits";

export const LabelValuesSchema = z.object({
  sufficiency: z.enum(["", "sufficient", "insufficient"]).default(""),
  icd10: z.string().trim().max(16, "A code has at most 16 characters.").default(""),
  earliestSection: z.coerce.number().int().min(0).max(5).nullable().default(null),
  missingInfo: z
    .array(z.enum(MISSING_INFO_KEYS as [string, ...string[]]))
    .max(MISSING_INFO_KEYS.length)
    .default([]),
  missingOther: z
    .string()
    .max(TEXT_LIMITS.missingOther, tooLongMessage("Other missing information", TEXT_LIMITS.missingOther))
    .default(""),
});
export type LabelValuesInput = z.infer<typeof LabelValuesSchema>;

/**
 * The label's rules at the form's fields (missingOther for the stored missingInfoOther), each a sentence; with
 * `isValidCode` (the server's WHO table) a code outside chapter V is refused too.
 */
export function checkLabelValues(
  values: LabelValuesInput,
  sectionCount: number,
  isValidCode?: (code: string) => boolean,
): { ok: true; label: CaseLabel } | { ok: false; errors: Record<string, string> } {
  const check = checkCaseLabel(
    {
      sufficiency: values.sufficiency || undefined,
      icd10: values.icd10,
      earliestSection: values.earliestSection ?? undefined,
      missingInfo: values.missingInfo,
      missingInfoOther: values.missingOther,
    },
    { sectionCount, isValidCode },
  );
  if (check.ok) return check;
  const errors: Record<string, string> = {};
  for (const [k, v] of Object.entries(check.errors))
    errors[k === "missingInfoOther" ? "missingOther" : k] = v!.charAt(0).toUpperCase() + v!.slice(1) + ".";
  return { ok: false, errors };
}

/** The form's values of a stored label (empty values for none), with `extra` (the notes, the rationale). */
export function labelValuesOf(label: CaseLabel | null): LabelValuesInput {
  if (!label) return { sufficiency: "", icd10: "", earliestSection: null, missingInfo: [], missingOther: "" };
  return label.sufficiency === "sufficient"
    ? {
        sufficiency: "sufficient",
        icd10: label.icd10,
        earliestSection: label.earliestSection,
        missingInfo: [],
        missingOther: "",
      }
    : {
        sufficiency: "insufficient",
        icd10: "",
        earliestSection: null,
        missingInfo: label.missingInfo,
        missingOther: label.missingInfoOther ?? "",
      };
}
