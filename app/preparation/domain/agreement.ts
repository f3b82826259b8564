/**
 * Agreement between the reviewers of a project on the proposals (docs/preparation.md, "Two reviewers"): each proposal
 * of a note two reviewers both decided (neither excluded the case) is an item, the decision (accept, edit, reject)
 * its label. Percent agreement, and Cohen's κ when the project has exactly two reviewers with such items
 * (docs/statistics.md); and how often they agree on excluding a case. Pure.
 */
import type { PrepDecision } from "../../../db/vocabulary";
import { percentAgreement } from "../../stats/chance-corrected";
import { cohenKappa } from "../../stats/cohen";
import { buildRatingTable, type RatingRow } from "../../stats/rating-table";

export interface SubmittedReview {
  reviewer: string;
  noteId: number;
  decisions: Record<string, PrepDecision>;
  excluded: boolean;
}

export interface ProposalAgreement {
  reviewers: number;
  /** Proposals decided by two or more reviewers. */
  proposals: number;
  percentAgreement: number | null;
  /** Cohen's κ over the decisions, with exactly two reviewers; null otherwise (`kappaReason`). */
  kappa: number | null;
  kappaReason: string | null;
  /** Notes submitted by two or more reviewers, and those on which they all made the same exclusion decision. */
  notesReviewedTwice: number;
  exclusionAgreed: number;
}

export function proposalAgreement(reviews: readonly SubmittedReview[]): ProposalAgreement {
  const reviewers = new Set(reviews.map((r) => r.reviewer));
  const byNote = new Map<number, SubmittedReview[]>();
  for (const r of reviews) byNote.set(r.noteId, [...(byNote.get(r.noteId) ?? []), r]);
  const rows: RatingRow[] = [];
  let notesReviewedTwice = 0;
  let exclusionAgreed = 0;
  for (const [noteId, notes] of byNote) {
    if (notes.length < 2) continue;
    notesReviewedTwice++;
    if (notes.every((n) => n.excluded === notes[0]!.excluded)) exclusionAgreed++;
    const kept = notes.filter((n) => !n.excluded);
    for (const n of kept)
      for (const [id, d] of Object.entries(n.decisions))
        if (kept.filter((o) => o.decisions[id]).length >= 2)
          rows.push({ item: `${noteId}:${id}`, rater: n.reviewer, label: d.action });
  }
  const proposals = new Set(rows.map((r) => r.item)).size;
  if (proposals === 0)
    return {
      reviewers: reviewers.size,
      proposals,
      percentAgreement: null,
      kappa: null,
      kappaReason: "no proposal was decided by two reviewers",
      notesReviewedTwice,
      exclusionAgreed,
    };
  const table = buildRatingTable(rows, { categories: ["accept", "edit", "reject"] });
  const raters = new Set(rows.map((r) => r.rater)).size;
  const kappa = raters === 2 ? cohenKappa(table) : null;
  return {
    reviewers: reviewers.size,
    proposals,
    percentAgreement: percentAgreement(table).value,
    kappa: kappa?.value ?? null,
    kappaReason: kappa
      ? kappa.value === null
        ? (kappa.reason ?? null)
        : null
      : "Cohen's κ needs exactly two reviewers",
    notesReviewedTwice,
    exclusionAgreed,
  };
}
