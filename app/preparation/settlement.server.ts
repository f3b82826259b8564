/**
 * Settling two reviewers' differences (docs/preparation.md, "Settling two reviews"), admins only: the project's notes
 * whose submitted reviews differ, a window at a time; one such note with every submitted review beside the others;
 * and the settlement, written with its audit event in one transaction after the reviews are checked again there.
 * Callers are behind the admin guard (docs/security.md, "Source text").
 */
import { and, asc, eq, gt, sql } from "drizzle-orm";
import { prepNotes, prepProjects, prepReviews, prepSettlements, users } from "../../db/schema";
import type { PrepProposal, PrepSection } from "../../db/vocabulary";
import { SECTION_TITLES, type SectionKind } from "../annotation/public";
import { recordEvent } from "../audit/audit.server";
import type { Db, DbOrTx } from "../platform/db.server";
import { ServiceError } from "../platform/service-error";
import { writeTransaction } from "../work-items/engine.server";
import { WORK_MESSAGES } from "../work-items/domain/work-item";
import { finalReviewOf } from "./final-review.server";
import { normaliseReview, reviewCounts, type MinimisationValues } from "./domain/review";
import { reviewerLetter, settledValues, type SettlementChoice } from "./domain/settlement";

export interface DifferingNoteRow {
  noteId: number;
  externalId: string;
  position: number;
  reviews: number;
}

/** How many candidate notes one step of the walk reads. */
const STEP = 200;

/**
 * One window of a project's notes waiting for a settlement, in file order after `after` (a note's position): the
 * walk reads notes with two or more submitted reviews and no settlement from the position index and keeps those whose
 * reviews differ (finalReviewOf), until it has `size + 1` of them.
 */
export function differingNotesWindow(
  db: DbOrTx,
  projectId: number,
  opts: { after?: number; size?: number } = {},
): { rows: DifferingNoteRow[]; nextAfter: number | null } {
  const size = opts.size ?? 50;
  const rows: DifferingNoteRow[] = [];
  let after = opts.after ?? -1;
  for (;;) {
    const candidates = db
      .select({ noteId: prepNotes.id, externalId: prepNotes.externalId, position: prepNotes.position })
      .from(prepNotes)
      .where(
        and(
          eq(prepNotes.projectId, projectId),
          gt(prepNotes.position, after),
          sql`not exists (select 1 from ${prepSettlements} where ${prepSettlements.noteId} = ${prepNotes.id})`,
          sql`(select count(*) from ${prepReviews} where ${prepReviews.noteId} = ${prepNotes.id} and ${prepReviews.status} = 'submitted') >= 2`,
        ),
      )
      .orderBy(asc(prepNotes.position))
      .limit(STEP)
      .all();
    for (const c of candidates) {
      const final = finalReviewOf(db, c.noteId);
      if (final.state === "differ") rows.push({ ...c, reviews: final.reviews });
      if (rows.length > size) return { rows: rows.slice(0, size), nextAfter: rows[size - 1]!.position };
    }
    if (candidates.length < STEP) return { rows, nextAfter: null };
    after = candidates[candidates.length - 1]!.position;
  }
}

/** How many of a project's notes wait for a settlement (the project page's count). */
export function countDifferingNotes(db: DbOrTx, projectId: number): number {
  let n = 0;
  let after: number | undefined;
  for (;;) {
    const w = differingNotesWindow(db, projectId, { after, size: 1000 });
    n += w.rows.length;
    if (w.nextAfter === null) return n;
    after = w.nextAfter;
  }
}

export interface SettlementReview {
  letter: string;
  username: string;
  values: MinimisationValues;
  version: number;
  submittedAt: number | null;
}

export interface SettlementView {
  note: {
    id: number;
    projectId: number;
    projectName: string;
    externalId: string;
    sections: PrepSection[];
    proposals: PrepProposal[];
  };
  sectionTitles: string[];
  reviews: SettlementReview[];
  /** "differ" while it waits; "settled" once settled (then `settled` holds it); "not differing" otherwise. */
  state: "differ" | "settled" | "not differing";
  settled: { values: MinimisationValues; by: string | null; at: number } | null;
}

function submittedReviews(db: DbOrTx, noteId: number, proposals: readonly PrepProposal[]) {
  return db
    .select({
      id: prepReviews.id,
      username: users.username,
      decisions: prepReviews.decisions,
      missed: prepReviews.missed,
      excluded: prepReviews.excluded,
      exclusionReason: prepReviews.exclusionReason,
      version: prepReviews.version,
      submittedAt: prepReviews.submittedAt,
    })
    .from(prepReviews)
    .innerJoin(users, eq(users.id, prepReviews.reviewerId))
    .where(and(eq(prepReviews.noteId, noteId), eq(prepReviews.status, "submitted")))
    .orderBy(asc(users.username))
    .all()
    .map((r, i) => ({
      id: r.id,
      letter: reviewerLetter(i),
      username: r.username,
      version: r.version,
      submittedAt: r.submittedAt,
      values: normaliseReview(
        { decisions: r.decisions, missed: r.missed, excluded: r.excluded, exclusionReason: r.exclusionReason },
        proposals,
      ),
    }));
}

