/**
 * The reviewer's side of a screening round (docs/screening.md, "Review"): their rounds' items in the one shared order, the item's text,
 * their own vote (drafts, atomic submission, revision while the round is open). Blinding is this module's
 * projections: every query selects its columns explicitly and never reads control status, strata, screen labels,
 * recall tiers, the imported record (rubrics) or another reviewer's vote. Ownership is part of every query, so an
 * item of a round the user does not review is simply not found.
 */
import { and, asc, count, eq, sql } from "drizzle-orm";
import { screeningReviewers, screeningRoundItems, screeningRounds, screeningVotes } from "../../db/schema";
import { visibleScreeningItems, visibleScreeningStudies } from "../../db/schema-visible";
import { checkVote, EMPTY_VOTE, type VoteValues } from "./domain/screening";
import type { Message } from "./domain/screening-import";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import {
  nextOpenItem,
  progressOf,
  WORK_MESSAGES,
  type SaveResult,
  type WorkState,
} from "../work-items/domain/work-item";
import { saveWorkItem, updateAtVersion, type WorkItemAdapter } from "../work-items/engine.server";
import { listRoundRows, loadRound, reviewerCodes } from "./screening.server";

export type VoteState = WorkState;

// The vote's values: one schema for the page and the server (app/screening/domain/vote-values.ts).
export { VoteValuesSchema } from "./domain/vote-values";

export interface ReviewRow {
  entryId: number;
  studyName: string;
  round: number;
  position: number;
  preview: string;
  state: VoteState;
  updatedAt: number | null;
}

const PREVIEW_CHARS = 140;

/** The first message's opening words, from the head of the stored content (never the whole conversation). */
export function previewOf(kind: string, head: string): string {
  let text = head;
  if (kind === "conversation") {
    const m = /"content":"((?:[^"\\]|\\.)*)/.exec(head);
    text = "";
    if (m) {
      try {
        text = JSON.parse(`"${m[1]!.replace(/\\$/, "")}"`) as string;
      } catch {
        text = m[1]!;
      }
    }
  }
  text = text.replace(/\s+/g, " ").trim();
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}

/** The user's items in open rounds, by study, round and shared position. */
export function listReviewerEntries(db: Db, userId: string): ReviewRow[] {
  return db
    .select({
      entryId: screeningRoundItems.id,
      studyName: visibleScreeningStudies.name,
      round: screeningRounds.number,
      position: screeningRoundItems.position,
      kind: visibleScreeningItems.kind,
      head: sql<string>`substr(${visibleScreeningItems.content}, 1, 1200)`,
      status: screeningVotes.status,
      updatedAt: screeningVotes.updatedAt,
    })
    .from(screeningReviewers)
    .innerJoin(screeningRounds, eq(screeningRounds.id, screeningReviewers.roundId))
    .innerJoin(visibleScreeningStudies, eq(visibleScreeningStudies.id, screeningRounds.studyId))
    .innerJoin(screeningRoundItems, eq(screeningRoundItems.roundId, screeningRounds.id))
    .innerJoin(visibleScreeningItems, eq(visibleScreeningItems.id, screeningRoundItems.itemId))
    .leftJoin(
      screeningVotes,
      and(eq(screeningVotes.roundItemId, screeningRoundItems.id), eq(screeningVotes.reviewerId, userId)),
    )
    .where(and(eq(screeningReviewers.reviewerId, userId), eq(screeningRounds.status, "open")))
    .orderBy(asc(visibleScreeningStudies.name), asc(screeningRounds.number), asc(screeningRoundItems.position))
    .all()
    .map((r) => ({
      entryId: r.entryId,
      studyName: r.studyName,
      round: r.round,
      position: r.position,
      preview: previewOf(r.kind, r.head),
      state: (r.status ?? "not_started") as VoteState,
      updatedAt: r.updatedAt,
    }));
}

/** Rounds the user reviewed that have closed (shown as finished, without their items). */
export function listClosedReviewerRounds(
  db: Db,
  userId: string,
): { studyName: string; round: number; closedAt: number | null }[] {
  return db
    .select({
      studyName: visibleScreeningStudies.name,
      round: screeningRounds.number,
      closedAt: screeningRounds.closedAt,
    })
    .from(screeningReviewers)
    .innerJoin(screeningRounds, eq(screeningRounds.id, screeningReviewers.roundId))
    .innerJoin(visibleScreeningStudies, eq(visibleScreeningStudies.id, screeningRounds.studyId))
    .where(and(eq(screeningReviewers.reviewerId, userId), eq(screeningRounds.status, "closed")))
    .orderBy(asc(visibleScreeningStudies.name), asc(screeningRounds.number))
    .all();
}

/** The next item to review after `afterEntryId`: the first not submitted, in the shared order, wrapping around. */
export function nextEntryId(rows: { entryId: number; state: VoteState }[], afterEntryId: number | null): number | null {
  const at = afterEntryId === null ? -1 : rows.findIndex((r) => r.entryId === afterEntryId);
  return nextOpenItem(rows, at)?.entryId ?? null;
}

