/**
 * Judge validation's lists as windows (docs/architecture.md, "Pages are windows"): the admin's sample of a set and
 * the rater's own responses, each read by keyset from an index, with counts read from index ranges. The rater's
 * window is scoped to the rater in the query itself (docs/judge-validation.md, "Raters"): a rating not theirs is
 * never read, and the columns are the same as `listRaterItems` gives (the response's id, never its key).
 */
import { and, count, eq, sql } from "drizzle-orm";
import { judgeItems } from "../../db/schema";
import { visibleJudgeResponses } from "../../db/schema-visible";
import type { Db } from "../platform/db.server";
import {
  byStudyName,
  finishWindow,
  prefixRange,
  readWindow,
  type ListWindow,
  type WindowSpec,
} from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import { WORK_STATE_LABELS, type WorkState } from "../work-items/domain/work-item";
import type { SampledItemRow } from "./judge-set-export.server";
import type { MyRatingRow } from "./judge-ratings.server";

export const JUDGE_SAMPLE_WINDOW = {
  prefix: "",
  sorts: ["position", "annotationId"],
  defaultSort: "position",
  filters: ["q", "bucket"],
} as const satisfies WindowSpec<string, string>;

/**
 * A window of a set's sample, for the admin: by position (judge_items_set_pos_idx, or judge_items_set_bucket_pos_idx
 * within one bucket) or by annotation id (judge_items_set_annotation_idx, whose range is also the id-prefix filter).
 * Each row's ratings are counted for the window's rows only.
 */
export function judgeSampleWindow(
  db: Db,
  setId: number,
  params: URLSearchParams,
): ListWindow<SampledItemRow & { position: number }, (typeof JUDGE_SAMPLE_WINDOW.sorts)[number], "q" | "bucket"> {
  const w = readWindow(params, JUDGE_SAMPLE_WINDOW, 2);
  const byId = w.sort === "annotationId";
  const k = keyset(w, byId ? [judgeItems.annotationId, judgeItems.id] : [judgeItems.position, judgeItems.id]);
  const [lo, hi] = prefixRange(w.filters.q);
  const filter = and(
    eq(judgeItems.setId, setId),
    w.filters.bucket ? eq(judgeItems.bucket, w.filters.bucket) : undefined,
    w.filters.q ? sql`${judgeItems.annotationId} >= ${lo} and ${judgeItems.annotationId} < ${hi}` : undefined,
  );
  const rows = db
    .select({
      itemId: judgeItems.id,
      position: judgeItems.position,
      annotationId: judgeItems.annotationId,
      bucket: judgeItems.bucket,
      derivedAction: judgeItems.derivedAction,
      sampleId: visibleJudgeResponses.sampleId,
      model: visibleJudgeResponses.model,
      strategy: visibleJudgeResponses.strategy,
      stepIndex: visibleJudgeResponses.stepIndex,
      assigned: sql<number>`(select count(*) from judge_ratings r where r.item_id = ${judgeItems.id})`,
      submitted: sql<number>`(select count(*) from judge_ratings r where r.item_id = ${judgeItems.id} and r.status = 'submitted')`,
    })
    .from(judgeItems)
    .innerJoin(visibleJudgeResponses, eq(visibleJudgeResponses.id, judgeItems.responseId))
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all();
  const total = db.select({ n: count() }).from(judgeItems).where(filter).get()!.n;
  return finishWindow(w, rows, total, (r) => (byId ? [r.annotationId, r.itemId] : [r.position, r.itemId]));
}

export const JUDGE_QUEUE_WINDOW = {
  prefix: "",
  sorts: ["position"],
  defaultSort: "position",
  filters: ["set", "state"],
} as const satisfies WindowSpec<string, string>;

const WORK_STATES = Object.keys(WORK_STATE_LABELS) as WorkState[];
/** A rating's stored status for each state a rater sees ("locked" has none: a closed set shows "(closed)"). */
const STATUS_OF: Partial<Record<WorkState, string>> = {
  not_started: "assigned",
  draft: "draft",
  submitted: "submitted",
};

export interface JudgeQueuePage {
  /** The rater's sets, in the list's order (by name). */
  sets: { id: number; name: string; open: boolean }[];
  window: ListWindow<MyRatingRow & { position: number }, "position", "set" | "state">;
  /** The rater's responses of every set in each state. */
  counts: Record<WorkState, number>;
  /** The list's first open response not yet submitted, from the top (as `nextItemId` finds it). */
  next: number | null;
}

