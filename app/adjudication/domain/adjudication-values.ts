/**
 * What the adjudicator's form holds (docs/safe-psych.md, "Disagreement and adjudication"): the label's fields and,
 * for the decision, the rationale. One zod schema, read by the server (the route's action, for drafts and for the
 * steps alike) and by the page (the workspace definition), so that a value's problem is said at its field with the
 * same words on both sides; and the decision's rationale rule, which the engine's decision step applies too
 * (app/adjudication/adjudication.server.ts:decisionStep).
 */
import { z } from "zod";
import { LabelValuesSchema, type LabelValuesInput } from "../../labels/label-values";
import type { CaseLabel } from "../../labels/labels";
import { TEXT_LIMITS, tooLongMessage } from "../../work-items/domain/text-limits";

export const AdjudicationValuesSchema = LabelValuesSchema.extend({
  rationale: z.string().max(TEXT_LIMITS.notes, tooLongMessage("A rationale", TEXT_LIMITS.notes)).default(""),
});
export type AdjudicationValues = z.infer<typeof AdjudicationValuesSchema>;

/** The step a post records: the independent judgement (two-phase mode, first), or the decision. */
export const AdjudicationStepSchema = z.enum(["independent", "decide"]);
export type AdjudicationStep = z.infer<typeof AdjudicationStepSchema>;

export const RATIONALE_DIFFERS =
  "A rationale is required when the final label differs from your independent judgement.";
export const RATIONALE_REQUIRED = "A rationale is required.";

function sameLabel(a: CaseLabel, b: CaseLabel): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Why a decision needs a rationale it lacks, or null: in two-phase mode when the label differs from the independent
 * judgement, in the other modes always.
 */
export function rationaleMissing(
  label: CaseLabel,
  rationale: string,
  independent: CaseLabel | null,
  twoPhase: boolean,
): string | null {
  if (rationale.trim() !== "") return null;
  if (!twoPhase) return RATIONALE_REQUIRED;
  return independent && !sameLabel(independent, label) ? RATIONALE_DIFFERS : null;
}

/** The label's part of the values. */
export function labelPart({ rationale: _, ...label }: AdjudicationValues): LabelValuesInput {
  return label;
}
