/**
 * The work-item engine (docs/architecture.md, "The work-item engine"): the one save path of every blinded workspace.
 * A protocol supplies an adapter — how to find the user's item (ownership in the query), its own row, its values,
 * its submission rules, how to write the row and what completes the item — and the engine owns the rest, always in
 * this order inside one IMMEDIATE transaction:
 *
 *   find (foreign id → 404) → closed? (409) → submission rules (422) → version (409) → locked / submitted (409)
 *   → nothing changed? (answer without writing) → write (+1 version) → audit event → completion hook
 *
 * A protocol's named steps that are not draft-or-submit saves (adjudication's judgement, decision and reopening) go
 * through the same path with `step` (see WorkItemAdapter.step).
 *
 * The audit event of every submission names the study's guidelines version in force (the event's
 * `guidelineVersion`), read in the same transaction, so each submission records the text it was made under
 * (docs/guidelines.md).
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { recordEvent } from "../audit/audit.server";
import { DatabaseBusyError, isBusy, preparedOn, type Db, type DbOrTx, type Tx } from "../platform/db.server";
import { workTime } from "../../db/schema";
import type { GuidelineRef } from "../guidelines/domain/guidelines";
import { currentGuidelineVersion } from "../guidelines/versions.server";
import {
  auditChanges,
  conflict,
  invalid,
  notFound,
  WORK_MESSAGES,
  type FieldErrors,
  type Intent,
  type SaveResult,
  type WorkState,
} from "./domain/work-item";

/**
 * Runs `fn` in an IMMEDIATE transaction: the write lock is taken at the start, so every check inside it sees the
 * state the write will change (two people submitting at once are serialised). Every guarded write goes through here.
 *
 * When another process holds the write lock past the connection's busy timeout (short on the web server), it throws
 * DatabaseBusyError, having written nothing: the workspace actions answer 503 with Retry-After and the page keeps the
 * draft and retries (docs/architecture.md, "Saving under load").
 */
export function writeTransaction<T>(db: Db, fn: (tx: Tx) => T): T {
  try {
    return db.transaction(fn, { behavior: "immediate" });
  } catch (error) {
    if (isBusy(error)) throw new DatabaseBusyError();
    throw error;
  }
}

/** A user's own row of an item as the engine needs it. */
export interface RowMeta {
  id: number | string;
  state: WorkState;
  version: number;
  savedAt: number | null;
}

export interface WorkItemAdapter<Item, Row, V, X extends object = object> {
  /** The audit trail's entity name ("annotation", "screening_vote", …). */
  entity: string;
  /** Under which entity the time on task of a save is kept, when not `entity` (adjudication drafts: "adjudication"). */
  timeEntity?: string;
  /** How the messages name the work: "This {noun} was changed in another window…". */
  noun: string;
  /**
   * The item if it is this user's to work on (ownership is part of the query); anything else is "not found". `now` is
   * the save's time (annotation settles a pair whose grace period is over first, in the save's transaction).
   */
  find(tx: Tx, userId: string, itemId: number, now: number): Item | null | undefined;
  /** Why the item takes no changes now (its set or round closed), or null. */
  closed?(item: Item): string | null;
  /** The message for a save on locked work. */
  lockedMessage?: string;
  /** The user's own row of the item, if there is one. */
  row(tx: DbOrTx, userId: string, item: Item): Row | undefined;
  meta(row: Row): RowMeta;
  /** The values stored in the row (the empty values when there is none). */
  valuesOf(row: Row | undefined, item: Item): V;
  /** The form the values are stored in for this item (fields that do not apply cleared); by default unchanged. */
  normalise?(values: V, item: Item): V;
  /** Submission rules: the canonical values to store, or the message and field errors. */
  check?(
    tx: DbOrTx,
    item: Item,
    values: V,
  ): { ok: true; values: V } | { ok: false; message: string; errors: FieldErrors };
  /** The audit trail's view of the values; the fields named in `freeText` are recorded as changed, never copied. */
  audited(values: V, item: Item): Record<string, unknown>;
  freeText?: readonly string[];
  /**
   * Writes the row with `status` and `version`: inserts it when `row` is undefined, else updates it only while it
   * still has the version read (use `updateAtVersion`). Returns the row's id, or null when another save came first.
   */
  write(
    tx: Tx,
    w: {
      userId: string;
      item: Item;
      row: Row | undefined;
      values: V;
      status: "draft" | "submitted";
      version: number;
      now: number;
    },
  ): number | string | null;
  /** Where the event belongs and what else it records (e.g. the option order shown on a first save). */
  auditContext?(
    item: Item,
    row: Row | undefined,
    id: number | string,
    userId: string,
  ): { entityId?: number | string; studyId?: number; caseId?: number; detail?: Record<string, unknown> };
  /** Whose guidelines apply to the item (its study); the version in force is recorded in every save's event. */
  guidelines?(item: Item): GuidelineRef;
  /** What a submission completes, in the same transaction (lock the pair, close the round, …). */
  onSubmitted?(tx: Tx, item: Item, now: number): { state?: WorkState; version?: number } & Partial<X>;
  /** The extra fields of a successful result when nothing was completed. */
  noExtra?: X;
  /**
   * A named step instead of a draft-or-submit save (the adjudicator's independent judgement and decision, an admin's
   * reopening; docs/architecture.md, "The work-item engine"): every accepted post writes (no "nothing changed"
   * answer), and its event is named `action` and records `changes` in place of the field-by-field difference. The
   * checks, their order and wording, the transaction, the version and the time on task are the engine's as for
   * every save; post it with intent "submit".
   */
  step?: { action: string; changes(values: V, item: Item, row: Row | undefined): Record<string, unknown> };
}

