/**
 * Expert panels (docs/mentat.md#expert-panels): the experts who rate a MENTAT question bank or review a case-review set. Each kind keeps
 * its members in its own table (a PanelStore); who may join, the transaction and the audit are the same for both.
 */
import { and, count, eq, inArray } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable, SQLiteView } from "drizzle-orm/sqlite-core";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { listUsers, type UserView } from "../accounts/users.server";
import { ServiceError } from "../platform/service-error";

/** Where one kind of panel keeps its members; `id` is the bank's or the set's. */
export interface PanelStore {
  /** The audited entity whose panel it is. */
  entity: "mentat_bank" | "review_set";
  has(tx: DbOrTx, id: number, raterId: string): boolean;
  add(tx: DbOrTx, id: number, member: { raterId: string; assignedAt: number; assignedBy: string | null }): void;
  /** Removes the member; false when they were not on the panel. */
  remove(tx: DbOrTx, id: number, raterId: string): boolean;
}

/** A panel kept in a members table: `group` is its bank or set column (named `key` in the table's values). */
export function panelStore(
  entity: PanelStore["entity"],
  members: { table: SQLiteTable; group: SQLiteColumn; rater: SQLiteColumn; key: string },
): PanelStore & { memberIds(db: DbOrTx, id: number): Set<string> } {
  const { table, group, rater, key } = members;
  const one = (id: number, raterId: string) => and(eq(group, id), eq(rater, raterId));
  return {
    entity,
    has: (tx, id, raterId) => Boolean(tx.select().from(table).where(one(id, raterId)).get()),
    add: (tx, id, member) =>
      tx
        .insert(table)
        .values({ [key]: id, ...member } as never)
        .run(),
    remove: (tx, id, raterId) => tx.delete(table).where(one(id, raterId)).run().changes > 0,
    memberIds: (db, id) =>
      new Set(
        db
          .select({ id: rater })
          .from(table)
          .where(eq(group, id))
          .all()
          .map((m) => m.id as string),
      ),
  };
}

export interface PanelMember {
  id: string;
  username: string;
  displayName: string;
  active: boolean;
  onPanel: boolean;
  submitted: number;
  drafts: number;
}

/**
 * Every user with the rater role (and any member who lost it), with membership and progress (admin view). `work` is
 * the panel's ratings or reviews, one row per expert and item.
 */
function listPanelMembers(db: Db, members: Set<string>, work: { raterId: string; status: string }[]): PanelMember[] {
  return listUsers(db)
    .filter((u) => u.roles.includes("rater") || members.has(u.id))
    .map((u) => ({
      id: u.id,
      username: u.username,
      displayName: u.displayName,
      active: u.active,
      onPanel: members.has(u.id),
      submitted: work.filter((w) => w.raterId === u.id && w.status === "submitted").length,
      drafts: work.filter((w) => w.raterId === u.id && w.status === "draft").length,
    }));
}

/**
 * Adds experts (active users with the rater role) to a panel; members already on it are left alone. Returns how many
 * were added. `refusal` is the error when one of them may not join.
 */
function addPanelRaters(
  db: Db,
  store: PanelStore,
  input: { id: number; raterIds: string[]; actorId: string | null; now?: number },
  refusal: string,
): number {
  const now = input.now ?? Date.now();
  const raters = new Map<string, UserView>(
    listUsers(db)
      .filter((u) => u.roles.includes("rater") && u.active)
      .map((u) => [u.id, u]),
  );
  if (input.raterIds.some((id) => !raters.has(id))) throw new ServiceError(refusal, "raters");
  return db.transaction(
    (tx) => {
      let added = 0;
      for (const raterId of new Set(input.raterIds)) {
        if (store.has(tx, input.id, raterId)) continue;
        store.add(tx, input.id, { raterId, assignedAt: now, assignedBy: input.actorId });
        recordEvent(tx, {
          actorId: input.actorId,
          entity: store.entity,
          entityId: input.id,
          action: "add_rater",
          changes: { rater: raters.get(raterId)!.username },
          at: now,
        });
        added++;
      }
      return added;
    },
    { behavior: "immediate" },
  );
}

