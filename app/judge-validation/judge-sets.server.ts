/**
 * Judge validation, the admin's side (docs/judge-validation.md): validation sets, the import of model
 * responses, the seeded bucket sample, the raters' assignment and the exports. Admin only: these views hold the model,
 * strategy, bucket and derived action that raters never see (their side is judge-ratings.server.ts).
 */
import { createHash } from "node:crypto";
import { and, asc, count, eq, inArray, max } from "drizzle-orm";
import { z } from "zod";
import {
  judgeCandidates,
  judgeItems,
  judgeOutputs,
  judgeRatings,
  judgeResponseImports,
  judgeResponses,
  judgeSets,
  userRoles,
  users,
  type JudgeSetStatus,
} from "../../db/schema";
import {
  parseResponsesJsonl,
  responseIdentity,
  type ParsedResponses,
  type ResponseFormat,
  type RunSource,
} from "./domain/judge-import";
import { planRaterAssignments, RATERS_PER_RESPONSE } from "./domain/rater-assignment";
import {
  annotatorKeyCsv,
  annotatorSheetCsv,
  BUCKET_SAMPLING_ORDER,
  DEFAULT_BUCKET_TARGETS,
  DEFAULT_VALIDATION_SEED,
  drawValidationSet,
  firstParse,
  type BucketSummary,
  type ValidationBucket,
} from "./domain/validation-set";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { ServiceError } from "../accounts/users.server";

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
    targets: { ...DEFAULT_BUCKET_TARGETS, ...JSON.parse(row.targets) },
    drawnAt: row.drawnAt,
    createdAt: row.createdAt,
    responses: n(db.select({ n: count() }).from(judgeResponses).where(eq(judgeResponses.setId, row.id)).get()),
    items: n(db.select({ n: count() }).from(judgeItems).where(eq(judgeItems.setId, row.id)).get()),
    ratingsAssigned: ratings.reduce((s, r) => s + r.n, 0),
    ratingsSubmitted: ratings.find((r) => r.status === "submitted")?.n ?? 0,
    judges: n(db.select({ n: count() }).from(judgeCandidates).where(eq(judgeCandidates.setId, row.id)).get()),
  };
}

export function listJudgeSets(db: Db): JudgeSetSummary[] {
  return db
    .select()
    .from(judgeSets)
    .orderBy(asc(judgeSets.name))
    .all()
    .map((row) => summarise(db, row));
}

export function getJudgeSet(db: DbOrTx, id: number): JudgeSetSummary | null {
  const row = db.select().from(judgeSets).where(eq(judgeSets.id, id)).get();
  return row ? summarise(db, row) : null;
}

export function getJudgeSetByName(db: DbOrTx, name: string): JudgeSetSummary | null {
  const row = db.select().from(judgeSets).where(eq(judgeSets.name, name.trim())).get();
  return row ? summarise(db, row) : null;
}

export function requireJudgeSetByName(db: DbOrTx, name: string): JudgeSetSummary {
  const set = getJudgeSetByName(db, name);
  if (!set)
    throw new ServiceError(`No validation set named "${name.trim()}". Import responses into it first.`, "set", 404);
  return set;
}

// ————— Import of responses —————

export interface ResponsesFile {
  bytes: Uint8Array;
  filename: string;
  /** For a trajectories.jsonl: the run folder it came from (docs/formats.md#run-folders). */
  source?: RunSource;
}

export interface ResponsesImportInput {
  setName: string;
  /** One file, or every trajectories.jsonl of a runs/ folder in the reference's (sorted) order. */
  files: ResponsesFile[];
  format?: ResponseFormat;
}

export interface ResponsesImportPlan {
  ok: boolean;
  setName: string;
  setExists: boolean;
  /** Each file's validation, in order; a caller lists `errors` as "file:line: message". */
  files: { filename: string; parse: ParsedResponses }[];
  /** A refusal of the whole import (set not drafting, same file imported before); null when none. */
  refusal: string | null;
  /** True when importing would discard the set's current (unrated) sample. */
  discardsDraw: boolean;
  /** Responses the import adds. */
  total: number;
}

