/**
 * Judge validation, the admin's side: the validation sets themselves and the forms that name them. Admin only: these
 * views hold the model, strategy, bucket and derived action that raters never see (their side is
 * judge-ratings.server.ts). The import of responses, the bucket sample, the raters and the exports have their own
 * files beside this one.
 */
import { and, asc, count, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { judgeCandidates, judgeItems, judgeRatings, judgeSets, type JudgeSetStatus } from "../../db/schema";
import { visibleJudgeResponses, visibleJudgeSets } from "../../db/schema-visible";
import { BUCKET_SAMPLING_ORDER, DEFAULT_BUCKET_TARGETS, type ValidationBucket } from "./domain/validation-set";
import type { Db, DbOrTx } from "../platform/db.server";
import { ServiceError } from "../platform/service-error";
import { finishWindow, prefixRange, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";

export const JudgeSetNameSchema = z
  .string()
  .trim()
  .min(1, "Give the validation set a name.")
  .max(100, "A set name has at most 100 characters.")
  .regex(/^[^/\\]+$/, "A set name may not contain slashes.");

/** Seeds as Python's `random.seed` takes them here: whole numbers 0 … 2^53 − 1. */
export const SeedSchema = z.coerce
  .number({ message: "The seed must be a whole number." })
  .int("The seed must be a whole number.")
  .min(0, "The seed must be 0 or more.")
  .max(Number.MAX_SAFE_INTEGER, "The seed is too large.");

export type BucketTargets = Record<ValidationBucket, number>;

export const TargetsSchema = z.object(
  Object.fromEntries(
    BUCKET_SAMPLING_ORDER.map((b) => [
      b,
      z.coerce
        .number({ message: `The target of ${b} must be a whole number.` })
        .int(`The target of ${b} must be a whole number.`)
        .min(0, `The target of ${b} must be 0 or more.`)
        .max(100_000),
    ]),
  ) as Record<ValidationBucket, z.ZodCoercedNumber>,
);

/** Largest responses file the web upload and the command accept. */
export const MAX_RESPONSES_BYTES = 200 * 1024 * 1024;

export interface JudgeSetSummary {
  id: number;
  name: string;
  seed: number;
  status: JudgeSetStatus;
  targets: BucketTargets;
  drawnAt: number | null;
  createdAt: number;
  responses: number;
  items: number;
  ratingsAssigned: number;
  ratingsSubmitted: number;
  judges: number;
}

function summarise(db: DbOrTx, row: typeof judgeSets.$inferSelect): JudgeSetSummary {
  const n = (q: { n: number } | undefined) => q?.n ?? 0;
  const ratings = db
    .select({ status: judgeRatings.status, n: count() })
    .from(judgeRatings)
    .innerJoin(judgeItems, eq(judgeItems.id, judgeRatings.itemId))
    .where(eq(judgeItems.setId, row.id))
    .groupBy(judgeRatings.status)
    .all();
  return {
    id: row.id,
    name: row.name,
    seed: row.seed,
    status: row.status,
    targets: { ...DEFAULT_BUCKET_TARGETS, ...row.targets },
    drawnAt: row.drawnAt,
    createdAt: row.createdAt,
    responses: n(
      db.select({ n: count() }).from(visibleJudgeResponses).where(eq(visibleJudgeResponses.setId, row.id)).get(),
    ),
    items: n(db.select({ n: count() }).from(judgeItems).where(eq(judgeItems.setId, row.id)).get()),
    ratingsAssigned: ratings.reduce((s, r) => s + r.n, 0),
    ratingsSubmitted: ratings.find((r) => r.status === "submitted")?.n ?? 0,
    judges: n(db.select({ n: count() }).from(judgeCandidates).where(eq(judgeCandidates.setId, row.id)).get()),
  };
}

export function listJudgeSets(db: Db): JudgeSetSummary[] {
  return db
    .select()
    .from(visibleJudgeSets)
    .orderBy(asc(visibleJudgeSets.name))
    .all()
    .map((row) => summarise(db, row));
}

export const JUDGE_SETS_WINDOW = {
  prefix: "",
  sorts: ["name"],
  defaultSort: "name",
  filters: ["q"],
} as const satisfies WindowSpec<string, string>;

/**
 * A window of the validation sets (docs/architecture.md, "Pages are windows"): by name (its unique index) with a
 * name-prefix filter; only the window's sets are summarised.
 */
export function judgeSetsWindow(db: Db, params: URLSearchParams): ListWindow<JudgeSetSummary, "name", "q"> {
  const w = readWindow(params, JUDGE_SETS_WINDOW, 2);
  const [lo, hi] = prefixRange(w.filters.q);
  const filter = w.filters.q ? sql`${visibleJudgeSets.name} >= ${lo} and ${visibleJudgeSets.name} < ${hi}` : undefined;
  const k = keyset(w, [visibleJudgeSets.name, visibleJudgeSets.id]);
  const rows = db
    .select()
    .from(visibleJudgeSets)
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all()
    .map((row) => summarise(db, row));
  const total = db.select({ n: count() }).from(visibleJudgeSets).where(filter).get()!.n;
  return finishWindow(w, rows, total, (r) => [r.name, r.id]);
}

export function getJudgeSet(db: DbOrTx, id: number): JudgeSetSummary | null {
  // A set still being written by its first import is hidden until that import's last transaction.
  const row = db.select().from(visibleJudgeSets).where(eq(visibleJudgeSets.id, id)).get();
  return row ? summarise(db, row) : null;
}

export function getJudgeSetByName(db: DbOrTx, name: string): JudgeSetSummary | null {
  const row = db.select().from(visibleJudgeSets).where(eq(visibleJudgeSets.name, name.trim())).get();
  return row ? summarise(db, row) : null;
}

export function requireJudgeSetByName(db: DbOrTx, name: string): JudgeSetSummary {
  const set = getJudgeSetByName(db, name);
  if (!set)
    throw new ServiceError(`No validation set named "${name.trim()}". Import responses into it first.`, "set", 404);
  return set;
}
