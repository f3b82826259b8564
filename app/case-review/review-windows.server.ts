/**
 * A case review set's items as a window, for the admin (docs/architecture.md, "Pages are windows"): by position
 * (review_items_set_pos_idx, or review_items_set_kind_pos_idx within one kind) or item id
 * (review_items_set_external_idx, whose range is also the id prefix filter); the submitted reviews are counted for
 * the window's rows only.
 */
import { and, count, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { reviewJudgements, users } from "../../db/schema";
import { visibleReviewItems } from "../../db/schema-visible";
import { compareCodePoints } from "../python-compat/text";
import type { SeedOutcome } from "./domain/case-review";
import type { ReviewItemKind } from "../expert-panel/domain/expert-scales";
import type { Db } from "../platform/db.server";
import { finishWindow, prefixRange, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import type { ReviewItemRow, ReviewSetSummary } from "./case-review.server";

export const REVIEW_ITEMS_WINDOW = {
  prefix: "",
  sorts: ["position", "externalId"],
  defaultSort: "position",
  filters: ["q", "kind"],
} as const satisfies WindowSpec<string, string>;

export function reviewItemsWindow(
  db: Db,
  set: Pick<ReviewSetSummary, "id" | "numCases" | "numSeeds">,
  params: URLSearchParams,
): ListWindow<ReviewItemRow, (typeof REVIEW_ITEMS_WINDOW.sorts)[number], "q" | "kind"> {
  const w = readWindow(params, REVIEW_ITEMS_WINDOW, 2);
  const i = visibleReviewItems;
  const byId = w.sort === "externalId";
  const k = keyset(w, byId ? [i.externalId, i.id] : [i.position, i.id]);
  const [lo, hi] = prefixRange(w.filters.q);
  const filter = and(
    eq(i.setId, set.id),
    w.filters.kind ? eq(i.kind, w.filters.kind) : undefined,
    w.filters.q ? sql`${i.externalId} >= ${lo} and ${i.externalId} < ${hi}` : undefined,
  );
  const rows = db
    .select({
      id: i.id,
      externalId: i.externalId,
      position: i.position,
      kind: i.kind,
      caseType: i.caseType,
      diagnosis: i.diagnosis,
      seedId: i.seedId,
      submitted: sql<number>`(select count(*) from review_judgements j where j.item_id = "visible_review_items"."id" and j.status = 'submitted')`,
    })
    .from(i)
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all()
    .map((r) => ({ ...r, kind: r.kind as ReviewItemKind }));
  const total =
    !w.filters.q && !w.filters.kind
      ? set.numCases + set.numSeeds
      : db.select({ n: count() }).from(i).where(filter).get()!.n;
  return finishWindow(w, rows, total, (r) => (byId ? [r.externalId, r.id] : [r.position, r.id]));
}

export const SEEDS_WINDOW = {
  prefix: "s_",
  sorts: ["id"],
  defaultSort: "id",
  filters: ["status"],
} as const satisfies WindowSpec<string, string>;

/**
 * The seeds' outcomes as a window (docs/case-review.md; docs/architecture.md, "Pages are windows"): the set's seeds
 * by id (review_items_set_external_idx), each seed's accepts and rejects counted from its own submitted reviews
 * (review_judgements_item_rater_idx), the reasons read for the window's seeds only. Unfiltered, the count is the
 * set's seeds on review_items_set_kind_pos_idx; a status filter counts over the set's seeds and their decisions.
 * The same outcomes as the report's `seeds` (`reviewReport` in app/case-review/domain/case-review.ts).
 */
export function reviewSeedsWindow(
  db: Db,
  setId: number,
  params: URLSearchParams,
): ListWindow<SeedOutcome, "id", "status"> {
  const w = readWindow(params, SEEDS_WINDOW, 1);
  const status = (["accepted", "rejected", "pending"] as const).find((x) => x === w.filters.status) ?? null;
  w.filters.status = status ?? "";
  const i = visibleReviewItems;
  const j = reviewJudgements;
  // Written out whole: drizzle leaves a column of the outer query unqualified inside a correlated subquery.
  const decided = (decision: "accept" | "reject") =>
    sql<number>`(select count(*) from review_judgements rj where rj.item_id = "visible_review_items"."id" and rj.status = 'submitted' and rj.decision = ${decision})`;
  const accepts = decided("accept");
  const rejects = decided("reject");
  const statusOf = sql<
    SeedOutcome["status"]
  >`(case when ${accepts} + ${rejects} = 0 then 'pending' when ${rejects} = 0 then 'accepted' else 'rejected' end)`;
  const filter = and(eq(i.setId, setId), eq(i.kind, "seed"), status ? sql`${statusOf} = ${status}` : undefined);
  const k = keyset(w, [i.externalId]);
  const seeds = db
    .select({ itemId: i.id, id: i.externalId, accepts, rejects, status: statusOf })
    .from(i)
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all();
  const reasons = new Map<number, { rater: string; reason: string }[]>();
  if (seeds.length > 0)
    for (const r of db
      .select({ itemId: j.itemId, rater: users.username, reason: j.reason })
      .from(j)
      .innerJoin(users, eq(users.id, j.raterId))
      .where(
        and(
          inArray(
            j.itemId,
            seeds.map((s) => s.itemId),
          ),
          eq(j.status, "submitted"),
          isNotNull(j.decision),
        ),
      )
      .all()
      .sort((a, b) => compareCodePoints(a.rater, b.rater))) {
      if (!r.reason.trim()) continue;
      const list = reasons.get(r.itemId) ?? [];
      list.push({ rater: r.rater, reason: r.reason.trim() });
      reasons.set(r.itemId, list);
    }
  const rows: SeedOutcome[] = seeds.map((s) => ({
    id: s.id,
    accepts: s.accepts,
    rejects: s.rejects,
    status: s.status,
    reasons: reasons.get(s.itemId) ?? [],
  }));
  const total = db.select({ n: count() }).from(i).where(filter).get()!.n;
  return finishWindow(w, rows, total, (r) => [r.id]);
}
