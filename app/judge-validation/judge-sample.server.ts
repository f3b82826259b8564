/** Judge validation: the seeded bucket sample of a set's responses, drawn and discarded. Admin only. */
import { asc, count, eq, inArray } from "drizzle-orm";
import { judgeCandidates, judgeItems, judgeOutputs, judgeSets } from "../../db/schema";
import { visibleJudgeResponses, visibleJudgeSets } from "../../db/schema-visible";
import {
  BUCKET_SAMPLING_ORDER,
  type BucketSummary,
  DEFAULT_BUCKET_TARGETS,
  drawValidationSet,
  type ValidationBucket,
} from "./domain/validation-set";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { ServiceError } from "../platform/service-error";
import type { BucketTargets } from "./judge-sets.server";

/** Removes the current sample and the candidate judges scored on it (their outputs name its annotation ids). */
export function discardDraw(tx: DbOrTx, setId: number, actorId: string | null, now: number, reason: string) {
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
  const set = db
    .select({ targets: visibleJudgeSets.targets })
    .from(visibleJudgeSets)
    .where(eq(visibleJudgeSets.id, setId))
    .get();
  const targets: BucketTargets = { ...DEFAULT_BUCKET_TARGETS, ...(set ? set.targets : {}) };
  const available = db
    .select({ bucket: visibleJudgeResponses.bucket, n: count() })
    .from(visibleJudgeResponses)
    .where(eq(visibleJudgeResponses.setId, setId))
    .groupBy(visibleJudgeResponses.bucket)
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
      const set = tx.select().from(visibleJudgeSets).where(eq(visibleJudgeSets.id, input.setId)).get();
      if (!set) throw new ServiceError("No such validation set.", "set", 404);
      if (set.status !== "drafting") throw new ServiceError(REDRAW_REFUSED, "seed", 409);
      const targets: BucketTargets = { ...DEFAULT_BUCKET_TARGETS, ...set.targets, ...input.targets };
      const responses = tx
        .select({ id: visibleJudgeResponses.id, record: visibleJudgeResponses.record })
        .from(visibleJudgeResponses)
        .where(eq(visibleJudgeResponses.setId, set.id))
        .orderBy(asc(visibleJudgeResponses.position))
        .all();
      if (responses.length === 0)
        throw new ServiceError("The set has no responses yet: import some first.", "set", 409);
      const rows = responses.map((r) => ({
        ...(r.record as Record<string, unknown>),
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
          targets,
          summary: drawn.summary,
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