function decode(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

const sha256Of = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const when = (at: number) => new Date(at).toISOString().slice(0, 16).replace("T", " ") + " UTC";

function planWithin(db: DbOrTx, input: ResponsesImportInput): ResponsesImportPlan {
  const name = JudgeSetNameSchema.parse(input.setName);
  const set = db.select().from(judgeSets).where(eq(judgeSets.name, name)).get();
  const base = { setName: name, setExists: Boolean(set), discardsDraw: false, total: 0 };
  const refuse = (refusal: string): ResponsesImportPlan => ({ ...base, ok: false, files: [], refusal });
  if (input.files.length === 0) return refuse("No file to import.");
  if (set && set.status !== "drafting")
    return refuse(`Rating has started on "${name}": responses can no longer be added (the sample is frozen).`);
  const hashes = input.files.map((f) => sha256Of(f.bytes));
  for (const [i, f] of input.files.entries()) {
    const j = hashes.indexOf(hashes[i]);
    if (j !== i)
      return refuse(`${f.filename} has the same content as ${input.files[j].filename}: nothing was imported.`);
    const before = set
      ? db
          .select({ at: judgeResponseImports.importedAt, filename: judgeResponseImports.filename })
          .from(judgeResponseImports)
          .where(and(eq(judgeResponseImports.setId, set.id), eq(judgeResponseImports.sha256, hashes[i])))
          .get()
      : undefined;
    if (before)
      return refuse(
        `${f.filename} was already imported into "${name}" (as ${before.filename}, ${when(
          before.at,
        )}): nothing was imported.`,
      );
  }
  const existing = new Set(
    set
      ? db
          .select({
            sourceRun: judgeResponses.sourceRun,
            model: judgeResponses.model,
            strategy: judgeResponses.strategy,
            sampleId: judgeResponses.sampleId,
            stepIndex: judgeResponses.stepIndex,
          })
          .from(judgeResponses)
          .where(eq(judgeResponses.setId, set.id))
          .all()
          .map(responseIdentity)
      : [],
  );
  let format = input.format;
  const files = input.files.map((f) => {
    const text = decode(f.bytes);
    const parse: ParsedResponses =
      text === null
        ? { format: format ?? null, responses: [], errors: [{ line: 0, message: "not UTF-8 text" }], warnings: [] }
        : parseResponsesJsonl(text, { format, source: f.source, existing });
    // Responses of earlier files count as existing for later ones; every file of one import has one format.
    for (const r of parse.responses) existing.add(responseIdentity(r));
    format ??= parse.format ?? undefined;
    return { filename: f.filename, parse };
  });
  const ok = files.every((f) => f.parse.errors.length === 0);
  const drawn = set
    ? Boolean(db.select({ id: judgeItems.id }).from(judgeItems).where(eq(judgeItems.setId, set.id)).get())
    : false;
  return {
    ...base,
    ok,
    files,
    refusal: null,
    discardsDraw: ok && drawn,
    total: ok ? files.reduce((s, f) => s + f.parse.responses.length, 0) : 0,
  };
}

/** Validates responses files against the set without writing anything. */
export function planResponsesImport(db: Db, input: ResponsesImportInput): ResponsesImportPlan {
  return planWithin(db, input);
}

/**
 * Imports responses files into a set (created if new), all or nothing, in one IMMEDIATE transaction: every file is
 * validated first (parseResponsesJsonl) and a single bad line writes nothing. Responses keep the files' order after
 * those already in the set: that is the input order of the draw. Importing into a set with a drawn (unrated) sample
 * discards that sample: it must be drawn again over the new pool.
 */
export function importResponses(
  db: Db,
  input: ResponsesImportInput & { actorId: string | null; now?: number },
): ResponsesImportPlan & { written: number; setId: number | null } {
  const now = input.now ?? Date.now();
  return db.transaction(
    (tx) => {
      const plan = planWithin(tx, input);
      if (!plan.ok) return { ...plan, written: 0, setId: null };
      let set = tx.select().from(judgeSets).where(eq(judgeSets.name, plan.setName)).get();
      if (!set) {
        set = tx
          .insert(judgeSets)
          .values({
            name: plan.setName,
            seed: DEFAULT_VALIDATION_SEED,
            status: "drafting",
            targets: JSON.stringify(DEFAULT_BUCKET_TARGETS),
            createdBy: input.actorId,
            createdAt: now,
          })
          .returning()
          .get();
        recordEvent(tx, {
          actorId: input.actorId,
          entity: "judge_set",
          entityId: set.id,
          action: "create",
          changes: { name: [null, set.name] },
          at: now,
        });
      }
      if (plan.discardsDraw) discardDraw(tx, set.id, input.actorId, now, "responses imported");
      let position =
        tx
          .select({ p: max(judgeResponses.position) })
          .from(judgeResponses)
          .where(eq(judgeResponses.setId, set.id))
          .get()?.p ?? 0;
      for (const [i, file] of plan.files.entries()) {
        const sha256 = sha256Of(input.files[i].bytes);
        const importId = tx
          .insert(judgeResponseImports)
          .values({
            setId: set.id,
            filename: file.filename,
            sha256,
            format: file.parse.format!,
            rows: file.parse.responses.length,
            importedBy: input.actorId,
            importedAt: now,
          })
          .returning({ id: judgeResponseImports.id })
          .get().id;
        for (const r of file.parse.responses) {
          const parsed = firstParse(r.record);
          tx.insert(judgeResponses)
            .values({
              setId: set.id,
              importId,
              position: ++position,
              sourceRun: r.sourceRun,
              sampleId: r.sampleId,
              model: r.model,
              strategy: r.strategy,
              stepIndex: r.stepIndex,
              isLastSection: r.isLastSection,
              modelOutputRaw: r.modelOutputRaw,
              newJudgeOutput: r.newJudgeOutput ? JSON.stringify(r.newJudgeOutput) : null,
              record: JSON.stringify(r.record),
              bucket: parsed.bucket,
              derivedAction: parsed.derivedAction,
            })
            .run();
        }
        recordEvent(tx, {
          actorId: input.actorId,
          entity: "judge_set",
          entityId: set.id,
          action: "import_responses",
          changes: { filename: file.filename, format: file.parse.format, rows: file.parse.responses.length, sha256 },
          at: now,
        });
      }
      return { ...plan, setExists: true, written: plan.total, setId: set.id };
    },
    { behavior: "immediate" },
  );
}

/** Removes the current sample and the candidate judges scored on it (their outputs name its annotation ids). */
function discardDraw(tx: DbOrTx, setId: number, actorId: string | null, now: number, reason: string) {
  const judges = tx
    .select({ id: judgeCandidates.id, name: judgeCandidates.name })
    .from(judgeCandidates)
    .where(eq(judgeCandidates.setId, setId))
    .all();
  if (judges.length) {
    tx.delete(judgeOutputs)
      .where(
        inArray(
          judgeOutputs.judgeId,
          judges.map((j) => j.id),
        ),
      )
      .run();
    tx.delete(judgeCandidates).where(eq(judgeCandidates.setId, setId)).run();
  }
  const removed = tx.delete(judgeItems).where(eq(judgeItems.setId, setId)).run().changes;
  tx.update(judgeSets).set({ summary: null, drawnAt: null }).where(eq(judgeSets.id, setId)).run();
  if (removed || judges.length)
    recordEvent(tx, {
      actorId,
      entity: "judge_set",
      entityId: setId,
      action: "discard_sample",
      changes: { reason, items: removed, judges: judges.map((j) => j.name) },
      at: now,
    });
}

// ————— Bucket sample —————

export interface BucketRow extends BucketSummary {
  bucket: ValidationBucket;
}

/** Target, available and selected per bucket, in sampling order (docs/judge-validation.md#sampling), for the set's current state. */
export function bucketOverview(db: DbOrTx, setId: number): BucketRow[] {
  const set = db.select({ targets: judgeSets.targets }).from(judgeSets).where(eq(judgeSets.id, setId)).get();
  const targets: BucketTargets = { ...DEFAULT_BUCKET_TARGETS, ...(set ? JSON.parse(set.targets) : {}) };
  const available = db
    .select({ bucket: judgeResponses.bucket, n: count() })
    .from(judgeResponses)
    .where(eq(judgeResponses.setId, setId))
    .groupBy(judgeResponses.bucket)
    .all();
  const selected = db
    .select({ bucket: judgeItems.bucket, n: count() })
    .from(judgeItems)
    .where(eq(judgeItems.setId, setId))
    .groupBy(judgeItems.bucket)
    .all();
  return BUCKET_SAMPLING_ORDER.map((bucket) => ({
    bucket,
    target: targets[bucket],
    available: available.find((a) => a.bucket === bucket)?.n ?? 0,
    selected: selected.find((s) => s.bucket === bucket)?.n ?? 0,
  }));
}

export const REDRAW_REFUSED =
  "Rating has started on this set: the sample can no longer be re-drawn, since raters have been given its responses. " +
  "Start a new validation set to draw another sample.";

/** A symbol key survives the draw's object spread without entering the row's JSON keys. */
const RESPONSE_ID = Symbol("responseId");

/**
 * Draws the set's sample exactly as `build_human_validation_set.py` would over the set's responses in input order
 * (drawValidationSet: one `random.Random(seed)`, buckets in sampling order, ids ann_0001…). Re-drawing with another
 * seed or other targets replaces the sample (and removes candidate judges scored on the old one) while the set is
 * drafting; once rating has started it is refused (REDRAW_REFUSED). Audited.
 */
export function drawSample(
  db: Db,
  input: { setId: number; seed: number; targets?: Partial<BucketTargets>; actorId: string | null; now?: number },
): { summary: BucketRow[]; items: number; redrawn: boolean } {
  const now = input.now ?? Date.now();
  return db.transaction(
    (tx) => {
      const set = tx.select().from(judgeSets).where(eq(judgeSets.id, input.setId)).get();
      if (!set) throw new ServiceError("No such validation set.", "set", 404);
      if (set.status !== "drafting") throw new ServiceError(REDRAW_REFUSED, "seed", 409);
      const targets: BucketTargets = { ...DEFAULT_BUCKET_TARGETS, ...JSON.parse(set.targets), ...input.targets };
      const responses = tx
        .select({ id: judgeResponses.id, record: judgeResponses.record })
        .from(judgeResponses)
        .where(eq(judgeResponses.setId, set.id))
        .orderBy(asc(judgeResponses.position))
        .all();
      if (responses.length === 0)
        throw new ServiceError("The set has no responses yet: import some first.", "set", 409);
      const rows = responses.map((r) => ({
        ...(JSON.parse(r.record) as Record<string, unknown>),
        [RESPONSE_ID]: r.id,
      }));
      const drawn = drawValidationSet(rows, { seed: input.seed, targets });
      const redrawn = Boolean(
        tx.select({ id: judgeItems.id }).from(judgeItems).where(eq(judgeItems.setId, set.id)).get(),
      );
      discardDraw(tx, set.id, input.actorId, now, "re-drawn");
      drawn.rows.forEach((row, i) => {
        tx.insert(judgeItems)
          .values({
            setId: set.id,
            responseId: row[RESPONSE_ID],
            annotationId: row.annotation_id,
            bucket: row.validation_bucket,
            derivedAction: row.derived_action,
            position: i + 1,
          })
          .run();
      });
      tx.update(judgeSets)
        .set({
          seed: input.seed,
          targets: JSON.stringify(targets),
          summary: JSON.stringify(drawn.summary),
          drawnAt: now,
        })
        .where(eq(judgeSets.id, set.id))
        .run();
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "judge_set",
        entityId: set.id,
        action: redrawn ? "redraw" : "draw",
        changes: { seed: [set.drawnAt ? set.seed : null, input.seed], targets, items: drawn.rows.length },
        at: now,
      });
      return { summary: bucketOverview(tx, set.id), items: drawn.rows.length, redrawn };
    },
    { behavior: "immediate" },
  );
}

