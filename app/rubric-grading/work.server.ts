/**
 * What is left to do, read page by page so that memory stays flat however large the run (docs/rubric-grading.md,
 * "Scale"): conversations a candidate has not answered, and (response, criterion) pairs a judge has not graded.
 * Keyset pagination on (response id, criterion index) never revisits a pair, so a pair that fails in this session
 * is not retried in an endless loop.
 */
import type { Db } from "../platform/db.server";
import type { Message } from "./domain/eval-set";
import { pushAll } from "../stats/extremes";

export interface Scope {
  /** Only these candidates (by model id); all of the set's when null. */
  candidateIds: number[] | null;
  /** Only conversations of this subset. */
  subsetId: number | null;
}

export interface GradingItem {
  responseId: number;
  criterionIdx: number;
}

function scopeSql(scope: Scope): { sql: string; params: number[] } {
  let sql = "";
  const params: number[] = [];
  if (scope.candidateIds) {
    sql += ` AND r.candidate_id IN (${scope.candidateIds.map(() => "?").join(",") || "NULL"})`;
    pushAll(params, scope.candidateIds);
  }
  if (scope.subsetId !== null) {
    sql += " AND r.conversation_id IN (SELECT conversation_id FROM grading_subset_members WHERE subset_id = ?)";
    params.push(scope.subsetId);
  }
  return { sql, params };
}

/** Ungraded pairs of judge `judgeId` after `after`, in (response, criterion) order. */
export function pendingGradingPage(
  db: Db,
  judgeId: number,
  setId: number,
  scope: Scope,
  after: GradingItem | null,
  limit: number,
): GradingItem[] {
  const s = scopeSql(scope);
  const a = after ?? { responseId: -1, criterionIdx: -1 };
  return db.$client
    .prepare(
      `SELECT r.id AS responseId, c.idx AS criterionIdx
       FROM grading_responses r
       JOIN grading_models m ON m.id = r.candidate_id AND m.set_id = ?
       JOIN grading_criteria c ON c.conversation_id = r.conversation_id
       WHERE (r.id > ? OR (r.id = ? AND c.idx > ?))${s.sql}
         -- A verdict a batch ingest is still writing counts here (hidden from readers): its call is not graded twice.
         AND NOT EXISTS (SELECT 1 FROM grading_verdicts v -- reads hidden rows: a verdict being ingested is not graded again
                         WHERE v.judge_id = ? AND v.response_id = r.id AND v.criterion_idx = c.idx)
       ORDER BY r.id, c.idx
       LIMIT ?`,
    )
    .all(setId, a.responseId, a.responseId, a.criterionIdx, ...s.params, judgeId, limit) as GradingItem[];
}

export function countPendingGrading(
  db: Db,
  judgeId: number,
  setId: number,
  scope: Scope,
): { pending: number; total: number } {
  const s = scopeSql(scope);
  const row = db.$client
    .prepare(
      `SELECT COUNT(*) AS total,
              SUM(CASE WHEN v.judge_id IS NULL THEN 1 ELSE 0 END) AS pending
       FROM grading_responses r
       JOIN grading_models m ON m.id = r.candidate_id AND m.set_id = ?
       JOIN grading_criteria c ON c.conversation_id = r.conversation_id
       LEFT JOIN visible_grading_verdicts v ON v.judge_id = ? AND v.response_id = r.id AND v.criterion_idx = c.idx
       WHERE 1 = 1${s.sql}`,
    )
    .get(setId, judgeId, ...s.params) as { total: number; pending: number | null };
  return { total: row.total, pending: row.pending ?? 0 };
}

export interface GradingContext {
  prompt: Message[];
  response: string;
  criterion: string;
  points: number;
}

/**
 * Loads what one judge call needs. Pages come in response order, so the last response's conversation is kept and
 * reused for its criteria.
 */
export function createContextLoader(db: Db): (item: GradingItem) => GradingContext {
  const responseStmt = db.$client.prepare(
    `SELECT r.text AS text, r.conversation_id AS conversationId, g.prompt AS prompt
     FROM grading_responses r JOIN grading_conversations g ON g.id = r.conversation_id WHERE r.id = ?`,
  );
  const criterionStmt = db.$client.prepare(
    "SELECT criterion, points FROM grading_criteria WHERE conversation_id = ? AND idx = ?",
  );
  let last: { responseId: number; text: string; conversationId: number; prompt: Message[] } | null = null;
  return (item) => {
    if (last?.responseId !== item.responseId) {
      const r = responseStmt.get(item.responseId) as { text: string; conversationId: number; prompt: string };
      last = {
        responseId: item.responseId,
        text: r.text,
        conversationId: r.conversationId,
        prompt: JSON.parse(r.prompt),
      };
    }
    const c = criterionStmt.get(last.conversationId, item.criterionIdx) as { criterion: string; points: number };
    return { prompt: last.prompt, response: last.text, criterion: c.criterion, points: c.points };
  };
}

/** Conversations candidate `candidateId` has no stored response for, after position `after`. */
export function pendingResponsePage(
  db: Db,
  setId: number,
  candidateId: number,
  subsetId: number | null,
  after: number,
  limit: number,
) {
  return db.$client
    .prepare(
      `SELECT g.id AS conversationId, g.position AS position, g.prompt AS prompt
       FROM grading_conversations g
       WHERE g.set_id = ? AND g.position > ?
         ${subsetId !== null ? "AND g.id IN (SELECT conversation_id FROM grading_subset_members WHERE subset_id = ?)" : ""}
         AND NOT EXISTS (SELECT 1 FROM grading_responses r WHERE r.candidate_id = ? AND r.conversation_id = g.id)
       ORDER BY g.position LIMIT ?`,
    )
    .all(...[setId, after, ...(subsetId !== null ? [subsetId] : []), candidateId, limit]) as {
    conversationId: number;
    position: number;
    prompt: string;
  }[];
}
