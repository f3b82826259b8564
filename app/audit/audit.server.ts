import { and, asc, desc, eq, sql } from "drizzle-orm";
import { events, users } from "../../db/schema";
import { preparedOn, type Db, type DbOrTx } from "../platform/db.server";
import { notPending } from "../platform/import-runs.server";

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
      id: events.id,
      at: events.at,
      actor: users.username,
      entity: events.entity,
      entityId: events.entityId,
      action: events.action,
      changes: events.changes,
    })
    .from(events)
    .leftJoin(users, eq(users.id, events.actorId))
    .where(and(eq(events.caseId, caseId), notPending(events.importRun)))
    .orderBy(asc(events.id))
    .all();
}

/** The latest event of one kind on a case (e.g. the admin's reopening of its decision, with its reason), or null. */
export function latestCaseEvent(
  db: DbOrTx,
  where: { caseId: number; entity: string; action: string },
): { at: number; changes: Record<string, unknown> } | null {
  return (
    db
      .select({ at: events.at, changes: events.changes })
      .from(events)
      .where(and(eq(events.caseId, where.caseId), eq(events.entity, where.entity), eq(events.action, where.action)))
      .orderBy(desc(events.id))
      .get() ?? null
  );
}