/** The round item, if the user reviews its round. Explicit columns: nothing about controls, labels or sources. */
function findEntry(db: DbOrTx, userId: string, entryId: number) {
  return db
    .select({
      entryId: screeningRoundItems.id,
      roundId: screeningRoundItems.roundId,
      position: screeningRoundItems.position,
      roundNumber: screeningRounds.number,
      roundStatus: screeningRounds.status,
      studyId: screeningRounds.studyId,
    })
    .from(screeningRoundItems)
    .innerJoin(screeningRounds, eq(screeningRounds.id, screeningRoundItems.roundId))
    .innerJoin(
      screeningReviewers,
      and(eq(screeningReviewers.roundId, screeningRoundItems.roundId), eq(screeningReviewers.reviewerId, userId)),
    )
    .where(eq(screeningRoundItems.id, entryId))
    .get();
}

function myVote(db: DbOrTx, userId: string, entryId: number) {
  return db
    .select({
      id: screeningVotes.id,
      status: screeningVotes.status,
      relevant: screeningVotes.relevant,
      category: screeningVotes.category,
      confidence: screeningVotes.confidence,
      notes: screeningVotes.notes,
      version: screeningVotes.version,
      updatedAt: screeningVotes.updatedAt,
    })
    .from(screeningVotes)
    .where(and(eq(screeningVotes.roundItemId, entryId), eq(screeningVotes.reviewerId, userId)))
    .get();
}

type VoteRow = NonNullable<ReturnType<typeof myVote>>;

function valuesOf(row: VoteRow | undefined): VoteValues {
  if (!row) return EMPTY_VOTE;
  return {
    relevant: row.relevant === null ? "" : row.relevant ? "yes" : "no",
    category: row.category ?? "",
    confidence: row.confidence ?? "",
    notes: row.notes,
  };
}

export interface ReviewEntryView {
  entry: {
    id: number;
    position: number;
    total: number;
    studyName: string;
    inclusionCriterion: string;
    round: number;
    roundOpen: boolean;
    kind: "conversation" | "text";
    messages: Message[];
  };
  categories: string[];
  state: VoteState;
  values: VoteValues;
  version: number;
  updatedAt: number | null;
  nextEntryId: number | null;
  previousEntryId: number | null;
  progress: { done: number; total: number };
}

/** One item of the user's round with their own vote; null when they do not review its round. */
export function getReviewEntry(db: Db, input: { userId: string; entryId: number }): ReviewEntryView | null {
  const e = findEntry(db, input.userId, input.entryId);
  if (!e) return null;
  const item = db
    .select({ kind: visibleScreeningItems.kind, content: visibleScreeningItems.content })
    .from(screeningRoundItems)
    .innerJoin(visibleScreeningItems, eq(visibleScreeningItems.id, screeningRoundItems.itemId))
    .where(eq(screeningRoundItems.id, e.entryId))
    .get()!;
  const study = db
    .select({
      name: visibleScreeningStudies.name,
      categories: visibleScreeningStudies.categories,
      criterion: visibleScreeningStudies.inclusionCriterion,
    })
    .from(visibleScreeningStudies)
    .where(eq(visibleScreeningStudies.id, e.studyId))
    .get()!;
  const entries = db
    .select({ entryId: screeningRoundItems.id, status: screeningVotes.status })
    .from(screeningRoundItems)
    .leftJoin(
      screeningVotes,
      and(eq(screeningVotes.roundItemId, screeningRoundItems.id), eq(screeningVotes.reviewerId, input.userId)),
    )
    .where(eq(screeningRoundItems.roundId, e.roundId))
    .orderBy(asc(screeningRoundItems.position))
    .all()
    .map((r) => ({ entryId: r.entryId, state: (r.status ?? "not_started") as VoteState }));
  const at = entries.findIndex((r) => r.entryId === e.entryId);
  const vote = myVote(db, input.userId, e.entryId);
  const open = e.roundStatus === "open";
  return {
    entry: {
      id: e.entryId,
      position: e.position,
      total: entries.length,
      studyName: study.name,
      /** What belongs to the subset: the question a reviewer answers (docs/screening.md#review). */
      inclusionCriterion: study.criterion,
      round: e.roundNumber,
      roundOpen: open,
      kind: item.kind,
      messages:
        item.kind === "text" ? [{ role: "text", content: item.content }] : (JSON.parse(item.content) as Message[]),
    },
    categories: study.categories as string[],
    state: (vote?.status ?? "not_started") as VoteState,
    values: valuesOf(vote),
    version: vote?.version ?? 0,
    updatedAt: vote?.updatedAt ?? null,
    nextEntryId: open ? nextEntryId(entries, e.entryId) : null,
    previousEntryId: at > 0 ? entries[at - 1]!.entryId : null,
    progress: progressOf(entries),
  };
}

export type VoteResult = SaveResult<{ roundClosed: boolean }>;

const CLOSED = "This round has closed: every vote is in, so votes can no longer change.";

