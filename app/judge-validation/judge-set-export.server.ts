/** Judge validation: the admin's views of the sampled items and the set's export files. Admin only. */
import { asc, eq } from "drizzle-orm";
import { judgeItems, judgeRatings } from "../../db/schema";
import { visibleJudgeResponses, visibleJudgeSets } from "../../db/schema-visible";
import { annotatorKeyCsv, annotatorSheetCsv } from "./domain/validation-set";
import type { Db } from "../platform/db.server";
import { ServiceError } from "../platform/service-error";
import { bucketOverview } from "./judge-sample.server";

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
      sampleId: visibleJudgeResponses.sampleId,
      model: visibleJudgeResponses.model,
      strategy: visibleJudgeResponses.strategy,
      stepIndex: visibleJudgeResponses.stepIndex,
    })
    .from(judgeItems)
    .innerJoin(visibleJudgeResponses, eq(visibleJudgeResponses.id, judgeItems.responseId))
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
      record: visibleJudgeResponses.record,
      bucket: judgeItems.bucket,
      derivedAction: judgeItems.derivedAction,
      annotationId: judgeItems.annotationId,
    })
    .from(judgeItems)
    .innerJoin(visibleJudgeResponses, eq(visibleJudgeResponses.id, judgeItems.responseId))
    .where(eq(judgeItems.setId, setId))
    .orderBy(asc(judgeItems.position))
    .all()
    .map((r) => ({
      ...(r.record as Record<string, unknown>),
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
  const set = db.select().from(visibleJudgeSets).where(eq(visibleJudgeSets.id, setId)).get();
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
