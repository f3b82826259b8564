/**
 * The minimisation review (docs/preparation.md, "The review"), on the work-item engine: a reviewer named by a
 * project loads a note of it with the detectors' proposals and their own review, and saves drafts and submissions
 * (versions, audit in the same transaction, time on task). Every query here carries the reviewer's membership of
 * the note's project, so a note of a project that does not name the user answers "not found" (404), whatever their
 * roles (docs/security.md, "Source text").
 */
import { and, asc, eq } from "drizzle-orm";
import { prepNotes, prepProjects, prepReviewers, prepReviews } from "../../db/schema";
import type { PrepProposal, PrepSection } from "../../db/vocabulary";
import type { Db, DbOrTx } from "../platform/db.server";
import { SECTION_TITLES, type SectionKind } from "../annotation/public";
import {
  nextOpenItem,
  previousItem,
  progressOf,
  type SaveResult,
  type WorkState,
} from "../work-items/domain/work-item";
import { saveWorkItem, updateAtVersion, type WorkItemAdapter } from "../work-items/engine.server";
import {
  checkReview,
  EMPTY_REVIEW,
  normaliseReview,
  reviewCounts,
  MinimisationValuesSchema,
  type MinimisationValues,
} from "./domain/review";

export { MinimisationValuesSchema };

interface OwnedNote {
  id: number;
  projectId: number;
  projectName: string;
  sourceLanguage: string;
  externalId: string;
  sections: PrepSection[];
  proposals: PrepProposal[];
}

/** The note if a project naming `userId` holds it; the membership is part of the query. */
function findOwnedNote(db: DbOrTx, userId: string, noteId: number): OwnedNote | undefined {
  return db
    .select({
      id: prepNotes.id,
      projectId: prepNotes.projectId,
      projectName: prepProjects.name,
      sourceLanguage: prepProjects.sourceLanguage,
      externalId: prepNotes.externalId,
      sections: prepNotes.sections,
      proposals: prepNotes.proposals,
    })
    .from(prepNotes)
    .innerJoin(prepProjects, eq(prepProjects.id, prepNotes.projectId))
    .innerJoin(prepReviewers, and(eq(prepReviewers.projectId, prepNotes.projectId), eq(prepReviewers.userId, userId)))
    .where(eq(prepNotes.id, noteId))
    .get();
}

type ReviewRow = typeof prepReviews.$inferSelect;

const ownRow = (db: DbOrTx, userId: string, noteId: number) =>
  db
    .select()
    .from(prepReviews)
    .where(and(eq(prepReviews.noteId, noteId), eq(prepReviews.reviewerId, userId)))
    .get();

const valuesOf = (row: ReviewRow | undefined): MinimisationValues =>
  row
    ? {
        decisions: row.decisions,
        missed: row.missed,
        excluded: row.excluded,
        exclusionReason: row.exclusionReason,
      }
    : EMPTY_REVIEW;

export interface ReviewerNoteRow {
  noteId: number;
  projectName: string;
  externalId: string;
  proposals: number;
  state: WorkState;
  excluded: boolean;
  updatedAt: number | null;
}

/** The notes of every project naming the reviewer, in project and file order, with their own state. */
export function listReviewerNotes(db: DbOrTx, userId: string): ReviewerNoteRow[] {
  return db
    .select({
      noteId: prepNotes.id,
      projectName: prepProjects.name,
      externalId: prepNotes.externalId,
      proposals: prepNotes.proposals,
      status: prepReviews.status,
      excluded: prepReviews.excluded,
      updatedAt: prepReviews.updatedAt,
    })
    .from(prepNotes)
    .innerJoin(prepProjects, eq(prepProjects.id, prepNotes.projectId))
    .innerJoin(prepReviewers, and(eq(prepReviewers.projectId, prepNotes.projectId), eq(prepReviewers.userId, userId)))
    .leftJoin(prepReviews, and(eq(prepReviews.noteId, prepNotes.id), eq(prepReviews.reviewerId, userId)))
    .orderBy(asc(prepProjects.name), asc(prepNotes.position))
    .all()
    .map((r) => ({
      noteId: r.noteId,
      projectName: r.projectName,
      externalId: r.externalId,
      proposals: r.proposals.length,
      state: (r.status ?? "not_started") as WorkState,
      excluded: r.excluded ?? false,
      updatedAt: r.updatedAt ?? null,
    }));
}

