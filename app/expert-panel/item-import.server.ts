/**
 * The import of a file of items (MENTAT questions, case-review cases and seeds) into a bank or set, shared by both
 * expert protocols (docs/mentat.md#question-banks, docs/case-review.md). Items are matched by id: new ones are added,
 * changed ones updated, unchanged ones kept; an item that already has work (ratings, reviews) cannot change. Items
 * missing from the file are kept and move after the file's items, in their old order. Positions follow the file.
 * Outside a dry run and a caller's transaction the import is written in the import run's short transactions,
 * behind a hidden parent or with the run's id on the added items (`importItemsInChunks`, docs/reliability.md, "Bulk
 * imports").
 */
import type { CsvIssue } from "./domain/expert-csv";
import type { Db, DbOrTx, Tx } from "../platform/db.server";
import { importBehindHiddenParent, nameFree, type HiddenParent } from "../platform/hidden-parents.server";
import { beginImportRun } from "../platform/import-runs.server";
import { ServiceError } from "../platform/service-error";
import { diff, recordEvent } from "../audit/audit.server";

/** A stored item as the import compares it. */
export interface StoredItem {
  id: number;
  externalId: string;
  contentHash: string;
  position: number;
}

export interface ItemPlan<I, O> {
  item: I;
  position: number;
  hash: string;
  old: O | undefined;
  kind: "create" | "same" | "update";
}

export interface ItemImportPlan<I, O> {
  plans: ItemPlan<I, O>[];
  errors: CsvIssue[];
  created: number;
  updated: number;
  unchanged: number;
}

interface ItemRules<I, O> {
  hash(item: I): string;
  /** Further fields that must match for an item with the same hash and position to count as unchanged. */
  sameExtra?(item: I, old: O): boolean;
  hasWork(oldId: number): boolean;
  /** The error for a changed item that already has work. */
  locked(item: I): string;
}

/** What an import reports of a plan: how many items are new, changed and unchanged, of how many, and the warnings. */
export function planCounts<W>(plan: ItemImportPlan<unknown, unknown>, warnings: W[]) {
  const { created, updated, unchanged } = plan;
  return { created, updated, unchanged, total: plan.plans.length, warnings };
}

/** Compares the file's items with the stored ones; nothing is written. */
export function planItemImport<I extends { externalId: string; line: number }, O extends StoredItem>(
  items: I[],
  existing: O[],
  rules: ItemRules<I, O>,
): ItemImportPlan<I, O> {
  const byId = new Map(existing.map((o) => [o.externalId, o]));
  let created = 0;
  let updated = 0;
  let unchanged = 0;
  const plans = items.map((item, position): ItemPlan<I, O> => {
    const hash = rules.hash(item);
    const old = byId.get(item.externalId);
    if (!old) {
      created++;
      return { item, position, hash, old, kind: "create" };
    }
    if (old.contentHash === hash && old.position === position && (rules.sameExtra?.(item, old) ?? true)) {
      unchanged++;
      return { item, position, hash, old, kind: "same" };
    }
    updated++;
    return { item, position, hash, old, kind: "update" };
  });
  return { plans, errors: lockedItems(plans, rules), created, updated, unchanged };
}

/** The guard: the changed items that already have work (ratings, reviews), which cannot change. */
function lockedItems<I extends { line: number }, O extends StoredItem>(
  plans: ItemPlan<I, O>[],
  rules: ItemRules<I, O>,
): CsvIssue[] {
  return plans
    .filter((p) => p.kind === "update" && p.old!.contentHash !== p.hash && rules.hasWork(p.old!.id))
    .map((p) => ({ line: p.item.line, message: rules.locked(p.item) }));
}

/** Where a bank or set keeps its items, and what the audit trail says of each. */
export interface ItemStore<I, O> {
  entity: string;
  setPosition(tx: DbOrTx, id: number, position: number): void;
  /** Inserts the item (with the run's id, hidden while the run is listed) and returns its id. */
  create(tx: DbOrTx, plan: ItemPlan<I, O>, importRun: string | null): number;
  update(tx: DbOrTx, plan: ItemPlan<I, O>, old: O): void;
  createdChanges(plan: ItemPlan<I, O>): object;
  /** The audited fields of an item before and after. */
  audited(plan: ItemPlan<I, O>, old: O): [Record<string, unknown>, Record<string, unknown>];
}