/** A note of `projectId` with its submitted reviews side by side (admin); null when the project has no such note. */
export function getSettlementView(db: Db, projectId: number, noteId: number): SettlementView | null {
  const note = db
    .select({
      id: prepNotes.id,
      projectId: prepNotes.projectId,
      projectName: prepProjects.name,
      externalId: prepNotes.externalId,
      sections: prepNotes.sections,
      proposals: prepNotes.proposals,
    })
    .from(prepNotes)
    .innerJoin(prepProjects, eq(prepProjects.id, prepNotes.projectId))
    .where(and(eq(prepNotes.id, noteId), eq(prepNotes.projectId, projectId)))
    .get();
  if (!note) return null;
  const final = finalReviewOf(db, note.id);
  const settledRow =
    final.state === "final" && final.from === "settled"
      ? db
          .select({ by: users.username, at: prepSettlements.settledAt })
          .from(prepSettlements)
          .leftJoin(users, eq(users.id, prepSettlements.settledBy))
          .where(eq(prepSettlements.noteId, note.id))
          .get()
      : undefined;
  return {
    note,
    sectionTitles: note.sections.map((s) => SECTION_TITLES[s.kind as SectionKind] ?? s.kind),
    reviews: submittedReviews(db, note.id, note.proposals).map(({ id: _id, ...r }) => r),
    state: final.state === "differ" ? "differ" : settledRow ? "settled" : "not differing",
    settled:
      settledRow && final.state === "final" ? { values: final.values, by: settledRow.by, at: settledRow.at } : null,
  };
}

/**
 * Settles a note whose reviews differ: the admin's choice (`settledValues`) becomes the note's final review. In one
 * IMMEDIATE transaction: the note must still wait for a settlement, and each review must be at the version the page
 * showed (`seen`, by letter), or nothing is written (409); then the settlement and its audit event, which records
 * whose decision each proposal took and the decisions, never the note's words (edited texts, the marks' replacements
 * and the exclusion's reason are not copied; docs/security.md, "Source text").
 */
export function settleNote(
  db: Db,
  input: {
    projectId: number;
    noteId: number;
    choice: SettlementChoice;
    seen: number[];
    actorId: string;
    now?: number;
  },
): { values: MinimisationValues } {
  const now = input.now ?? Date.now();
  return writeTransaction(db, (tx) => {
    const note = tx
      .select({ id: prepNotes.id, sections: prepNotes.sections, proposals: prepNotes.proposals })
      .from(prepNotes)
      .where(and(eq(prepNotes.id, input.noteId), eq(prepNotes.projectId, input.projectId)))
      .get();
    if (!note) throw new ServiceError("No such note.", undefined, 404);
    const final = finalReviewOf(tx, note.id);
    if (final.state !== "differ")
      throw new ServiceError(
        final.state === "final" && final.from === "settled"
          ? "This note was settled already."
          : "This note's reviews do not differ (any more): there is nothing to settle.",
        undefined,
        409,
      );
    const reviews = submittedReviews(tx, note.id, note.proposals);
    if (reviews.length !== input.seen.length || reviews.some((r, i) => r.version !== input.seen[i]))
      throw new ServiceError(WORK_MESSAGES.changedElsewhere("review"), undefined, 409);
    const outcome = settledValues(
      note,
      reviews.map((r) => r.values),
      input.choice,
    );
    if (!outcome.ok) throw new ServiceError(outcome.message, Object.keys(outcome.errors)[0], 422);
    const v = outcome.values;
    tx.insert(prepSettlements)
      .values({
        noteId: note.id,
        decisions: v.decisions,
        missed: v.missed,
        excluded: v.excluded,
        exclusionReason: v.exclusionReason,
        settledBy: input.actorId,
        settledAt: now,
      })
      .run();
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "prep_settlement",
      entityId: note.id,
      action: "settle",
      changes: {
        projectId: input.projectId,
        noteId: note.id,
        reviewers: reviews.map((r) => `${r.letter}:${r.username}`),
        excludedFrom: reviewerLetter(input.choice.exclusion),
        excluded: v.excluded,
        missedFrom: v.excluded ? null : reviewerLetter(input.choice.missed),
        from: v.excluded
          ? {}
          : Object.fromEntries(note.proposals.map((p) => [p.id, reviewerLetter(input.choice.proposals[p.id]!)])),
        decisions: Object.fromEntries(Object.entries(v.decisions).map(([id, d]) => [id, d.action])),
        missed: v.missed.map((m) => `${m.category}:s${m.section}-${m.start}-${m.end}`),
        counts: reviewCounts(v),
      },
      at: now,
    });
    return { values: v };
  });
}
