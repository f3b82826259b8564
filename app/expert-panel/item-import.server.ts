/**
 * The import of a file of items (MENTAT questions, case-review cases and seeds) into a bank or set, shared by both
 * expert protocols (docs/mentat.md#question-banks, docs/case-review.md). Items are matched by id: new ones are added,
 * changed ones updated, unchanged ones kept; an item that already has work (ratings, reviews) cannot change. Items
 * missing from the file are kept and move after the file's items, in their old order. Positions follow the file.
 */
import type { CsvIssue } from "./domain/expert-csv";
import type { Db, DbOrTx, Tx } from "../platform/db.server";
import { importBehindHiddenParent, nameFree, type HiddenParent } from "../platform/hidden-parents.server";
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
 * Imports a file's items into a new bank or set created hidden (docs/reliability.md, "Bulk imports"): `insert` creates
 * the parent with its `import_run`, the items and their "create" events follow in short transactions, and `finish`
 * (the parent's own event) runs in the last one, which makes everything visible at once. A refusal (another import
 * is writing that parent) is returned as the import's errors. Null when a visible parent
 * of that name exists now: the caller then imports into it in one transaction, checking everything again.
 */
export function importItemsBehindHiddenParent<I extends { externalId: string; line: number }, O extends StoredItem, R>(
  db: Db,
  parent: HiddenParent,
  spec: {
    /** The parent's name, and what it is called in a refusal ("review set"). */
    name: string;
    what: string;
    insert(tx: Tx, runId: string): { id: number };
    store(parentId: number): ItemStore<I, O>;
    /** The file's items, all new to the new parent, and the rules of `planItemImport`. */
    items: I[];
    rules: ItemRules<I, O>;
    finish(tx: Tx, parentId: number, plan: ItemImportPlan<I, O>): R;
    /** The file's warnings, kept in a refusal. */
    warnings: CsvIssue[];
    now: number;
    input: { actorId: string | null; chunkBudgetMs?: number; onChunk?: (done: number) => void };
  },
): R | { ok: false; errors: CsvIssue[]; warnings: CsvIssue[] } | null {
  // Inside a caller's transaction (the demo seed) the lock is the caller's: the caller's one transaction.
  if (db.$client.inTransaction) return null;
  const plan = planItemImport<I, O>(spec.items, [], spec.rules);
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
    finish: (tx, created) => spec.finish(tx, created.id, plan),
    chunkBudgetMs,
    onChunk,
  });
  if ("done" in outcome) return outcome.done;
  if ("refused" in outcome)
    return { ok: false, errors: [{ line: 0, message: outcome.refused }], warnings: spec.warnings };
  return null;
}
