/**
 * The import of a file of items (MENTAT questions, case-review cases and seeds) into a bank or set, shared by both
 * expert protocols (docs/mentat.md#question-banks, docs/case-review.md). Items are matched by id: new ones are added,
 * changed ones updated, unchanged ones kept; an item that already has work (ratings, reviews) cannot change. Items
 * missing from the file are kept and move after the file's items, in their old order. Positions follow the file.
 */
import type { CsvIssue } from "./domain/expert-csv";
import type { Db, DbOrTx, Tx } from "../platform/db.server";
import {
  importBehindHiddenParent,
  type HiddenImportOutcome,
  type HiddenParent,
} from "../platform/hidden-parents.server";
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

/** Compares the file's items with the stored ones; nothing is written. */
export function planItemImport<I extends { externalId: string; line: number }, O extends StoredItem>(
  items: I[],
  existing: O[],
  rules: {
    hash(item: I): string;
    /** Further fields that must match for an item with the same hash and position to count as unchanged. */
    sameExtra?(item: I, old: O): boolean;
    hasWork(oldId: number): boolean;
    /** The error for a changed item that already has work. */
    locked(item: I): string;
  },
): ItemImportPlan<I, O> {
  const byId = new Map(existing.map((o) => [o.externalId, o]));
  const errors: CsvIssue[] = [];
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
    if (old.contentHash !== hash && rules.hasWork(old.id))
      errors.push({ line: item.line, message: rules.locked(item) });
    updated++;
    return { item, position, hash, old, kind: "update" };
  });
  return { plans, errors, created, updated, unchanged };
}

/** Where a bank or set keeps its items, and what the audit trail says of each. */
export interface ItemStore<I, O> {
  entity: string;
  setPosition(tx: DbOrTx, id: number, position: number): void;
  /** Inserts the item and returns its id. */
  create(tx: DbOrTx, plan: ItemPlan<I, O>): number;
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
  const inFile = new Set(plan.plans.map((p) => p.item.externalId));
  existing
    .filter((o) => !inFile.has(o.externalId))
    .sort((a, b) => a.position - b.position)
    .forEach((o, k) => store.setPosition(tx, o.id, plan.plans.length + k));
  for (const p of plan.plans) writeItemPlan(tx, store, p, input);
}

/**
 * Writes one item of a plan with its audit event; `importRun` hides the event with the run's other rows until the
 * run ends (an import behind a hidden parent, `importItemsBehindHiddenParent`).
 */
function writeItemPlan<I, O extends StoredItem>(
  tx: DbOrTx,
  store: ItemStore<I, O>,
  p: ItemPlan<I, O>,
  input: { actorId: string | null; now: number; importRun?: string },
): void {
  const event = { actorId: input.actorId, entity: store.entity, at: input.now, importRun: input.importRun };
  if (p.kind === "create") {
    const id = store.create(tx, p);
    recordEvent(tx, { ...event, entityId: id, action: "create", changes: store.createdChanges(p) });
  } else if (p.kind === "update") {
    store.update(tx, p, p.old!);
    const [before, after] = store.audited(p, p.old!);
    recordEvent(tx, { ...event, entityId: p.old!.id, action: "update", changes: diff(before, after) });
  }
}

/**
 * Imports a file's items into a new bank or set created hidden (docs/reliability.md, "Bulk imports"): `create`
 * inserts the parent with its `import_run`, the items and their "create" events follow in short transactions, and
 * `finish` (the parent's own event) runs in the last one, which makes everything visible at once.
 */
export function importItemsBehindHiddenParent<I, O extends StoredItem, R>(
  db: Db,
  parent: HiddenParent,
  spec: {
    target: string;
    create(tx: Tx, runId: string): { id: number } | null;
    store(parentId: number): ItemStore<I, O>;
    plan: ItemImportPlan<I, O>;
    finish(tx: Tx, parentId: number): R;
    actorId: string | null;
    now: number;
    chunkBudgetMs?: number;
    onChunk?: (done: number) => void;
  },
): HiddenImportOutcome<R> {
  let store: ItemStore<I, O> | undefined;
  return importBehindHiddenParent(db, parent, {
    target: spec.target,
    create: spec.create,
    rows: () => spec.plan.plans,
    write: (tx, p, created, importRun) => {
      store ??= spec.store(created.id);
      writeItemPlan(tx, store, p, { actorId: spec.actorId, now: spec.now, importRun });
    },
    finish: (tx, created) => spec.finish(tx, created.id),
    chunkBudgetMs: spec.chunkBudgetMs,
    onChunk: spec.onChunk,
  });
}