// ————— Raters —————

export interface RaterLoad {
  id: string;
  username: string;
  displayName: string;
  active: boolean;
  assigned: number;
  draft: number;
  submitted: number;
}

/** Every user with the rater role and their work in this set. */
export function listSetRaters(db: Db, setId: number): RaterLoad[] {
  const people = db
    .select({ id: users.id, username: users.username, displayName: users.displayName, active: users.active })
    .from(users)
    .innerJoin(userRoles, and(eq(userRoles.userId, users.id), eq(userRoles.role, "rater")))
    .orderBy(asc(users.username))
    .all();
  const rows = db
    .select({ raterId: judgeRatings.raterId, status: judgeRatings.status, n: count() })
    .from(judgeRatings)
    .innerJoin(judgeItems, eq(judgeItems.id, judgeRatings.itemId))
    .where(eq(judgeItems.setId, setId))
    .groupBy(judgeRatings.raterId, judgeRatings.status)
    .all();
  return people.map((p) => {
    const mine = rows.filter((r) => r.raterId === p.id);
    const of = (s: string) => mine.find((r) => r.status === s)?.n ?? 0;
    return {
      ...p,
      active: Boolean(p.active),
      assigned: mine.reduce((s, r) => s + r.n, 0),
      draft: of("draft"),
      submitted: of("submitted"),
    };
  });
}

