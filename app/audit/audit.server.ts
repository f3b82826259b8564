import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import { events, users } from "../../db/schema";
import { visibleEvents } from "../../db/schema-visible";
import { preparedOn, type Db, type DbOrTx } from "../platform/db.server";
import { finishWindow, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";

export interface EventInput {
  actorId: string | null;
  entity: string;
  entityId: string | number;
  action: string;
  studyId?: number | null;
  caseId?: number | null;
  /** { field: [old, new] } or detail. Never the case's clinical text (labels and annotator notes are what the trail is for). */
  changes?: object;
  /** The guidelines version in force for a submission or decision (docs/guidelines.md). */
  guidelineVersion?: number | null;
  at?: number;
  /** The import run that writes the event: hidden from readers until the run ends (docs/reliability.md, "Bulk imports"). */
  importRun?: string | null;
}

const insertEvent = preparedOn((db) =>
  db
    .insert(events)
    .values({
      guidelineVersion: sql.placeholder("guidelineVersion"),
      at: sql.placeholder("at"),
      actorId: sql.placeholder("actorId"),
      studyId: sql.placeholder("studyId"),
      caseId: sql.placeholder("caseId"),
      entity: sql.placeholder("entity"),
      entityId: sql.placeholder("entityId"),
      action: sql.placeholder("action"),
      changes: sql.placeholder("changes"),
      importRun: sql.placeholder("importRun"),
    })
    .prepare(),
);

/** Appends one audit event; call it inside the transaction that makes the change. */
export function recordEvent(db: DbOrTx, e: EventInput): void {
  insertEvent(db).run({
    guidelineVersion: e.guidelineVersion ?? null,
    at: e.at ?? Date.now(),
    actorId: e.actorId,
    studyId: e.studyId ?? null,
    caseId: e.caseId ?? null,
    entity: e.entity,
    entityId: String(e.entityId),
    action: e.action,
    changes: e.changes ?? {},
    importRun: e.importRun ?? null,
  });
}

/** Field-by-field differences between two label snapshots, as { field: [old, new] }. */
export function diff<T extends Record<string, unknown>>(
  before: Partial<T> | null,
  after: Partial<T>,
): Record<string, [unknown, unknown]> {
  const out: Record<string, [unknown, unknown]> = {};
  for (const key of Object.keys(after)) {
    const a = before?.[key] ?? null;
    const b = after[key] ?? null;
    if (JSON.stringify(a) !== JSON.stringify(b)) out[key] = [a, b];
  }
  return out;
}

export interface EventView {
  id: number;
  at: number;
  actor: string | null;
  entity: string;
  entityId: string;
  action: string;
  changes: Record<string, unknown>;
}

/** A case's history, oldest first, for admins. */
export function listCaseEvents(db: Db, caseId: number): EventView[] {
  return db
    .select({
      id: visibleEvents.id,
      at: visibleEvents.at,
      actor: users.username,
      entity: visibleEvents.entity,
      entityId: visibleEvents.entityId,
      action: visibleEvents.action,
      changes: visibleEvents.changes,
    })
    .from(visibleEvents)
    .leftJoin(users, eq(users.id, visibleEvents.actorId))
    .where(eq(visibleEvents.caseId, caseId))
    .orderBy(asc(visibleEvents.id))
    .all();
}

export const CASE_EVENTS_WINDOW = {
  prefix: "h_",
  sorts: ["id"],
  defaultSort: "id",
  filters: ["entity"],
} as const satisfies WindowSpec<string, string>;

/**
 * A window of a case's history (docs/architecture.md, "Pages are windows"; parameters prefixed `h_`): oldest or
 * newest first by walking events_case_idx (case_id, id) from the cursor, optionally of one kind of entity (a filter
 * that steps over the case's other events). The whole history stays in the case's export.
 */
export function caseEventsWindow(
  db: Db,
  caseId: number,
  params: URLSearchParams,
): ListWindow<EventView, "id", "entity"> {
  const w = readWindow(params, CASE_EVENTS_WINDOW, 1);
  const k = keyset(w, [visibleEvents.id]);
  const filter = and(
    eq(visibleEvents.caseId, caseId),
    w.filters.entity ? eq(visibleEvents.entity, w.filters.entity) : undefined,
  );
  const rows = db
    .select({
      id: visibleEvents.id,
      at: visibleEvents.at,
      actor: users.username,
      entity: visibleEvents.entity,
      entityId: visibleEvents.entityId,
      action: visibleEvents.action,
      changes: visibleEvents.changes,
    })
    .from(visibleEvents)
    .leftJoin(users, eq(users.id, visibleEvents.actorId))
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all();
  const total = db.select({ n: count() }).from(visibleEvents).where(filter).get()!.n;
  return finishWindow(w, rows, total, (r) => [r.id]);
}

/** The latest event of one kind on a case (e.g. the admin's reopening of its decision, with its reason), or null. */
export function latestCaseEvent(
  db: DbOrTx,
  where: { caseId: number; entity: string; action: string },
): { at: number; changes: Record<string, unknown> } | null {
  return (
    db
      .select({ at: visibleEvents.at, changes: visibleEvents.changes })
      .from(visibleEvents)
      .where(
        and(
          eq(visibleEvents.caseId, where.caseId),
          eq(visibleEvents.entity, where.entity),
          eq(visibleEvents.action, where.action),
        ),
      )
      .orderBy(desc(visibleEvents.id))
      .get() ?? null
  );
}
