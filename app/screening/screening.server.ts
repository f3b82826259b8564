/**
 * Screening review studies (docs/screening.md): the study and its settings, and the figures of its rounds computed from the
 * submitted votes with the pure core (app/screening/domain/screening.ts). Admin-side only: everything here may read screen
 * labels and control status. The reviewer's side is screening-review.server.ts.
 */
import { and, asc, count, eq, sql } from "drizzle-orm";
import { z } from "zod";
import {
  screeningReviewers,
  screeningRoundItems,
  screeningRounds,
  screeningStudies,
  screeningVotes,
  users,
} from "../../db/schema";
import {
  visibleScreeningItems,
  visibleScreeningLabels,
  visibleScreeningRecallTiers,
  visibleScreeningStudies,
} from "../../db/schema-visible";
import {
  checkRule,
  nextStep,
  summariseRound,
  type NextStep,
  type ReviewConfidence,
  type RoundFigures,
} from "./domain/screening";
import { compareCodePoints } from "../python-compat/text";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { writeTransaction } from "../work-items/engine.server";
import { StudyNameSchema } from "../annotation/public.server";
import { ServiceError } from "../platform/service-error";

export const ScreeningSettingsSchema = z
  .object({
    description: z.string().trim().max(2000, "The description has at most 2,000 characters.").default(""),
    /** What belongs to the subset, shown to every reviewer (docs/screening.md#review). */
    inclusionCriterion: z
      .string()
      .trim()
      .max(4000, "The inclusion criterion has at most 4,000 characters.")
      .default(""),
    categories: z
      .array(z.string().trim().min(1).max(100, "A category has at most 100 characters."))
      .min(1, "Give at least one category.")
      .max(100, "At most 100 categories."),
    reviewersPerRound: z.coerce.number({ message: "Reviewers per round must be a whole number." }).int().min(2).max(20),
    inclusionVotes: z.coerce
      .number({ message: "The inclusion threshold must be a whole number." })
      .int()
      .min(1)
      .max(20),
    controlThreshold: z.coerce
      .number({ message: "The control-inclusion threshold must be a number such as 0.05." })
      .min(0)
      .max(0.99),
    controlsPerRound: z.coerce
      .number({ message: "Controls per round must be a whole number." })
      .int()
      .min(1)
      .max(100_000),
  })
  .superRefine((s, ctx) => {
    for (const [path, message] of Object.entries(checkRule(s)))
      ctx.addIssue({ code: "custom", path: [path], message: capitalise(message!) });
  });
/** The settings; the inclusion criterion may be left out (empty) by callers that predate it. */
export type ScreeningSettings = Omit<z.infer<typeof ScreeningSettingsSchema>, "inclusionCriterion"> & {
  inclusionCriterion?: string;
};

export const NewScreeningStudySchema = z.intersection(z.object({ name: StudyNameSchema }), ScreeningSettingsSchema);

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export interface ScreeningStudy {
  id: number;
  name: string;
  description: string;
  inclusionCriterion: string;
  categories: string[];
  reviewersPerRound: number;
  inclusionVotes: number;
  controlThreshold: number;
  controlsPerRound: number;
  createdAt: number;
}

function toStudy(row: typeof screeningStudies.$inferSelect): ScreeningStudy {
  return { ...row, categories: row.categories as string[] };
}

export function getScreeningStudy(db: DbOrTx, id: number): ScreeningStudy | null {
  const row = db.select().from(visibleScreeningStudies).where(eq(visibleScreeningStudies.id, id)).get();
  return row ? toStudy(row) : null;
}

export function requireScreeningStudyByName(db: Db, name: string): ScreeningStudy {
  const row = db.select().from(visibleScreeningStudies).where(eq(visibleScreeningStudies.name, name.trim())).get();
  if (row) return toStudy(row);
  const known = db
    .select({ name: visibleScreeningStudies.name })
    .from(visibleScreeningStudies)
    .orderBy(asc(visibleScreeningStudies.name))
    .all();
  throw new ServiceError(
    `No screening study named "${name}".${
      known.length ? ` Known screening studies: ${known.map((k) => `"${k.name}"`).join(", ")}.` : " There are none yet."
    }`,
    "study",
    404,
  );
}