export interface SaveInput<V> {
  userId: string;
  itemId: number;
  values: V;
  /** The version the page read (0 before the first save). */
  version: number;
  intent: Intent;
  now?: number;
  /** Time on task the page measured since its previous save, added to the user's total for the item. */
  activeMs?: number;
}

/** Saves a draft or a submission through `adapter`; see the order of checks at the top of this file. */
export function saveWorkItem<Item, Row, V, X extends object = object>(
  db: Db,
  adapter: WorkItemAdapter<Item, Row, V, X>,
  input: SaveInput<V>,
): SaveResult<X> {
  const now = input.now ?? Date.now();
  const extra = (adapter.noExtra ?? {}) as X;
  return writeTransaction(db, (tx): SaveResult<X> =>
    withActiveTime(tx, adapter.timeEntity ?? adapter.entity, input, now, (): SaveResult<X> => {
      const item = adapter.find(tx, input.userId, input.itemId, now);
      if (!item) return notFound();
      const closed = adapter.closed?.(item);
      if (closed) return conflict(closed);
      // A stale or locked item answers 409 before its values are checked: the conflict is what the user must see
      // first (their field errors would be against a version that is no longer the latest).
      const row = adapter.row(tx, input.userId, item);
      const meta = row === undefined ? null : adapter.meta(row);
      if ((meta?.version ?? 0) !== input.version) return conflict(WORK_MESSAGES.changedElsewhere(adapter.noun));
      if (meta?.state === "locked") return conflict(adapter.lockedMessage ?? WORK_MESSAGES.submitted(adapter.noun));
      if (input.intent === "draft" && meta?.state === "submitted")
        return conflict(WORK_MESSAGES.submitted(adapter.noun));
      let values = adapter.normalise ? adapter.normalise(input.values, item) : input.values;
      if (input.intent === "submit" && adapter.check) {
        const checked = adapter.check(tx, item, values);
        if (!checked.ok) return invalid(checked.message, checked.errors);
        values = checked.values;
      }
      const status = input.intent === "submit" ? "submitted" : "draft";
      const before = meta && meta.state !== "not_started" ? meta.state : null;
      const changes = auditChanges(
        adapter.audited(adapter.valuesOf(row, item), item),
        adapter.audited(values, item),
        adapter.freeText,
      );
      if (before !== status) changes.status = [before, status];
      // Nothing new (an autosave of the same values, a repeated submission): answer as saved, write nothing.
      if (!adapter.step && meta && before !== null && Object.keys(changes).length === 0)
        return { ok: true, version: meta.version, savedAt: meta.savedAt ?? now, state: meta.state, ...extra };
      const version = (meta?.version ?? 0) + 1;
      const id = adapter.write(tx, { userId: input.userId, item, row, values, status, version, now });
      if (id === null) return conflict(WORK_MESSAGES.changedElsewhere(adapter.noun));
      const context = adapter.auditContext?.(item, row, id, input.userId) ?? {};
      // Submissions name the guidelines they were made under; drafts are work in progress.
      const guidelineVersion =
        input.intent === "submit" && adapter.guidelines ? currentGuidelineVersion(tx, adapter.guidelines(item)) : null;
      recordEvent(tx, {
        actorId: input.userId,
        entity: adapter.entity,
        entityId: context.entityId ?? id,
        studyId: context.studyId,
        caseId: context.caseId,
        action:
          adapter.step?.action ?? (input.intent === "draft" ? "draft" : before === "submitted" ? "revise" : "submit"),
        changes: { ...context.detail, ...(adapter.step ? adapter.step.changes(values, item, row) : changes) },
        guidelineVersion,
        at: now,
      });
      if (status === "submitted" && adapter.onSubmitted) {
        const done = adapter.onSubmitted(tx, item, now);
        return {
          ...extra,
          ...done,
          ok: true,
          version: done.version ?? version,
          savedAt: now,
          state: done.state ?? status,
        };
      }
      return { ok: true, version, savedAt: now, state: status, ...extra };
    }),
  );
}