/**
 * Starts rating: every sampled response goes to three of the chosen raters (planRaterAssignments: distinct people,
 * balanced load, reproducible with `seed`) and the set moves to `rating`, which freezes the sample. All or nothing;
 * each assignment is audited.
 */
export function startRating(
  db: Db,
  input: { setId: number; raterIds: string[]; seed: number; actorId: string | null; now?: number },
): { assignments: number; items: number; load: Record<string, number> } {
  const now = input.now ?? Date.now();
  return db.transaction(
    (tx) => {
      const set = tx.select().from(judgeSets).where(eq(judgeSets.id, input.setId)).get();
      if (!set) throw new ServiceError("No such validation set.", "set", 404);
      if (set.status !== "drafting") throw new ServiceError("Rating has already started on this set.", "raters", 409);
      const items = tx
        .select({ id: judgeItems.id })
        .from(judgeItems)
        .where(eq(judgeItems.setId, set.id))
        .orderBy(asc(judgeItems.position))
        .all();
      if (items.length === 0) throw new ServiceError("Draw the sample before assigning raters.", "raters", 409);
      const eligible = new Set(
        tx
          .select({ id: users.id })
          .from(users)
          .innerJoin(userRoles, and(eq(userRoles.userId, users.id), eq(userRoles.role, "rater")))
          .where(eq(users.active, true))
          .all()
          .map((u) => u.id),
      );
      if (input.raterIds.some((id) => !eligible.has(id)))
        throw new ServiceError("Only active users with the rater role can rate responses.", "raters");
      const plan = planRaterAssignments({
        itemIds: items.map((i) => i.id),
        raterIds: input.raterIds,
        seed: input.seed,
      });
      if (!plan.ok) throw new ServiceError(plan.error.charAt(0).toUpperCase() + plan.error.slice(1), "raters");
      for (const a of plan.assignments) {
        const id = tx
          .insert(judgeRatings)
          .values({
            itemId: a.itemId,
            raterId: a.raterId,
            status: "assigned",
            version: 0,
            assignedAt: now,
            assignedBy: input.actorId,
          })
          .returning({ id: judgeRatings.id })
          .get().id;
        recordEvent(tx, {
          actorId: input.actorId,
          entity: "judge_rating",
          entityId: id,
          action: "assign",
          changes: { set: set.id, item: a.itemId, rater: [null, a.raterId], seed: input.seed },
          at: now,
        });
      }
      tx.update(judgeSets).set({ status: "rating" }).where(eq(judgeSets.id, set.id)).run();
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "judge_set",
        entityId: set.id,
        action: "start_rating",
        changes: { status: ["drafting", "rating"], raters: input.raterIds.length, perResponse: RATERS_PER_RESPONSE },
        at: now,
      });
      return { assignments: plan.assignments.length, items: items.length, load: plan.load };
    },
    { behavior: "immediate" },
  );
}