export function createScreeningStudy(
  db: Db,
  input: { name: string; settings: ScreeningSettings; actorId: string | null; now?: number },
): ScreeningStudy {
  const now = input.now ?? Date.now();
  return db.transaction(
    (tx) => {
      const study = insertScreeningStudy(tx, input, now, null);
      recordStudyCreated(tx, study.id, input, now);
      return study;
    },
    { behavior: "immediate" },
  );
}

/**
 * Inserts a study, hidden from every reader while `importRun` is set (docs/reliability.md, "Bulk imports"); refused
 * when the name is taken, by a visible study or by one an import is still writing.
 */
export function insertScreeningStudy(
  tx: DbOrTx,
  input: { name: string; settings: ScreeningSettings },
  now: number,
  importRun: string | null,
): ScreeningStudy {
  const taken = tx
    .select({ importRun: screeningStudies.importRun })
    // eslint-disable-next-line concord/visible-rows -- a name taken by a study an import is still writing counts
    .from(screeningStudies)
    .where(eq(screeningStudies.name, input.name))
    .get();
  if (taken)
    throw new ServiceError(
      taken.importRun
        ? `Another import is still writing the new screening study "${input.name}". Wait for it to finish, then import again.`
        : `A screening study named "${input.name}" already exists.`,
      "name",
      409,
    );
  const { categories, ...rest } = input.settings;
  const row = tx
    .insert(screeningStudies)
    .values({ name: input.name, ...rest, categories, createdAt: now, importRun })
    .returning()
    .get();
  return toStudy(row);
}

/** The audit event of a study's creation, in the transaction that makes it visible. */
export function recordStudyCreated(
  tx: DbOrTx,
  studyId: number,
  input: { name: string; settings: ScreeningSettings; actorId: string | null },
  now: number,
): void {
  recordEvent(tx, {
    actorId: input.actorId,
    entity: "screening_study",
    entityId: studyId,
    action: "create",
    changes: { name: input.name, ...input.settings },
    at: now,
  });
}

/** Changes the settings; refused once a round has opened (every round's decision must follow one rule). */
export function updateScreeningSettings(
  db: Db,
  input: { studyId: number; settings: ScreeningSettings; actorId: string | null },
): void {
  db.transaction(
    (tx) => {
      const before = getScreeningStudy(tx, input.studyId);
      if (!before) throw new ServiceError("No such screening study.", undefined, 404);
      if (
        tx
          .select({ id: screeningRounds.id })
          .from(screeningRounds)
          .where(eq(screeningRounds.studyId, input.studyId))
          .get()
      )
        throw new ServiceError("The settings are fixed once round 1 has opened.", undefined, 409);
      const { categories, ...rest } = input.settings;
      tx.update(screeningStudies)
        .set({ ...rest, categories })
        .where(eq(screeningStudies.id, input.studyId))
        .run();
      const changes: Record<string, [unknown, unknown]> = {};
      for (const [k, v] of Object.entries(input.settings)) {
        const old = before[k as keyof ScreeningStudy];
        if (JSON.stringify(old) !== JSON.stringify(v)) changes[k] = [old, v];
      }
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "screening_study",
        entityId: input.studyId,
        action: "settings",
        changes,
      });
    },
    { behavior: "immediate" },
  );
}

/** Sets a screening study's inclusion criterion (shown to every reviewer; docs/screening.md#review). */
export function setInclusionCriterion(db: Db, input: { studyId: number; criterion: string; actorId: string }): boolean {
  return writeTransaction(db, (tx) => {
    const before = tx
      .select({ c: visibleScreeningStudies.inclusionCriterion })
      .from(visibleScreeningStudies)
      .where(eq(visibleScreeningStudies.id, input.studyId))
      .get();
    if (!before) return false;
    if (before.c === input.criterion) return true;
    tx.update(screeningStudies)
      .set({ inclusionCriterion: input.criterion })
      .where(eq(screeningStudies.id, input.studyId))
      .run();
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "screening_study",
      entityId: input.studyId,
      action: "criterion",
      changes: { inclusionCriterion: [before.c, input.criterion] },
    });
    return true;
  });
}

export interface RoundRow {
  id: number;
  number: number;
  seed: number;
  status: "open" | "closed";
  reviewersPerRound: number;
  inclusionVotes: number;
  controlThreshold: number;
  openedAt: number;
  closedAt: number | null;
}