/**
 * The rater's own responses, one set at a time (the `set` filter; the first by name when absent), a window in
 * annotation order: the set's items by position (judge_items_set_pos_idx), each tried against this rater's rating
 * (judge_ratings_item_rater_idx); `CROSS JOIN` keeps that loop order. The counts, the window's total among them, are one
 * grouped read of the rater's ratings (judge_ratings_rater_idx).
 */
export function judgeQueuePage(db: Db, raterId: string, params: URLSearchParams): JudgeQueuePage {
  const sets = db
    .all<{ id: number; name: string; status: string }>(
      sql`SELECT s.id AS id, s.name AS name, s.status AS status FROM visible_judge_sets s
        WHERE EXISTS (SELECT 1 FROM judge_ratings r JOIN judge_items i ON i.id = r.item_id
          WHERE r.rater_id = ${raterId} AND i.set_id = s.id)`,
    )
    .map((s) => ({ id: s.id, name: s.name, open: s.status === "rating" }))
    .sort((a, b) => byStudyName(a.name, b.name));
  const counts = Object.fromEntries(WORK_STATES.map((s) => [s, 0])) as Record<WorkState, number>;
  const visible = new Set(sets.map((s) => s.id));
  const perSet = new Map<string, number>();
  for (const c of db.all<{ setId: number; status: string; n: number }>(
    sql`SELECT i.set_id AS setId, r.status AS status, count(*) AS n FROM judge_ratings r
      JOIN judge_items i ON i.id = r.item_id WHERE r.rater_id = ${raterId} GROUP BY i.set_id, r.status`,
  )) {
    if (!visible.has(c.setId)) continue;
    perSet.set(`${c.setId}/${c.status}`, c.n);
    counts[c.status === "assigned" ? "not_started" : (c.status as WorkState)] += c.n;
  }
  let next: number | null = null;
  for (const s of sets) {
    if (!s.open) continue;
    next =
      db.all<{ id: number }>(
        sql`SELECT i.id AS id FROM judge_items i CROSS JOIN judge_ratings r
          ON r.item_id = i.id AND r.rater_id = ${raterId}
          WHERE i.set_id = ${s.id} AND r.status <> 'submitted' ORDER BY i.position, i.id LIMIT 1`,
      )[0]?.id ?? null;
    if (next !== null) break;
  }

  const w = readWindow(params, JUDGE_QUEUE_WINDOW, 2);
  const set = sets.find((s) => String(s.id) === w.filters.set) ?? sets[0];
  const status = STATUS_OF[w.filters.state as WorkState] ?? null;
  w.filters.set = set ? String(set.id) : "";
  w.filters.state = status ? w.filters.state : "";
  if (!set) return { sets, window: finishWindow(w, [], 0, () => []), counts, next };
  const k = keyset(w, [sql`i.position`, sql`i.id`]);
  const from = sql`FROM judge_items i CROSS JOIN judge_ratings r ON r.item_id = i.id AND r.rater_id = ${raterId}
    WHERE i.set_id = ${set.id} AND ${status ? sql`r.status = ${status}` : sql`1`}`;
  const rows = db.all<{ itemId: number; position: number; annotationId: string; status: string; updatedAt: number }>(
    sql`SELECT i.id AS itemId, i.position AS position, i.annotation_id AS annotationId, r.status AS status,
        r.updated_at AS updatedAt ${from} AND ${k.where} ORDER BY ${sql.join(k.orderBy, sql`, `)} LIMIT ${k.limit}`,
  );
  const total = (status ? [status] : ["assigned", "draft", "submitted"]).reduce(
    (n, st) => n + (perSet.get(`${set.id}/${st}`) ?? 0),
    0,
  );
  return {
    sets,
    counts,
    next,
    window: finishWindow(
      w,
      rows.map((r) => ({
        itemId: r.itemId,
        position: r.position,
        annotationId: r.annotationId,
        setName: set.name,
        state: (r.status === "assigned" ? "not_started" : r.status) as WorkState,
        open: set.open,
        updatedAt: r.updatedAt,
      })),
      total,
      (r) => [r.position, r.itemId],
    ),
  };
}