/**
 * Runs one save and adds the active time it carries to the user's total for the item, in the same transaction.
 * Every save accepted counts, one that changed nothing included (the work was looked at); a refused one does not.
 */
function withActiveTime<T extends { ok: boolean }>(
  tx: Tx,
  entity: string,
  input: SaveInput<unknown>,
  now: number,
  save: () => T,
): T {
  const result = save();
  if (result.ok)
    addActiveTime(tx, { entity, itemId: input.itemId, userId: input.userId, activeMs: input.activeMs, now });
  return result;
}

/**
 * Adds `activeMs` of time on task to the one `work_time` row of (entity, item, user), in the caller's transaction
 * (docs/statistics.md, "Time on task"); called only once the write is accepted.
 */
function addActiveTime(
  tx: Tx,
  t: { entity: string; itemId: number; userId: string; activeMs: number | undefined; now: number },
): void {
  if (!t.activeMs) return;
  addActiveTimeStatement(tx).run({
    entity: t.entity,
    itemId: t.itemId,
    userId: t.userId,
    activeMs: t.activeMs,
    now: t.now,
  });
}

const addActiveTimeStatement = preparedOn((db) =>
  db
    .insert(workTime)
    .values({
      entity: sql.placeholder("entity"),
      itemId: sql.placeholder("itemId"),
      userId: sql.placeholder("userId"),
      activeMs: sql.placeholder("activeMs"),
      saves: 1,
      updatedAt: sql.placeholder("now"),
    })
    .onConflictDoUpdate({
      target: [workTime.entity, workTime.itemId, workTime.userId],
      set: {
        activeMs: sql`${workTime.activeMs} + ${sql.placeholder("activeMs")}`,
        saves: sql`${workTime.saves} + 1`,
        updatedAt: sql`${sql.placeholder("now")}`,
      },
    })
    .prepare(),
);

type VersionedTable = SQLiteTable & { id: SQLiteColumn; version: SQLiteColumn };

/**
 * The optimistic write: updates row `id` of `table` only while it still has `expected` as its version. Returns
 * whether it did (false: another save changed the row first, and nothing was written).
 */
export function updateAtVersion<T extends VersionedTable>(
  tx: DbOrTx,
  table: T,
  id: number,
  expected: number,
  set: Partial<T["$inferInsert"]>,
  also?: SQL,
): boolean {
  const where = and(eq(table.id, id), eq(table.version, expected), also);
  // drizzle's update() is generic over the concrete table; this helper is the one place that widens it.
  const updated = (tx as Db)
    .update(table as SQLiteTable)
    .set(set as never)
    .where(where)
    .run();
  return updated.changes > 0;
}
