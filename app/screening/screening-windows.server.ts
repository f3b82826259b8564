/**
 * The reviewer's screening list as a window (docs/architecture.md, "Pages are windows"): one open round at a time,
 * its items in the shared order (screening_round_items_round_pos_idx), each with this reviewer's own vote
 * (screening_votes_item_reviewer_idx). Blinding as in app/screening/screening-review.server.ts: the columns are the
 * position, the opening words and the reviewer's own vote state, never control status, strata, screen labels or
 * another reviewer's vote; the rounds are those the reviewer reviews, so another round named in the URL is not read.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../platform/db.server";
import { byStudyName, finishWindow, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import type { WorkState } from "../work-items/domain/work-item";
import { previewOf, type ReviewRow } from "./screening-review.server";

export const SCREENING_QUEUE_WINDOW = {
  prefix: "",
  sorts: ["position"],
  defaultSort: "position",
  filters: ["round", "state"],
} as const satisfies WindowSpec<string, string>;

const STATE_SQL: Partial<Record<WorkState, ReturnType<typeof sql>>> = {
  not_started: sql`v.id IS NULL`,
  draft: sql`v.status = 'draft'`,
  submitted: sql`v.status = 'submitted'`,
};

export interface ScreeningQueuePage {
  /** The reviewer's open rounds, in the list's order (study name, round number). */
  rounds: { id: number; studyName: string; number: number }[];
  window: ListWindow<ReviewRow, "position", "round" | "state">;
  /** The reviewer's items of every open round in each state. */
  counts: Record<WorkState, number>;
  /** The first item not submitted, from the top of the list (as `nextEntryId` finds it). */
  next: number | null;
}

export function screeningQueuePage(db: Db, reviewerId: string, params: URLSearchParams): ScreeningQueuePage {
  const rounds = db
    .all<{ id: number; studyName: string; number: number }>(
      sql`SELECT r.id AS id, s.name AS studyName, r.number AS number FROM screening_reviewers x
        JOIN screening_rounds r ON r.id = x.round_id JOIN visible_screening_studies s ON s.id = r.study_id
        WHERE x.reviewer_id = ${reviewerId} AND r.status = 'open'`,
    )
    .sort((a, b) => byStudyName(a.studyName, b.studyName) || a.number - b.number);
  // Per round: its items (an index range) and this reviewer's votes by status (screening_votes_round_idx).
  const perRound = new Map<number, Record<WorkState, number>>();
  const counts: Record<WorkState, number> = { not_started: 0, draft: 0, submitted: 0, locked: 0 };
  for (const r of rounds) {
    const items = db.all<{ n: number }>(
      sql`SELECT count(*) AS n FROM screening_round_items WHERE round_id = ${r.id}`,
    )[0]!.n;
    const c: Record<WorkState, number> = { not_started: items, draft: 0, submitted: 0, locked: 0 };
    for (const v of db.all<{ status: "draft" | "submitted"; n: number }>(
      sql`SELECT status, count(*) AS n FROM screening_votes WHERE round_id = ${r.id} AND reviewer_id = ${reviewerId}
        GROUP BY status`,
    )) {
      c[v.status] += v.n;
      c.not_started -= v.n;
    }
    perRound.set(r.id, c);
    for (const s of Object.keys(c) as WorkState[]) counts[s] += c[s];
  }
  const from = (roundId: number) =>
    sql`FROM screening_round_items e CROSS JOIN visible_screening_items i ON i.id = e.item_id
      LEFT JOIN screening_votes v ON v.round_item_id = e.id AND v.reviewer_id = ${reviewerId}
      WHERE e.round_id = ${roundId}`;
  let next: number | null = null;
  for (const r of rounds) {
    next =
      db.all<{ id: number }>(
        sql`SELECT e.id AS id ${from(r.id)} AND (v.id IS NULL OR v.status <> 'submitted')
          ORDER BY e.position, e.id LIMIT 1`,
      )[0]?.id ?? null;
    if (next !== null) break;
  }

  const w = readWindow(params, SCREENING_QUEUE_WINDOW, 2);
  const round = rounds.find((r) => String(r.id) === w.filters.round) ?? rounds[0];
  const state = STATE_SQL[w.filters.state as WorkState] ? (w.filters.state as WorkState) : null;
  w.filters.round = round ? String(round.id) : "";
  w.filters.state = state ?? "";
  if (!round) return { rounds, window: finishWindow(w, [], 0, () => []), counts, next };
  const k = keyset(w, [sql`e.position`, sql`e.id`]);
  const rows = db.all<{
    entryId: number;
    position: number;
    kind: string;
    head: string;
    status: "draft" | "submitted" | null;
    updatedAt: number | null;
  }>(
    sql`SELECT e.id AS entryId, e.position AS position, i.kind AS kind, substr(i.content, 1, 1200) AS head,
        v.status AS status, v.updated_at AS updatedAt
      ${from(round.id)} AND ${state ? STATE_SQL[state]! : sql`1`} AND ${k.where}
      ORDER BY ${sql.join(k.orderBy, sql`, `)} LIMIT ${k.limit}`,
  );
  const c = perRound.get(round.id)!;
  const total = state ? c[state] : c.not_started + c.draft + c.submitted;
  return {
    rounds,
    counts,
    next,
    window: finishWindow(
      w,
      rows.map((r) => ({
        entryId: r.entryId,
        studyName: round.studyName,
        round: round.number,
        position: r.position,
        preview: previewOf(r.kind, r.head),
        state: r.status ?? "not_started",
        updatedAt: r.updatedAt,
      })),
      total,
      (r) => [r.position, r.entryId],
    ),
  };
}
