/**
 * The expert's list as a window (docs/architecture.md, "Pages are windows"): one collection at a time — a MENTAT
 * bank's preference questions or a case review set's items, the banks first and each kind by name, as
 * `listRaterQuestions` and `listRaterItems` order them — its rows by position (mentat_questions_bank_pos_idx,
 * review_items_set_pos_idx), each with this expert's own rating (mentat_ratings_question_rater_idx,
 * review_judgements_item_rater_idx). Own work only (docs/mentat.md, docs/case-review.md): the collections are those whose panel
 * holds the expert, so another named in the URL is not read, and no other expert's rating is ever joined.
 */
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../platform/db.server";
import { byStudyName, finishWindow, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import { domainsOf } from "./domain/expert-scales";
import type { WorkState } from "../work-items/domain/work-item";

export const EXPERT_QUEUE_WINDOW = {
  prefix: "",
  sorts: ["position"],
  defaultSort: "position",
  filters: ["c", "state"],
} as const satisfies WindowSpec<string, string>;

export interface ExpertWorkRow {
  to: string;
  kind: "Answer options" | "Generated case" | "Seed case";
  collection: string;
  externalId: string;
  detail: string;
  position: number;
  state: WorkState;
}

interface Collection {
  /** "b<id>" for a bank, "s<id>" for a review set. */
  key: string;
  name: string;
  /** The rows of the collection: FROM … WHERE …, aliased `x` (the item) and `r` (the expert's own rating). */
  from: SQL;
  counts: Record<WorkState, number>;
}

export interface ExpertQueuePage {
  collections: { key: string; name: string }[];
  window: ListWindow<ExpertWorkRow, "position", "c" | "state">;
  counts: Record<WorkState, number>;
  /** Where the first item not submitted, from the top of the list, is. */
  next: string | null;
}

const STATE_SQL: Partial<Record<WorkState, SQL>> = {
  not_started: sql`r.id IS NULL`,
  draft: sql`r.status = 'draft'`,
  submitted: sql`r.status = 'submitted'`,
};

function tally(items: number, byStatus: { status: "draft" | "submitted"; n: number }[]): Record<WorkState, number> {
  const c: Record<WorkState, number> = { not_started: items, draft: 0, submitted: 0, locked: 0 };
  for (const s of byStatus) {
    c[s.status] += s.n;
    c.not_started -= s.n;
  }
  return c;
}

export function expertQueuePage(db: Db, userId: string, params: URLSearchParams): ExpertQueuePage {
  const banks = db
    .all<{ id: number; name: string; prefs: string }>(
      sql`SELECT b.id AS id, b.name AS name, b.preference_domains AS prefs FROM mentat_bank_raters m
        JOIN visible_mentat_banks b ON b.id = m.bank_id WHERE m.rater_id = ${userId}`,
    )
    .sort((a, b) => byStudyName(a.name, b.name));
  const sets = db
    .all<{ id: number; name: string }>(
      sql`SELECT s.id AS id, s.name AS name FROM review_set_raters m JOIN visible_review_sets s ON s.id = m.set_id
        WHERE m.rater_id = ${userId}`,
    )
    .sort((a, b) => byStudyName(a.name, b.name));
  const collections: Collection[] = [];
  for (const b of banks) {
    const prefs = domainsOf(JSON.parse(b.prefs) as string[]);
    const inPrefs = prefs.length
      ? sql`x.domain IN (${sql.join(
          prefs.map((d) => sql`${d}`),
          sql`, `,
        )})`
      : sql`0`;
    const from = sql`FROM visible_mentat_questions x
      LEFT JOIN visible_mentat_ratings r ON r.question_id = x.id AND r.rater_id = ${userId}
      WHERE x.bank_id = ${b.id} AND ${inPrefs}`;
    const items = db.all<{ n: number }>(
      sql`SELECT count(*) AS n FROM visible_mentat_questions x WHERE x.bank_id = ${b.id} AND ${inPrefs}`,
    )[0]!.n;
    const byStatus = db.all<{ status: "draft" | "submitted"; n: number }>(
      sql`SELECT r.status AS status, count(*) AS n FROM visible_mentat_ratings r
        JOIN visible_mentat_questions x ON x.id = r.question_id
        WHERE r.rater_id = ${userId} AND x.bank_id = ${b.id} AND ${inPrefs} GROUP BY r.status`,
    );
    collections.push({ key: `b${b.id}`, name: b.name, from, counts: tally(items, byStatus) });
  }
  for (const s of sets) {
    const from = sql`FROM visible_review_items x
      LEFT JOIN review_judgements r ON r.item_id = x.id AND r.rater_id = ${userId}
      WHERE x.set_id = ${s.id}`;
    const items = db.all<{ n: number }>(
      sql`SELECT count(*) AS n FROM visible_review_items x WHERE x.set_id = ${s.id}`,
    )[0]!.n;
    const byStatus = db.all<{ status: "draft" | "submitted"; n: number }>(
      sql`SELECT r.status AS status, count(*) AS n FROM review_judgements r
        JOIN visible_review_items x ON x.id = r.item_id
        WHERE r.rater_id = ${userId} AND x.set_id = ${s.id} GROUP BY r.status`,
    );
    collections.push({ key: `s${s.id}`, name: s.name, from, counts: tally(items, byStatus) });
  }
  const counts: Record<WorkState, number> = { not_started: 0, draft: 0, submitted: 0, locked: 0 };
  for (const c of collections) for (const s of Object.keys(counts) as WorkState[]) counts[s] += c.counts[s];

  const toOf = (key: string, id: number) => (key.startsWith("b") ? `/mentat/${id}` : `/case-review/${id}`);
  let next: string | null = null;
  for (const c of collections) {
    const first = db.all<{ id: number }>(
      sql`SELECT x.id AS id ${c.from} AND (r.id IS NULL OR r.status <> 'submitted') ORDER BY x.position, x.id LIMIT 1`,
    )[0];
    if (first) {
      next = toOf(c.key, first.id);
      break;
    }
  }

  const w = readWindow(params, EXPERT_QUEUE_WINDOW, 2);
  const shown = collections.find((c) => c.key === w.filters.c) ?? collections[0];
  const state = STATE_SQL[w.filters.state as WorkState] ? (w.filters.state as WorkState) : null;
  w.filters.c = shown?.key ?? "";
  w.filters.state = state ?? "";
  const list = collections.map((c) => ({ key: c.key, name: c.name }));
  if (!shown) return { collections: list, window: finishWindow(w, [], 0, () => []), counts, next };
  const bank = shown.key.startsWith("b");
  const k = keyset(w, [sql`x.position`, sql`x.id`]);
  const rows = db.all<{ id: number; externalId: string; position: number; detail: string; status: string | null }>(
    sql`SELECT x.id AS id, x.external_id AS externalId, x.position AS position,
        ${bank ? sql`x.domain` : sql`x.kind`} AS detail, r.status AS status
      ${shown.from} AND ${state ? STATE_SQL[state]! : sql`1`} AND ${k.where}
      ORDER BY ${sql.join(k.orderBy, sql`, `)} LIMIT ${k.limit}`,
  );
  const total = state ? shown.counts[state] : shown.counts.not_started + shown.counts.draft + shown.counts.submitted;
  return {
    collections: list,
    counts,
    next,
    window: finishWindow(
      w,
      rows.map((r) => ({
        to: toOf(shown.key, r.id),
        kind: bank ? "Answer options" : r.detail === "seed" ? "Seed case" : "Generated case",
        collection: shown.name,
        externalId: r.externalId,
        detail: bank ? r.detail : r.detail === "seed" ? "accept or reject" : "rate quality",
        position: r.position,
        state: (r.status ?? "not_started") as WorkState,
      })),
      total,
      (r) => [r.position, Number(r.to.slice(r.to.lastIndexOf("/") + 1))],
    ),
  };
}