export function listRoundRows(db: DbOrTx, studyId: number): RoundRow[] {
  return db
    .select({
      id: screeningRounds.id,
      number: screeningRounds.number,
      seed: screeningRounds.seed,
      status: screeningRounds.status,
      reviewersPerRound: screeningRounds.reviewersPerRound,
      inclusionVotes: screeningRounds.inclusionVotes,
      controlThreshold: screeningRounds.controlThreshold,
      openedAt: screeningRounds.openedAt,
      closedAt: screeningRounds.closedAt,
    })
    .from(screeningRounds)
    .where(eq(screeningRounds.studyId, studyId))
    .orderBy(asc(screeningRounds.number))
    .all();
}

export interface RoundReviewer {
  id: string;
  username: string;
  /** R1, R2, …: numbered across the study in order of first round, then username. */
  code: string;
  submitted: number;
}

/** Reviewer codes of a study: R1… in order of the round they first reviewed, then by username. */
export function reviewerCodes(db: DbOrTx, studyId: number): Map<string, string> {
  const rows = db
    .select({ id: users.id, username: users.username, number: screeningRounds.number })
    .from(screeningReviewers)
    .innerJoin(screeningRounds, eq(screeningRounds.id, screeningReviewers.roundId))
    .innerJoin(users, eq(users.id, screeningReviewers.reviewerId))
    .where(eq(screeningRounds.studyId, studyId))
    .all()
    .sort((a, b) => a.number - b.number || compareCodePoints(a.username, b.username));
  const codes = new Map<string, string>();
  for (const r of rows) if (!codes.has(r.id)) codes.set(r.id, `R${codes.size + 1}`);
  return codes;
}

export function listRoundReviewers(db: DbOrTx, roundId: number, codes: Map<string, string>): RoundReviewer[] {
  return db
    .select({
      id: users.id,
      username: users.username,
      submitted: sql<number>`(select count(*) from ${screeningVotes} v where v.round_id = ${screeningReviewers.roundId} and v.reviewer_id = ${screeningReviewers.reviewerId} and v.status = 'submitted')`,
    })
    .from(screeningReviewers)
    .innerJoin(users, eq(users.id, screeningReviewers.reviewerId))
    .where(eq(screeningReviewers.roundId, roundId))
    .all()
    .map((r) => ({ ...r, code: codes.get(r.id) ?? "?" }))
    .sort((a, b) => compareCodePoints(a.code.padStart(4), b.code.padStart(4)));
}

export interface RoundData {
  round: RoundRow;
  reviewers: RoundReviewer[];
  figures: RoundFigures;
  /** Reviewer notes by item id and reviewer id (admin only). */
  notes: Map<string, Map<string, string>>;
}

/** A round's items, reviewers and submitted votes, summarised by the core (item ids are external ids). */
export function loadRound(db: DbOrTx, round: RoundRow, codes: Map<string, string>): RoundData {
  const items = db
    .select({
      id: visibleScreeningItems.externalId,
      position: screeningRoundItems.position,
      isControl: screeningRoundItems.isControl,
      stratum: screeningRoundItems.stratum,
    })
    .from(screeningRoundItems)
    .innerJoin(visibleScreeningItems, eq(visibleScreeningItems.id, screeningRoundItems.itemId))
    .where(eq(screeningRoundItems.roundId, round.id))
    .orderBy(asc(screeningRoundItems.position))
    .all();
  const reviewers = listRoundReviewers(db, round.id, codes);
  const votes = db
    .select({
      item: visibleScreeningItems.externalId,
      reviewer: screeningVotes.reviewerId,
      relevant: screeningVotes.relevant,
      category: screeningVotes.category,
      confidence: screeningVotes.confidence,
      notes: screeningVotes.notes,
    })
    .from(screeningVotes)
    .innerJoin(screeningRoundItems, eq(screeningRoundItems.id, screeningVotes.roundItemId))
    .innerJoin(visibleScreeningItems, eq(visibleScreeningItems.id, screeningRoundItems.itemId))
    .where(and(eq(screeningVotes.roundId, round.id), eq(screeningVotes.status, "submitted")))
    .all();
  const notes = new Map<string, Map<string, string>>();
  for (const v of votes) {
    if (!v.notes) continue;
    const m = notes.get(v.item) ?? new Map<string, string>();
    m.set(v.reviewer, v.notes);
    notes.set(v.item, m);
  }
  const figures = summariseRound({
    items,
    reviewers: reviewers.map((r) => r.id),
    votes: votes.map((v) => ({
      item: v.item,
      reviewer: v.reviewer,
      relevant: Boolean(v.relevant),
      category: v.category,
      confidence: v.confidence as ReviewConfidence | null,
    })),
    rule: round,
  });
  return { round, reviewers, figures, notes };
}