/** Takes an expert off a panel; the work they submitted stays. */
function removePanelRater(
  db: Db,
  store: PanelStore,
  input: { id: number; raterId: string; actorId: string | null; now?: number },
): void {
  const now = input.now ?? Date.now();
  db.transaction(
    (tx) => {
      if (store.remove(tx, input.id, input.raterId))
        recordEvent(tx, {
          actorId: input.actorId,
          entity: store.entity,
          entityId: input.id,
          action: "remove_rater",
          changes: { raterId: input.raterId },
          at: now,
        });
    },
    { behavior: "immediate" },
  );
}

/**
 * The commands of one kind of panel, keyed as its callers name the bank or set (`bankId`, `setId`): the admin's list
 * of experts given the panel's work (`work`: one row per expert and item), adding experts (`refusal`: the error when
 * one of them may not join) and taking one off.
 */
export function expertPanel<K extends string>(
  store: ReturnType<typeof panelStore>,
  key: K,
  messages: { refusal: string; removed: string },
) {
  const refusal = messages.refusal;
  type Target = { [k in K]: number } & { actorId: string | null; now?: number };
  return {
    /**
     * The admin page's add or remove (`add_rater`, `remove_rater`) of one expert, answered with the message the page
     * shows: a refusal (a user who may not join) is a message, not an error page.
     */
    change(
      db: Db,
      input: { id: number; intent: "add_rater" | "remove_rater"; raterId: string; actorId: string },
    ): { ok: boolean; message: string } {
      const target = { [key]: input.id, actorId: input.actorId } as Target;
      try {
        if (input.intent === "add_rater")
          addPanelRaters(db, store, { ...target, id: input.id, raterIds: [input.raterId] }, refusal);
        else removePanelRater(db, store, { ...target, id: input.id, raterId: input.raterId });
      } catch (e) {
        if (e instanceof ServiceError) return { ok: false, message: e.message };
        throw e;
      }
      return { ok: true, message: input.intent === "add_rater" ? "Added to the panel." : messages.removed };
    },
    list: (db: Db, id: number, work: { raterId: string; status: string }[]): PanelMember[] =>
      listPanelMembers(db, store.memberIds(db, id), work),
    add: (db: Db, input: Target & { raterIds: string[] }): number =>
      addPanelRaters(db, store, { ...input, id: input[key] }, refusal),
    remove: (db: Db, input: Target & { raterId: string }): void =>
      removePanelRater(db, store, { ...input, id: input[key] }),
  };
}

/**
 * Where the panel's work is kept: its item and status columns (ratings of questions, reviews of cases); a table an
 * import writes behind its run is given as its view (db/schema-visible.ts).
 */
export interface WorkColumns {
  table: SQLiteTable | SQLiteView;
  item: SQLiteColumn;
  status: SQLiteColumn;
}

/** How many pieces of submitted work there are on `itemIds` (for the summaries of banks and sets). */
export function countSubmitted(db: DbOrTx, work: WorkColumns, itemIds: number[]): number {
  if (!itemIds.length) return 0;
  return db
    .select({ n: count() })
    .from(work.table)
    .where(and(inArray(work.item, itemIds), eq(work.status, "submitted")))
    .get()!.n;
}

/**
 * The bank or set named `name` (trimmed), or a 404 that lists the names there are: `what` names the kind ("question
 * bank"), `plural` starts the list ("Banks"), `field` is the form field the error belongs to.
 */
export function requireByName<T extends { name: string }>(
  all: T[],
  name: string,
  what: { what: string; plural: string; field: string },
): T {
  const found = all.find((x) => x.name === name.trim());
  if (!found)
    throw new ServiceError(
      `No ${what.what} named "${name}".${
        all.length ? ` ${what.plural}: ${all.map((x) => `"${x.name}"`).join(", ")}.` : " There are none yet."
      }`,
      what.field,
      404,
    );
  return found;
}