export interface ReviewNoteView {
  note: OwnedNote;
  /** Each section's title, by its kind. */
  sectionTitles: string[];
  state: WorkState;
  values: MinimisationValues;
  version: number;
  updatedAt: number | null;
  nextNoteId: number | null;
  previousNoteId: number | null;
  progress: { done: number; total: number };
}

/** One note with the reviewer's own review; null when no project naming them holds it. */
export function getReviewNote(db: Db, input: { userId: string; noteId: number }): ReviewNoteView | null {
  const note = findOwnedNote(db, input.userId, input.noteId);
  if (!note) return null;
  const row = ownRow(db, input.userId, note.id);
  const mine = listReviewerNotes(db, input.userId).filter((r) => r.projectName === note.projectName);
  const at = mine.findIndex((r) => r.noteId === note.id);
  return {
    note,
    sectionTitles: note.sections.map((s) => SECTION_TITLES[s.kind as SectionKind] ?? s.kind),
    state: (row?.status ?? "not_started") as WorkState,
    values: valuesOf(row),
    version: row?.version ?? 0,
    updatedAt: row?.updatedAt ?? null,
    nextNoteId: nextOpenItem(mine, at)?.noteId ?? null,
    previousNoteId: previousItem(mine, at)?.noteId ?? null,
    progress: progressOf(mine),
  };
}

/** The minimisation review's adapter of the work-item engine (docs/architecture.md, "The work-item engine"). */
const minimisationWork: WorkItemAdapter<OwnedNote, ReviewRow, MinimisationValues> = {
  entity: "prep_review",
  noun: "review",
  find: (tx, userId, noteId) => findOwnedNote(tx, userId, noteId),
  row: (tx, userId, note) => ownRow(tx, userId, note.id),
  meta: (r) => ({ id: r.id, state: r.status, version: r.version, savedAt: r.updatedAt }),
  valuesOf: (row) => valuesOf(row),
  normalise: (v, note) => normaliseReview(v, note.proposals),
  check(_tx, note, values) {
    const errors = checkReview(values, note);
    if (!Object.keys(errors).length) return { ok: true, values };
    return {
      ok: false,
      message: values.excluded
        ? "Say why the case is excluded."
        : "Decide on every proposal (accept, edit or reject) before submitting.",
      errors,
    };
  },
  // The audit keeps each proposal's decision and the spans' places, never the note's words: an edit's text and the
  // exclusion's reason are recorded as changed (docs/security.md, "Source text").
  audited: (v) => ({
    decisions: Object.fromEntries(Object.entries(v.decisions).map(([id, d]) => [id, d.action])),
    edits: Object.fromEntries(
      Object.entries(v.decisions).flatMap(([id, d]) => (d.action === "edit" ? [[id, d.text ?? ""]] : [])),
    ),
    missed: v.missed.map((m) => `${m.category}:s${m.section}-${m.start}-${m.end}`),
    missedReplacements: v.missed.map((m) => m.replacement),
    excluded: v.excluded,
    exclusionReason: v.exclusionReason,
    counts: reviewCounts(v),
  }),
  freeText: ["edits", "missedReplacements", "exclusionReason"],
  auditContext: (note) => ({ detail: { projectId: note.projectId, noteId: note.id } }),
  write(tx, { item: note, row, userId, values, status, version, now }) {
    const columns = {
      decisions: values.decisions,
      missed: values.missed,
      excluded: values.excluded,
      exclusionReason: values.exclusionReason,
      status,
      updatedAt: now,
      version,
      submittedAt: status === "submitted" ? now : (row?.submittedAt ?? null),
    };
    if (!row)
      return tx
        .insert(prepReviews)
        .values({ noteId: note.id, reviewerId: userId, ...columns })
        .returning({ id: prepReviews.id })
        .get().id;
    return updateAtVersion(tx, prepReviews, row.id, row.version, columns) ? row.id : null;
  },
};

export type MinimisationSaveResult = SaveResult;

/**
 * Saves a reviewer's review of a note: a draft, or a submission (every proposal decided, or the case excluded with a
 * reason), which may be revised later. Stale versions are refused (409) and every change is audited in the same
 * IMMEDIATE transaction.
 */
export function saveMinimisationReview(
  db: Db,
  input: {
    userId: string;
    noteId: number;
    values: MinimisationValues;
    version: number;
    intent: "draft" | "submit";
    now?: number;
    activeMs?: number;
  },
): MinimisationSaveResult {
  const { noteId, ...rest } = input;
  return saveWorkItem(db, minimisationWork, { ...rest, itemId: noteId });
}