/** Closes rating (labels become read-only) or reopens it. */
export function setRatingOpen(db: Db, input: { setId: number; open: boolean; actorId: string | null; now?: number }) {
  const now = input.now ?? Date.now();
  db.transaction(
    (tx) => {
      const set = tx.select().from(judgeSets).where(eq(judgeSets.id, input.setId)).get();
      if (!set) throw new ServiceError("No such validation set.", "set", 404);
      const from = input.open ? "closed" : "rating";
      const to = input.open ? "rating" : "closed";
      if (set.status !== from)
        throw new ServiceError(
          input.open ? "Only a closed set can be reopened." : "Only a set that is being rated can be closed.",
          "status",
          409,
        );
      tx.update(judgeSets).set({ status: to }).where(eq(judgeSets.id, set.id)).run();
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "judge_set",
        entityId: set.id,
        action: input.open ? "reopen" : "close",
        changes: { status: [from, to] },
        at: now,
      });
    },
    { behavior: "immediate" },
  );
}

// ————— Admin views and exports —————

export interface SampledItemRow {
  itemId: number;
  annotationId: string;
  bucket: string;
  derivedAction: string;
  sampleId: string;
  model: string;
  strategy: string;
  stepIndex: number | null;
  submitted: number;
  assigned: number;
}

