/**
 * Settling two (or more) reviewers' differences on a note (docs/preparation.md, "Settling two reviews"): the admin
 * takes, for each proposal, the decision of one reviewer, the marked text of one reviewer and the exclusion of one
 * reviewer, or one reviewer's whole review. Pure: the reviews come in by position (A, B, …).
 */
import { z } from "zod";
import type { PrepProposal, PrepSection } from "../../../db/vocabulary";
import { checkReview, type MinimisationValues } from "./review";

/** Reviewer positions on the settlement page: A, B, C, … (by username order). */
export const reviewerLetter = (i: number) => String.fromCharCode(65 + i);

/** What the admin chose: a reviewer position for each proposal, for the marked text and for the exclusion. */
export const SettlementChoiceSchema = z
  .object({
    proposals: z.record(z.string().max(40), z.number().int().min(0).max(25)),
    missed: z.number().int().min(0).max(25),
    exclusion: z.number().int().min(0).max(25),
  })
  .strict();
export type SettlementChoice = z.infer<typeof SettlementChoiceSchema>;

/** Taking one reviewer's whole review. */
export function wholeReviewChoice(proposals: readonly PrepProposal[], reviewer: number): SettlementChoice {
  return {
    proposals: Object.fromEntries(proposals.map((p) => [p.id, reviewer])),
    missed: reviewer,
    exclusion: reviewer,
  };
}

export type SettleOutcome =
  { ok: true; values: MinimisationValues } | { ok: false; message: string; errors: Record<string, string> };

/**
 * The settled review from the reviews and the choice. The exclusion's reviewer decides whether the case is excluded
 * (then with that reviewer's reason and nothing else); otherwise each proposal takes its chosen reviewer's decision
 * and the marked text is the chosen reviewer's. The result must pass the review's own check (every proposal decided,
 * marks that apply).
 */
export function settledValues(
  note: { sections: readonly PrepSection[]; proposals: readonly PrepProposal[] },
  reviews: readonly MinimisationValues[],
  choice: SettlementChoice,
): SettleOutcome {
  const errors: Record<string, string> = {};
  const at = (i: number, field: string) => {
    const r = reviews[i];
    if (!r) errors[field] = `There is no reviewer ${reviewerLetter(i)}.`;
    return r;
  };
  const exclusion = at(choice.exclusion, "exclusion");
  if (!exclusion) return { ok: false, message: "Not settled: choose among the reviews shown.", errors };
  if (exclusion.excluded)
    return {
      ok: true,
      values: { decisions: {}, missed: [], excluded: true, exclusionReason: exclusion.exclusionReason },
    };
  const decisions: MinimisationValues["decisions"] = {};
  for (const p of note.proposals) {
    const i = choice.proposals[p.id];
    if (i === undefined) {
      errors[`proposal:${p.id}`] = "Choose whose decision this proposal takes.";
      continue;
    }
    const r = at(i, `proposal:${p.id}`);
    const d = r?.excluded ? undefined : r?.decisions[p.id];
    if (r && !d)
      errors[`proposal:${p.id}`] = `Reviewer ${reviewerLetter(i)} excluded the case and decided nothing here.`;
    if (d) decisions[p.id] = d;
  }
  const missedFrom = at(choice.missed, "missed");
  if (missedFrom?.excluded)
    errors.missed = `Reviewer ${reviewerLetter(choice.missed)} excluded the case and marked nothing.`;
  const first = Object.values(errors)[0];
  if (first) return { ok: false, message: `Not settled: ${first}`, errors };
  const values: MinimisationValues = { decisions, missed: missedFrom!.missed, excluded: false, exclusionReason: "" };
  const problems = checkReview(values, note);
  if (Object.keys(problems).length)
    return { ok: false, message: "The settled review is not complete.", errors: problems };
  return { ok: true, values };
}