type Entry = NonNullable<ReturnType<typeof findEntry>>;

function columnsOf(v: VoteValues) {
  return {
    relevant: v.relevant === "" ? null : v.relevant === "yes",
    category: v.relevant === "no" ? null : v.category || null,
    confidence: v.confidence || null,
    notes: v.notes,
  };
}

/** The screening workspace's adapter of the work-item engine (docs/architecture.md, "The work-item engine"). */
const voteWork: WorkItemAdapter<Entry, VoteRow, VoteValues, { roundClosed: boolean }> = {
  entity: "screening_vote",
  noun: "vote",
  find: findEntry,
  guidelines: (e) => ({ scope: "screening", scopeId: e.studyId }),
  closed: (e) => (e.roundStatus === "open" ? null : CLOSED),
  row: (tx, userId, e) => myVote(tx, userId, e.entryId),
  meta: (r) => ({ id: r.id, state: r.status, version: r.version, savedAt: r.updatedAt }),
  valuesOf: (row) => valuesOf(row),
  // A vote of "not relevant" has no category.
  normalise: (v) => (v.relevant === "no" ? { ...v, category: "" } : v),
  check(tx, e, values) {
    const study = tx
      .select({ categories: visibleScreeningStudies.categories })
      .from(visibleScreeningStudies)
      .where(eq(visibleScreeningStudies.id, e.studyId))
      .get()!;
    const problems = checkVote(values, study.categories as string[]);
    if (Object.keys(problems).length)
      return { ok: false, message: WORK_MESSAGES.incomplete("vote"), errors: problems as Record<string, string> };
    return { ok: true, values };
  },
  audited: (v) => columnsOf(v),
  freeText: ["notes"],
  write(tx, { item: e, row, userId, values, status, version, now }) {
    const cols = {
      ...columnsOf(values),
      status,
      updatedAt: now,
      version,
      ...(status === "submitted" ? { submittedAt: now } : {}),
    };
    if (!row) {
      tx.insert(screeningVotes)
        .values({ roundItemId: e.entryId, roundId: e.roundId, reviewerId: userId, ...cols })
        .run();
      return e.entryId;
    }
    return updateAtVersion(tx, screeningVotes, row.id, row.version, cols) ? e.entryId : null;
  },
  auditContext: (e, _row, _id, userId) => ({ entityId: `${e.entryId}:${userId}`, detail: { roundId: e.roundId } }),
  onSubmitted: (tx, e, now) => ({ roundClosed: closeIfComplete(tx, e.roundId, e.studyId, now) }),
  noExtra: { roundClosed: false },
};

/**
 * Saves a draft. `version` is the version the page read (0 before the first save); a stale one is refused with 409.
 * A submitted vote is revised by submitting again, not by drafts.
 */
export function saveVoteDraft(
  db: Db,
  input: { userId: string; entryId: number; values: VoteValues; version: number; now?: number; activeMs?: number },
): VoteResult {
  return saveWorkItem(db, voteWork, { ...input, itemId: input.entryId, intent: "draft" });
}

/**
 * Submits (or revises) a vote atomically. When it is the round's last missing vote, the round closes in the same
 * IMMEDIATE transaction (so two reviewers finishing at once close it exactly once) and its figures are audited.
 */
export function submitVote(
  db: Db,
  input: { userId: string; entryId: number; values: VoteValues; version: number; now?: number; activeMs?: number },
): VoteResult {
  return saveWorkItem(db, voteWork, { ...input, itemId: input.entryId, intent: "submit" });
}

/** Closes the round once every reviewer has submitted every item; returns true when it closed it. */
function closeIfComplete(tx: DbOrTx, roundId: number, studyId: number, now: number): boolean {
  const items = tx
    .select({ n: count() })
    .from(screeningRoundItems)
    .where(eq(screeningRoundItems.roundId, roundId))
    .get()!.n;
  const reviewers = tx
    .select({ n: count() })
    .from(screeningReviewers)
    .where(eq(screeningReviewers.roundId, roundId))
    .get()!.n;
  const submitted = tx
    .select({ n: count() })
    .from(screeningVotes)
    .where(and(eq(screeningVotes.roundId, roundId), eq(screeningVotes.status, "submitted")))
    .get()!.n;
  if (submitted < items * reviewers) return false;
  tx.update(screeningRounds).set({ status: "closed", closedAt: now }).where(eq(screeningRounds.id, roundId)).run();
  const row = listRoundRows(tx, studyId).find((r) => r.id === roundId)!;
  const { figures } = loadRound(tx, row, reviewerCodes(tx, studyId));
  recordEvent(tx, {
    actorId: null,
    entity: "screening_round",
    entityId: roundId,
    action: "close",
    changes: {
      studyId,
      number: row.number,
      included: figures.included,
      includedControls: figures.includedControls,
      controls: figures.controls,
      controlInclusionRate: figures.controlInclusionRate,
      decision: figures.decision,
      relevanceAc1: figures.relevanceAc1.value,
    },
    at: now,
  });
  return true;
}