/** The sample with its key (model, strategy, bucket …), for the admin. */
export function listSampledItems(db: Db, setId: number): SampledItemRow[] {
  const items = db
    .select({
      itemId: judgeItems.id,
      annotationId: judgeItems.annotationId,
      bucket: judgeItems.bucket,
      derivedAction: judgeItems.derivedAction,
      sampleId: judgeResponses.sampleId,
      model: judgeResponses.model,
      strategy: judgeResponses.strategy,
      stepIndex: judgeResponses.stepIndex,
    })
    .from(judgeItems)
    .innerJoin(judgeResponses, eq(judgeResponses.id, judgeItems.responseId))
    .where(eq(judgeItems.setId, setId))
    .orderBy(asc(judgeItems.position))
    .all();
  const ratings = db
    .select({ itemId: judgeRatings.itemId, status: judgeRatings.status })
    .from(judgeRatings)
    .innerJoin(judgeItems, eq(judgeItems.id, judgeRatings.itemId))
    .where(eq(judgeItems.setId, setId))
    .all();
  return items.map((i) => {
    const mine = ratings.filter((r) => r.itemId === i.itemId);
    return { ...i, assigned: mine.length, submitted: mine.filter((r) => r.status === "submitted").length };
  });
}

/**
 * The sample as the reference writes its selected rows (docs/judge-validation.md#sampling): each input row plus `validation_bucket`,
 * `derived_action` and `annotation_id`, in annotation order.
 */
export function sampledRows(db: Db, setId: number): Record<string, unknown>[] {
  return db
    .select({
      record: judgeResponses.record,
      bucket: judgeItems.bucket,
      derivedAction: judgeItems.derivedAction,
      annotationId: judgeItems.annotationId,
    })
    .from(judgeItems)
    .innerJoin(judgeResponses, eq(judgeResponses.id, judgeItems.responseId))
    .where(eq(judgeItems.setId, setId))
    .orderBy(asc(judgeItems.position))
    .all()
    .map((r) => ({
      ...(JSON.parse(r.record) as Record<string, unknown>),
      validation_bucket: r.bucket,
      derived_action: r.derivedAction,
      annotation_id: r.annotationId,
    }));
}

export const SET_EXPORT_FILES = ["annotator-sheet.csv", "key.csv", "selected.jsonl", "summary.json"] as const;
export type SetExportFile = (typeof SET_EXPORT_FILES)[number];

/**
 * The files for annotation outside the app (docs/judge-validation.md#annotator-sheet): `annotator-sheet.csv`, blinded (no model or strategy:
 * give it to raters); `key.csv`, the reference's own sheet with model and strategy (admin only); `selected.jsonl`,
 * the selected rows; `summary.json`, seed and {bucket: {target, available, selected}}.
 */
export function exportSetFile(db: Db, setId: number, file: SetExportFile): string {
  const set = db.select().from(judgeSets).where(eq(judgeSets.id, setId)).get();
  if (!set) throw new ServiceError("No such validation set.", "set", 404);
  if (file === "summary.json") {
    return (
      JSON.stringify(
        {
          seed: set.seed,
          summary: Object.fromEntries(bucketOverview(db, setId).map(({ bucket, ...s }) => [bucket, s])),
        },
        null,
        2,
      ) + "\n"
    );
  }
  const rows = sampledRows(db, setId);
  if (file === "annotator-sheet.csv") return annotatorSheetCsv(rows);
  if (file === "key.csv") return annotatorKeyCsv(rows);
  return rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length ? "\n" : "");
}

export interface ImportRow {
  id: number;
  filename: string;
  format: string;
  rows: number;
  importedBy: string | null;
  importedAt: number;
}

/** The files imported into a set, oldest first. */
export function listResponseImports(db: Db, setId: number): ImportRow[] {
  return db
    .select({
      id: judgeResponseImports.id,
      filename: judgeResponseImports.filename,
      format: judgeResponseImports.format,
      rows: judgeResponseImports.rows,
      importedBy: users.username,
      importedAt: judgeResponseImports.importedAt,
    })
    .from(judgeResponseImports)
    .leftJoin(users, eq(users.id, judgeResponseImports.importedBy))
    .where(eq(judgeResponseImports.setId, setId))
    .orderBy(asc(judgeResponseImports.id))
    .all();
}
