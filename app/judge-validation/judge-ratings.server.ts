/**
 * Judge validation, the rater's side (docs/judge-validation.md, "Raters"): the sampled responses assigned to a rater, drafts saved as they
 * work, submission and revision while the set is being rated. Every query is scoped to the rater (ownership is part
 * of the query: an item not theirs is not found), and every view is an explicit projection that holds the response
 * text and the rater's own labels only — never the model, strategy, sample id, bucket, derived action, judge outputs
 * or other raters' labels (docs/architecture.md, "Roles and blinding").
 */
import { readFileSync } from "node:fs";
import { and, asc, eq } from "drizzle-orm";
import { z } from "zod";
import { judgeItems, judgeRatings, type JudgeRatingStatus } from "../../db/schema";
import { visibleJudgeResponses, visibleJudgeSets } from "../../db/schema-visible";
import { judgeGuide, type JudgeGuide } from "./domain/judge-guide";
import { INFO_REQUESTS, PRIMARY_ANSWERS } from "../evaluation/public";
import type { Db, DbOrTx } from "../platform/db.server";
import { fromRoot } from "../platform/paths.server";
import {
  nextOpenItem,
  previousItem,
  progressOf,
  type SaveResult,
  type WorkState,
} from "../work-items/domain/work-item";
import { TEXT_LIMITS, tooLongMessage } from "../work-items/domain/text-limits";
import { saveWorkItem, updateAtVersion, type WorkItemAdapter } from "../work-items/engine.server";

export type RatingState = WorkState;

export const RatingValuesSchema = z.object({
  primaryAnswer: z.enum(["", ...PRIMARY_ANSWERS]).default(""),
  infoRequest: z.enum(["", ...INFO_REQUESTS]).default(""),
  icdCodes: z.string().trim().max(TEXT_LIMITS.icdCodes, tooLongMessage("The codes", TEXT_LIMITS.icdCodes)).default(""),
  diagnosisNames: z
    .string()
    .trim()
    .max(TEXT_LIMITS.diagnosisNames, tooLongMessage("The diagnosis names", TEXT_LIMITS.diagnosisNames))
    .default(""),
  notes: z.string().max(TEXT_LIMITS.notes, tooLongMessage("Notes", TEXT_LIMITS.notes)).default(""),
});
export type RatingValues = z.infer<typeof RatingValuesSchema>;

const EMPTY_RATING: RatingValues = {
  primaryAnswer: "",
  infoRequest: "",
  icdCodes: "",
  diagnosisNames: "",
  notes: "",
};

function stateOf(status: JudgeRatingStatus): RatingState {
  return status === "assigned" ? "not_started" : status;
}

export interface MyRatingRow {
  itemId: number;
  annotationId: string;
  setName: string;
  state: RatingState;
  /** False once the set is closed: the labels are final. */
  open: boolean;
  updatedAt: number | null;
}

/** The rater's assigned responses, set by set in annotation order. Nothing about the response but its id. */
export function listRaterItems(db: Db, raterId: string): MyRatingRow[] {
  return db
    .select({
      itemId: judgeItems.id,
      annotationId: judgeItems.annotationId,
      setName: visibleJudgeSets.name,
      setStatus: visibleJudgeSets.status,
      status: judgeRatings.status,
      updatedAt: judgeRatings.updatedAt,
    })
    .from(judgeRatings)
    .innerJoin(judgeItems, eq(judgeItems.id, judgeRatings.itemId))
    .innerJoin(visibleJudgeSets, eq(visibleJudgeSets.id, judgeItems.setId))
    .where(eq(judgeRatings.raterId, raterId))
    .orderBy(asc(visibleJudgeSets.name), asc(judgeItems.position))
    .all()
    .map(({ setStatus, status, ...r }) => ({ ...r, state: stateOf(status), open: setStatus === "rating" }));
}

/** The next response to work on after `afterItemId`: the first open one not yet submitted, wrapping around. */
export function nextItemId(rows: readonly MyRatingRow[], afterItemId: number | null): number | null {
  const at = afterItemId === null ? -1 : rows.findIndex((r) => r.itemId === afterItemId);
  return nextOpenItem(rows, at, (r) => r.open && r.state !== "submitted")?.itemId ?? null;
}

export interface RaterItemView {
  item: { id: number; annotationId: string; text: string };
  state: RatingState;
  open: boolean;
  values: RatingValues;
  version: number;
  updatedAt: number | null;
  nextItemId: number | null;
  previousItemId: number | null;
  progress: { done: number; total: number };
}

function findRating(db: DbOrTx, raterId: string, itemId: number) {
  return db
    .select({
      rating: judgeRatings,
      setId: judgeItems.setId,
      setStatus: visibleJudgeSets.status,
      annotationId: judgeItems.annotationId,
    })
    .from(judgeRatings)
    .innerJoin(judgeItems, eq(judgeItems.id, judgeRatings.itemId))
    .innerJoin(visibleJudgeSets, eq(visibleJudgeSets.id, judgeItems.setId))
    .where(and(eq(judgeRatings.itemId, itemId), eq(judgeRatings.raterId, raterId)))
    .get();
}