/** Writes a plan inside the caller's transaction, one audit event per created or changed item. */
export function applyItemImport<I extends { externalId: string }, O extends StoredItem>(
  tx: DbOrTx,
  store: ItemStore<I, O>,
  plan: ItemImportPlan<I, O>,
  existing: O[],
  input: { actorId: string | null; now: number },
): void {
  moveMissingItems(tx, store, plan, existing);
  for (const p of plan.plans) writeItemPlan(tx, store, p, input);
}

/** The stored items the file does not list keep their order, after the file's items. */
function moveMissingItems<I extends { externalId: string }, O extends StoredItem>(
  tx: DbOrTx,
  store: ItemStore<I, O>,
  plan: ItemImportPlan<I, O>,
  existing: O[],
): void {
  const inFile = new Set(plan.plans.map((p) => p.item.externalId));
  existing
    .filter((o) => !inFile.has(o.externalId))
    .sort((a, b) => a.position - b.position)
    .forEach((o, k) => store.setPosition(tx, o.id, plan.plans.length + k));
}

/**
 * Writes one item of a plan with its audit event; `importRun` hides the event with the run's other rows until the
 * run ends, and `itemRun` the new item itself (an item added to an existing parent, `addItemsInChunks`; under a
 * hidden parent the parent hides it).
 */
function writeItemPlan<I, O extends StoredItem>(
  tx: DbOrTx,
  store: ItemStore<I, O>,
  p: ItemPlan<I, O>,
  input: { actorId: string | null; now: number; importRun?: string; itemRun?: string },
): void {
  const event = { actorId: input.actorId, entity: store.entity, at: input.now, importRun: input.importRun };
  if (p.kind === "create") {
    const id = store.create(tx, p, input.itemRun ?? null);
    recordEvent(tx, { ...event, entityId: id, action: "create", changes: store.createdChanges(p) });
  } else if (p.kind === "update") {
    store.update(tx, p, p.old!);
    const [before, after] = store.audited(p, p.old!);
    recordEvent(tx, { ...event, entityId: p.old!.id, action: "update", changes: diff(before, after) });
  }
}

type Refusal = { ok: false; errors: CsvIssue[]; warnings: CsvIssue[] };

/** A bank or set and its items, as an import written in chunks reads and writes them. */
export interface ChunkedItemImport<I, O, P extends { id: number }, R> {
  /** The parent's name, and what it is called in a refusal ("review set"). */
  name: string;
  what: string;
  /** The visible parent of that name (one an import is still creating is skipped). */
  find(tx: DbOrTx): P | undefined;
  /** Creates the new parent hidden (its `import_run` = `runId`). */
  insert(tx: Tx, runId: string): { id: number };
  /** The parent's visible items (those an import is still adding are skipped: the views of db/schema-visible.ts). */
  existing(tx: DbOrTx, parentId: number): O[];
  store(parentId: number): ItemStore<I, O>;
  items: I[];
  rules(tx: DbOrTx): ItemRules<I, O>;
  /**
   * The last transaction's writes of the parent, after the guard, and the result: `parent` is the existing parent
   * as it is in that transaction, or null when the import created it (write its "create" event).
   */
  finish(tx: Tx, parentId: number, plan: ItemImportPlan<I, O>, parent: P | null): R;
  /** The file's warnings, kept in a refusal. */
  warnings: CsvIssue[];
  now: number;
  input: { actorId: string | null; chunkBudgetMs?: number; onChunk?: (done: number) => void };
}

/**
 * Imports a file's items into a bank or set in the import run's short transactions (docs/reliability.md, "Bulk
 * imports"): a new parent is created hidden (`importItemsBehindHiddenParent`); into an existing one, the new items
 * are added hidden by the run's id (`addItemsInChunks`). Either way readers see nothing until the last transaction,
 * and then all of it. Null inside a caller's transaction (the demo seed), or when the parent vanished meanwhile:
 * the caller then imports in one transaction, checking everything again.
 */
export function importItemsInChunks<
  I extends { externalId: string; line: number },
  O extends StoredItem,
  P extends { id: number },
  R,
>(db: Db, parent: HiddenParent, spec: ChunkedItemImport<I, O, P, R>): R | Refusal | null {
  if (db.$client.inTransaction) return null;
  if (!spec.find(db)) {
    const created = importItemsBehindHiddenParent(db, parent, spec);
    if (created) return created;
    // Created meanwhile by another import: the new items go into it.
  }
  return addItemsInChunks(db, `${parent.table}:${spec.name}`, spec);
}

