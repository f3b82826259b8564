/**
 * A case review set's items as a window, for the admin (docs/architecture.md, "Pages are windows"): by position
 * (review_items_set_pos_idx, or review_items_set_kind_pos_idx within one kind) or item id
 * (review_items_set_external_idx, whose range is also the id prefix filter); the submitted reviews are counted for
 * the window's rows only.
 */
import { and, count, eq, sql } from "drizzle-orm";
import { visibleReviewItems } from "../../db/schema-visible";
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
