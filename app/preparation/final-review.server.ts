/**
 * A note's final minimisation (docs/preparation.md, "The final text"): the one review that the translation, the
 * release and the export start from. It is the admin's settlement when there is one; otherwise the submitted
 * reviews when they all say the same (one reviewer, or two who agree) and no named reviewer still holds a draft of
 * the note. Two submitted reviews that differ leave the note waiting for a settlement.
 */
import { asc, eq } from "drizzle-orm";
import { prepNotes, prepReviews, prepSettlements } from "../../db/schema";
import type { PrepSection } from "../../db/vocabulary";
import type { DbOrTx } from "../platform/db.server";
import { minimisedSections, normaliseReview, type MinimisationValues } from "./domain/review";

export type FinalReview =
  | { state: "final"; values: MinimisationValues; from: "review" | "agreed" | "settled" }
  /** No submitted review yet, or a named reviewer still holds a draft. */
  | { state: "pending" }
  /** Two or more submitted reviews differ: an admin settles them. */
  | { state: "differ"; reviews: number };

/** Two reviews say the same: the same decisions, marks and exclusion (the exclusion's wording may differ). */
function sameReview(a: MinimisationValues, b: MinimisationValues): boolean {
  if (a.excluded || b.excluded) return a.excluded === b.excluded;
  return JSON.stringify([a.decisions, a.missed]) === JSON.stringify([b.decisions, b.missed]);
}

/** Canonical JSON of decisions: keys in order, so two equal reviews compare equal as text. */
function canonical(values: MinimisationValues): MinimisationValues {
  const decisions: MinimisationValues["decisions"] = {};
  for (const id of Object.keys(values.decisions).sort()) decisions[id] = values.decisions[id]!;
  return { ...values, decisions };
}

type SettlementRow = typeof prepSettlements.$inferSelect;
type ReviewRow = typeof prepReviews.$inferSelect;

/** The final review from a note's settlement (if any) and its review rows: the rule above, without queries. */
function decide(
  proposals: (typeof prepNotes.$inferSelect)["proposals"],
  settled: SettlementRow | undefined,
  rows: readonly ReviewRow[],
): FinalReview {
  if (settled)
    return {
      state: "final",
      from: "settled",
      values: {
        decisions: settled.decisions,
        missed: settled.missed,
        excluded: settled.excluded,
        exclusionReason: settled.exclusionReason,
      },
    };
  if (rows.some((r) => r.status !== "submitted")) return { state: "pending" };
  const submitted = rows.map((r) =>
    canonical(
      normaliseReview(
        { decisions: r.decisions, missed: r.missed, excluded: r.excluded, exclusionReason: r.exclusionReason },
        proposals,
      ),
    ),
  );
  if (submitted.length === 0) return { state: "pending" };
  const first = submitted[0]!;
  if (!submitted.every((s) => sameReview(first, s))) return { state: "differ", reviews: submitted.length };
  return { state: "final", from: submitted.length === 1 ? "review" : "agreed", values: first };
}

export function finalReviewOf(db: DbOrTx, noteId: number): FinalReview {
  const settled = db.select().from(prepSettlements).where(eq(prepSettlements.noteId, noteId)).get();
  if (settled) return decide([], settled, []);
  const note = db.select({ proposals: prepNotes.proposals }).from(prepNotes).where(eq(prepNotes.id, noteId)).get();
  if (!note) return { state: "pending" };
  const rows = db.select().from(prepReviews).where(eq(prepReviews.noteId, noteId)).all();
  return decide(note.proposals, undefined, rows);
}

/**
 * The note's sections after its final review: null when the case is excluded, "not final" while the review is
 * pending or differs.
 */
export function finalSections(db: DbOrTx, noteId: number): PrepSection[] | null | "not final" {
  const final = finalReviewOf(db, noteId);
  if (final.state !== "final") return "not final";
  const note = db
    .select({ sections: prepNotes.sections, proposals: prepNotes.proposals })
    .from(prepNotes)
    .where(eq(prepNotes.id, noteId))
    .get();
  if (!note) return "not final";
  return minimisedSections(note, final.values);
}

/**
 * `finalSections` of every note of a project, in the notes' order, read in three queries rather than four a note
 * (the translation reads a whole project at once: docs/preparation.md, "Translation").
 */
export function projectFinalSections(
  db: DbOrTx,
  projectId: number,
): { noteId: number; sections: PrepSection[] | null | "not final" }[] {
  const notes = db
    .select({ id: prepNotes.id, sections: prepNotes.sections, proposals: prepNotes.proposals })
    .from(prepNotes)
    .where(eq(prepNotes.projectId, projectId))
    .orderBy(asc(prepNotes.position))
    .all();
  const settlements = new Map(
    db
      .select({ s: prepSettlements })
      .from(prepSettlements)
      .innerJoin(prepNotes, eq(prepNotes.id, prepSettlements.noteId))
      .where(eq(prepNotes.projectId, projectId))
      .all()
      .map(({ s }) => [s.noteId, s]),
  );
  const reviews = new Map<number, ReviewRow[]>();
  for (const { r } of db
    .select({ r: prepReviews })
    .from(prepReviews)
    .innerJoin(prepNotes, eq(prepNotes.id, prepReviews.noteId))
    .where(eq(prepNotes.projectId, projectId))
    .orderBy(asc(prepReviews.id))
    .all()) {
    const list = reviews.get(r.noteId);
    if (list) list.push(r);
    else reviews.set(r.noteId, [r]);
  }
  return notes.map((n) => {
    const final = decide(n.proposals, settlements.get(n.id), reviews.get(n.id) ?? []);
    return { noteId: n.id, sections: final.state === "final" ? minimisedSections(n, final.values) : "not final" };
  });
}