/**
 * Adds a file's items to an existing bank or set: the file is compared with the stored items and the guard checked
 * before any lock (a refusal writes nothing); the new items and their "create" events are written in the run's
 * chunks, each carrying the run's id, which hides them from every reader; the last transaction checks again that the
 * parent and its items are still as the import read them and that no changed item has work now, writes the changed
 * items, the moved positions and the parent's own changes, and ends the run: everything becomes visible at once.
 * Its length grows with the number of existing items, not with the number of new ones.
 */
function addItemsInChunks<
  I extends { externalId: string; line: number },
  O extends StoredItem,
  P extends { id: number },
  R,
>(db: Db, target: string, spec: ChunkedItemImport<I, O, P, R>): R | Refusal | null {
  const refusal = (errors: CsvIssue[]): Refusal => ({ ok: false, errors, warnings: spec.warnings });
  const found = spec.find(db);
  if (!found) return null;
  const existing = spec.existing(db, found.id);
  const plan = planItemImport<I, O>(spec.items, existing, spec.rules(db));
  if (plan.errors.length) return refusal(plan.errors);
  const { actorId, chunkBudgetMs, onChunk } = spec.input;
  let begun;
  try {
    begun = beginImportRun(db, target, (tx) => spec.find(tx)?.id === found.id, { waitMs: 0, chunkBudgetMs });
  } catch (error) {
    if (error instanceof ServiceError) return refusal([{ line: 0, message: error.message }]);
    throw error;
  }
  const { run, prepared } = begun;
  if (!prepared) {
    run.abandon();
    return null;
  }
  const store = spec.store(found.id);
  const before = rowsById(existing);
  try {
    const added = plan.plans.filter((p) => p.kind === "create");
    run.writeInChunks(
      added,
      (tx, p) => writeItemPlan(tx, store, p, { actorId, now: spec.now, importRun: run.id, itemRun: run.id }),
      onChunk,
    );
    return run.finish<R | Refusal>((tx) => {
      // The guard, again in the transaction that writes the changed items and makes the new ones visible.
      const parentNow = spec.find(tx);
      const now = parentNow?.id === found.id ? spec.existing(tx, found.id) : null;
      if (!now || rowsById(now) !== before)
        return {
          result: refusal([
            {
              line: 0,
              message: `The ${spec.what} "${spec.name}" changed while the file was being imported: nothing was imported. Import the file again.`,
            },
          ]),
          commit: false,
        };
      const locked = lockedItems(plan.plans, spec.rules(tx));
      if (locked.length) return { result: refusal(locked), commit: false };
      moveMissingItems(tx, store, plan, existing);
      for (const p of plan.plans) if (p.kind === "update") writeItemPlan(tx, store, p, { actorId, now: spec.now });
      return { result: spec.finish(tx, found.id, plan, parentNow!), commit: true };
    });
  } catch (error) {
    run.abandon();
    throw error;
  }
}

/** The stored items as one string, to tell whether they changed between two reads. */
function rowsById(rows: StoredItem[]): string {
  return JSON.stringify([...rows].sort((a, b) => a.id - b.id));
}

/**
 * Imports a file's items into a new bank or set created hidden (docs/reliability.md, "Bulk imports"): `insert` creates
 * the parent with its `import_run`, the items and their "create" events follow in short transactions, and `finish`
 * (the parent's own event) runs in the last one, which makes everything visible at once. A refusal (another import
 * is writing that parent) is returned as the import's errors. Null when a visible parent of that name exists now.
 */
function importItemsBehindHiddenParent<
  I extends { externalId: string; line: number },
  O extends StoredItem,
  P extends { id: number },
  R,
>(db: Db, parent: HiddenParent, spec: ChunkedItemImport<I, O, P, R>): R | Refusal | null {
  const plan = planItemImport<I, O>(spec.items, [], spec.rules(db));
  let store: ItemStore<I, O> | undefined;
  const { actorId, chunkBudgetMs, onChunk } = spec.input;
  const outcome = importBehindHiddenParent(db, parent, {
    target: `${parent.table}:${spec.name}`,
    create: (tx, runId) => (nameFree(tx, parent, spec.name, spec.what) ? spec.insert(tx, runId) : null),
    rows: () => plan.plans,
    write: (tx, p, created, importRun) => {
      store ??= spec.store(created.id);
      writeItemPlan(tx, store, p, { actorId, now: spec.now, importRun });
    },
    finish: (tx, created) => spec.finish(tx, created.id, plan, null),
    chunkBudgetMs,
    onChunk,
  });
  if ("done" in outcome) return outcome.done;
  if ("refused" in outcome)
    return { ok: false, errors: [{ line: 0, message: outcome.refused }], warnings: spec.warnings };
  return null;
}
