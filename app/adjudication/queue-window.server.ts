/**
 * The adjudicator's queue as a window (docs/architecture.md, "Pages are windows"): disputed cases of every study,
 * oldest dispute first (then by position), read from case_outcomes_status_disputed_idx, never a case the adjudicator
 * annotated (assignments_case_annotator_idx, tried per row as `listAdjudicationQueue` excludes them), filtered by
 * study or by what the annotators disagreed on. The order and the rows are `listAdjudicationQueue`'s.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../platform/db.server";
import { finishWindow, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import type { DisputeReason } from "../gold/public";
import type { QueueRow } from "./adjudication.server";

export const ADJUDICATION_QUEUE_WINDOW = {
  prefix: "",
  sorts: ["disputedAt"],
  defaultSort: "disputedAt",
  filters: ["study", "reason"],
} as const satisfies WindowSpec<string, string>;

export interface AdjudicationQueuePage {
  window: ListWindow<QueueRow, "disputedAt", "study" | "reason">;
  studies: { id: number; name: string }[];
  /** The whole queue's figures: waiting, with this adjudicator's independent judgement, reopened; decided by them. */
  waiting: number;
  withMine: number;
  reopened: number;
  done: number;
  /** The first case of the queue (unfiltered), where "Next case" goes. */
  next: number | null;
}

export function adjudicationQueuePage(db: Db, userId: string, params: URLSearchParams): AdjudicationQueuePage {
  const w = readWindow(params, ADJUDICATION_QUEUE_WINDOW, 3);
  const queue = sql`FROM case_outcomes o CROSS JOIN visible_cases c ON c.id = o.case_id
    JOIN visible_studies s ON s.id = c.study_id
    WHERE o.status = 'disputed'
      AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.case_id = o.case_id AND a.annotator_id = ${userId})`;
  const studies = db.all<{ id: number; name: string }>(
    sql`SELECT DISTINCT s.id AS id, s.name AS name ${queue} ORDER BY s.name`,
  );
  const study = studies.find((s) => String(s.id) === w.filters.study) ?? null;
  const reason = ["sufficiency", "diagnosis"].includes(w.filters.reason) ? w.filters.reason : null;
  w.filters.study = study ? String(study.id) : "";
  w.filters.reason = reason ?? "";
  const filtered = sql`${queue} AND ${study ? sql`c.study_id = ${study.id}` : sql`1`}
    AND ${reason ? sql`o.dispute_reason = ${reason}` : sql`1`}`;
  const k = keyset(w, [sql`ifnull(o.disputed_at, 0)`, sql`c.position`, sql`c.id`]);
  const rows = db.all<Omit<QueueRow, "mine" | "reopened"> & { position: number; mine: number; reopened: number }>(
    sql`SELECT c.id AS caseId, c.external_id AS externalId, s.name AS studyName, o.dispute_reason AS reason,
        ifnull(o.disputed_at, 0) AS disputedAt, c.num_sections AS numSections, c.position AS position,
        EXISTS (SELECT 1 FROM adjudications d WHERE d.case_id = c.id AND d.adjudicator_id = ${userId}
          AND d.status = 'in_progress') AS mine,
        EXISTS (SELECT 1 FROM adjudications d WHERE d.case_id = c.id AND d.status = 'reopened') AS reopened
      ${filtered} AND ${k.where} ORDER BY ${sql.join(k.orderBy, sql`, `)} LIMIT ${k.limit}`,
  );
  const figures = db.all<{ waiting: number; withMine: number; reopened: number }>(
    sql`SELECT count(*) AS waiting,
        sum(EXISTS (SELECT 1 FROM adjudications d WHERE d.case_id = c.id AND d.adjudicator_id = ${userId}
          AND d.status = 'in_progress')) AS withMine,
        sum(EXISTS (SELECT 1 FROM adjudications d WHERE d.case_id = c.id AND d.status = 'reopened')) AS reopened
      ${queue}`,
  )[0]!;
  const total = study || reason ? db.all<{ n: number }>(sql`SELECT count(*) AS n ${filtered}`)[0]!.n : figures.waiting;
  const done = db.all<{ n: number }>(
    sql`SELECT count(*) AS n FROM adjudications WHERE adjudicator_id = ${userId} AND status = 'decided'`,
  )[0]!.n;
  const next =
    db.all<{ id: number }>(
      sql`SELECT c.id AS id ${queue} ORDER BY ifnull(o.disputed_at, 0), c.position, c.id LIMIT 1`,
    )[0]?.id ?? null;
  return {
    studies,
    waiting: figures.waiting,
    withMine: figures.withMine ?? 0,
    reopened: figures.reopened ?? 0,
    done,
    next,
    window: finishWindow(
      w,
      rows.map(({ position: _, mine, reopened: r, reason: why, ...row }) => ({
        ...row,
        reason: why as DisputeReason,
        mine: mine ? ("independent_recorded" as const) : ("none" as const),
        reopened: Boolean(r),
      })),
      total,
      (r) => [r.disputedAt, rows.find((x) => x.caseId === r.caseId)?.position ?? 0, r.caseId],
    ),
  };
}