export interface ScreenCounts {
  items: number;
  relevant: number;
  borderline: number;
  not_relevant: number;
  unlabelled: number;
}

export function screenCounts(db: DbOrTx, studyId: number): ScreenCounts {
  const rows = db
    .select({ label: visibleScreeningLabels.label, n: count() })
    .from(visibleScreeningItems)
    .leftJoin(visibleScreeningLabels, eq(visibleScreeningLabels.itemId, visibleScreeningItems.id))
    .where(eq(visibleScreeningItems.studyId, studyId))
    .groupBy(visibleScreeningLabels.label)
    .all();
  const counts: ScreenCounts = { items: 0, relevant: 0, borderline: 0, not_relevant: 0, unlabelled: 0 };
  for (const r of rows) {
    counts.items += r.n;
    if (r.label === null) counts.unlabelled += r.n;
    else counts[r.label] += r.n;
  }
  return counts;
}

export function countTiers(
  db: DbOrTx,
  studyId: number,
  roundNumber: number,
): Record<"clear" | "possible" | "no", number> {
  const out = { clear: 0, possible: 0, no: 0 };
  for (const r of db
    .select({ tier: visibleScreeningRecallTiers.tier, n: count() })
    .from(visibleScreeningRecallTiers)
    .where(
      and(eq(visibleScreeningRecallTiers.studyId, studyId), eq(visibleScreeningRecallTiers.roundNumber, roundNumber)),
    )
    .groupBy(visibleScreeningRecallTiers.tier)
    .all())
    out[r.tier] = r.n;
  return out;
}

/** Items of the study no round has used (the recall screen's population), in import order. */
export function listUnusedItems(db: DbOrTx, studyId: number): { id: number; externalId: string }[] {
  return db
    .select({ id: visibleScreeningItems.id, externalId: visibleScreeningItems.externalId })
    .from(visibleScreeningItems)
    .where(
      and(
        eq(visibleScreeningItems.studyId, studyId),
        sql`not exists (select 1 from ${screeningRoundItems} ri where ri.item_id = ${visibleScreeningItems.id})`,
      ),
    )
    .orderBy(asc(visibleScreeningItems.position))
    .all();
}

/** The study's rounds with their figures, and what comes next. */
export function studyState(db: DbOrTx, studyId: number) {
  const codes = reviewerCodes(db, studyId);
  const rounds = listRoundRows(db, studyId).map((r) => loadRound(db, r, codes));
  return { rounds, ...whatComesNext(db, studyId, rounds), codes };
}

/** The study's screen counts, the next round's recall tiers and what comes next after `rounds` (in number order). */
export function whatComesNext(
  db: DbOrTx,
  studyId: number,
  rounds: readonly { round: RoundRow; figures: Pick<RoundFigures, "decision"> }[],
) {
  const screen = screenCounts(db, studyId);
  const nextNumber = (rounds.at(-1)?.round.number ?? 0) + 1;
  const tiers = countTiers(db, studyId, nextNumber);
  const next: NextStep = nextStep({
    items: screen.items,
    unlabelled: screen.unlabelled,
    rounds: rounds.map((r) => ({ number: r.round.number, status: r.round.status, decision: r.figures.decision })),
    tiersForNextRound: tiers.clear + tiers.possible + tiers.no,
  });
  return { screen, tiers, next };
}

export interface ScreeningStudyRow {
  id: number;
  name: string;
  items: number;
  rounds: number;
  next: NextStep["kind"];
  createdAt: number;
}

export function listScreeningStudies(db: Db): ScreeningStudyRow[] {
  return db
    .select()
    .from(visibleScreeningStudies)
    .orderBy(asc(visibleScreeningStudies.name))
    .all()
    .map((s) => screeningStudyRow(db, s));
}

function screeningStudyRow(db: Db, s: typeof visibleScreeningStudies.$inferSelect): ScreeningStudyRow {
  const state = studyState(db, s.id);
  return {
    id: s.id,
    name: s.name,
    items: state.screen.items,
    rounds: state.rounds.length,
    next: state.next.kind,
    createdAt: s.createdAt,
  };
}