function valuesOf(r: typeof judgeRatings.$inferSelect): RatingValues {
  return {
    primaryAnswer: (r.primaryAnswer ?? "") as RatingValues["primaryAnswer"],
    infoRequest: (r.infoRequest ?? "") as RatingValues["infoRequest"],
    icdCodes: r.icdCodes,
    diagnosisNames: r.diagnosisNames,
    notes: r.notes,
  };
}

/**
 * One assigned response for its rater: the response text (the only column of judge_responses read) and the rater's
 * own labels. Null when the item is not assigned to this rater.
 */
export function getRaterItem(db: Db, input: { raterId: string; itemId: number }): RaterItemView | null {
  const found = findRating(db, input.raterId, input.itemId);
  if (!found) return null;
  const text = db
    .select({ text: visibleJudgeResponses.modelOutputRaw })
    .from(judgeItems)
    .innerJoin(visibleJudgeResponses, eq(visibleJudgeResponses.id, judgeItems.responseId))
    .where(eq(judgeItems.id, input.itemId))
    .get()!.text;
  const mine = listRaterItems(db, input.raterId);
  return {
    item: { id: input.itemId, annotationId: found.annotationId, text },
    state: stateOf(found.rating.status),
    open: found.setStatus === "rating",
    values: valuesOf(found.rating),
    version: found.rating.version,
    updatedAt: found.rating.updatedAt,
    nextItemId: nextItemId(mine, input.itemId),
    previousItemId:
      previousItem(
        mine,
        mine.findIndex((r) => r.itemId === input.itemId),
      )?.itemId ?? null,
    progress: progressOf(mine),
  };
}

export type RatingSaveResult = SaveResult;

const CLOSED = "Rating of this set is closed: the labels are final.";

type FoundRating = NonNullable<ReturnType<typeof findRating>>;
type RatingRow = typeof judgeRatings.$inferSelect;

/**
 * The rater workspace's adapter of the work-item engine (docs/architecture.md, "The work-item engine"). A rater's
 * row exists from assignment on (status `assigned`, version 0), so every save is an update.
 */
const ratingWork: WorkItemAdapter<FoundRating, RatingRow, RatingValues> = {
  entity: "judge_rating",
  noun: "rating",
  find: findRating,
  guidelines: (found) => ({ scope: "judge_set", scopeId: found.setId }),
  closed: (found) => (found.setStatus === "rating" ? null : CLOSED),
  row: (_tx, _userId, found) => found.rating,
  meta: (r) => ({ id: r.id, state: stateOf(r.status), version: r.version, savedAt: r.updatedAt }),
  valuesOf: (row) => (row ? valuesOf(row) : EMPTY_RATING),
  check(_tx, _found, values) {
    const errors: Record<string, string> = {};
    if (!values.primaryAnswer) errors.primaryAnswer = "Choose the primary answer (C, D or N).";
    if (!values.infoRequest) errors.infoRequest = "Choose the information request (S, G or X).";
    if (Object.keys(errors).length)
      return { ok: false, message: "Both features are needed to submit; see the marked fields.", errors };
    return { ok: true, values };
  },
  audited: (v) => ({
    primaryAnswer: v.primaryAnswer || null,
    infoRequest: v.infoRequest || null,
    icdCodes: v.icdCodes,
    diagnosisNames: v.diagnosisNames,
    notes: v.notes,
  }),
  freeText: ["notes"],
  write(tx, { row, values: v, status, version, now }) {
    const r = row!;
    const columns = {
      primaryAnswer: v.primaryAnswer || null,
      infoRequest: v.infoRequest || null,
      icdCodes: v.icdCodes,
      diagnosisNames: v.diagnosisNames,
      notes: v.notes,
      status,
      version,
      updatedAt: now,
      ...(status === "submitted" ? { submittedAt: now } : {}),
    };
    return updateAtVersion(tx, judgeRatings, r.id, r.version, columns) ? r.id : null;
  },
};

/** Saves a draft; `version` is the version the page read. A stale version is refused (409) and nothing written. */
export function saveRatingDraft(
  db: Db,
  input: { raterId: string; itemId: number; values: RatingValues; version: number; now?: number; activeMs?: number },
): RatingSaveResult {
  return saveWorkItem(db, ratingWork, { ...input, userId: input.raterId, intent: "draft" });
}

/** Submits (or revises) a rating: both features are required. Audited; refused once the set is closed. */
export function submitRating(
  db: Db,
  input: { raterId: string; itemId: number; values: RatingValues; version: number; now?: number; activeMs?: number },
): RatingSaveResult {
  return saveWorkItem(db, ratingWork, { ...input, userId: input.raterId, intent: "submit" });
}

let guide: JudgeGuide | undefined;

/** The feature definitions and worked examples of the judge prompt, read once from app/data/prompts/judge.txt. */
export function raterGuide(): JudgeGuide {
  return (guide ??= judgeGuide(readFileSync(fromRoot("app", "data", "prompts", "judge.txt"), "utf8")));
}
