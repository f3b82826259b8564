/**
 * The import of a file of items (MENTAT questions, case-review cases and seeds) into a bank or set, shared by both
 * expert protocols (docs/mentat.md#question-banks, docs/case-review.md). Items are matched by id: new ones are added,
 * changed ones updated, unchanged ones kept; an item that already has work (ratings, reviews) cannot change. Items
 * missing from the file are kept and move after the file's items, in their old order. Positions follow the file.
 * The file is read in two passes, checked whole and then written, holding neither the file nor its items
 * (`importItemFile`, docs/reliability.md, "Memory bounded by the longest line"). Outside a dry run and a caller's
 * transaction the import is written in the import run's short transactions, behind a hidden parent or with the run's
 * id on the added items (docs/reliability.md, "Bulk imports").
 */
import type { CsvIssue, CsvReport } from "./domain/expert-csv";
import type { Db, DbOrTx, Tx } from "../platform/db.server";
import { importBehindHiddenParent, nameFree, type HiddenParent } from "../platform/hidden-parents.server";
import { beginImportRun } from "../platform/import-runs.server";
import { ServiceError } from "../platform/service-error";
import { diff, recordEvent } from "../audit/audit.server";
import { FILE_CHANGED_MESSAGE, FileChangedError, secondPass, type ImportSource } from "../formats/import-source";
import { writeTransaction } from "../work-items/engine.server";

/** A stored item as the import compares it. */
export interface StoredItem {
  id: number;
  externalId: string;
  contentHash: string;
  position: number;
}

/**
 * An item file, read row by row (docs/reliability.md, "Memory bounded by the longest line"): each `read` reads the
 * input again from its start and hands on its valid items one at a time, reporting its issues into `report` as the
 * whole-file parser lists them. The first pass checks the file and keeps of each item only `CheckedItem`; the second
 * reads it again and writes it (`itemBatches`), so neither holds the file or its items.
 */
export interface ItemFile<I> {
  /** The input (the command line's stream, or a page's text through `textSource`), for the sha256 of each pass. */
  source: ImportSource;
  read(report: CsvReport): Iterable<I>;
}

/** What the first pass keeps of an item: its id, line, content hash, and the hash of every field written. */
export interface CheckedItem {
  externalId: string;
  line: number;
  hash: string;
  passHash: string;
}

/** One item of a plan, as kept between the passes: no content, which the second pass reads again. */
export interface ItemEntry<O> extends CheckedItem {
  position: number;
  old: O | undefined;
  kind: "create" | "same" | "update";
}

/** One item of a plan with its content, as the second pass hands it on to be written. */
export interface ItemPlan<I, O> extends ItemEntry<O> {
  item: I;
}

export interface ItemImportPlan<O> {
  plans: ItemEntry<O>[];
  errors: CsvIssue[];
  created: number;
  updated: number;
  unchanged: number;
}

interface ItemRules<I, O> {
  hash(item: I): string;
  /**
   * The hash of every field the import writes (the second pass compares it with the first's), and the same of a
   * stored item: an item with the same content hash and position counts as unchanged only when these match too
   * (a question's notes). By default the content hash.
   */
  passHash?(item: I): string;
  storedPassHash?(old: O): string;
  hasWork(oldId: number): boolean;
  /** The error for a changed item that already has work. */
  locked(externalId: string): string;
}

/** What an import reports of a plan: how many items are new, changed and unchanged, of how many, and the warnings. */
export function planCounts<W>(plan: ItemImportPlan<unknown>, warnings: W[]) {
  const { created, updated, unchanged } = plan;
  return { created, updated, unchanged, total: plan.plans.length, warnings };
}

/** The first pass's answer: its items as `CheckedItem`, its issues, and the sha256 of the bytes it read. */
interface CheckedFile {
  items: CheckedItem[];
  errors: CsvIssue[];
  warnings: CsvIssue[];
  sha256: string | null;
}

/** The first pass: the file read and checked whole, keeping of each item its `CheckedItem`; nothing is written. */
function checkItemFile<I extends { externalId: string; line: number }>(
  file: ItemFile<I>,
  rules: Pick<ItemRules<I, unknown>, "hash" | "passHash">,
): CheckedFile {
  const report: CsvReport = { errors: [], warnings: [] };
  const items: CheckedItem[] = [];
  for (const item of file.read(report)) {
    const hash = rules.hash(item);
    items.push({ externalId: item.externalId, line: item.line, hash, passHash: rules.passHash?.(item) ?? hash });
  }
  return { items, errors: report.errors, warnings: report.warnings, sha256: file.source.sha256() };
}

/** Compares the file's items with the stored ones; nothing is written. */
function planItemImport<O extends StoredItem>(
  items: readonly CheckedItem[],
  existing: O[],
  rules: ItemRules<never, O>,
): ItemImportPlan<O> {
  const byId = new Map(existing.map((o) => [o.externalId, o]));
  let created = 0;
  let updated = 0;
  let unchanged = 0;
  const plans = items.map((item, position): ItemEntry<O> => {
    const old = byId.get(item.externalId);
    if (!old) {
      created++;
      return { ...item, position, old, kind: "create" };
    }
    const stored = rules.storedPassHash?.(old) ?? old.contentHash;
    if (old.contentHash === item.hash && old.position === position && stored === item.passHash) {
      unchanged++;
      return { ...item, position, old, kind: "same" };
    }
    updated++;
    return { ...item, position, old, kind: "update" };
  });
  return { plans, errors: lockedItems(plans, rules), created, updated, unchanged };
}

/** The guard: the changed items that already have work (ratings, reviews), which cannot change. */
function lockedItems<O extends StoredItem>(plans: ItemEntry<O>[], rules: ItemRules<never, O>): CsvIssue[] {
  return plans
    .filter((p) => p.kind === "update" && p.old!.contentHash !== p.hash && rules.hasWork(p.old!.id))
    .map((p) => ({ line: p.line, message: rules.locked(p.externalId) }));
}

/**
 * The second pass: the file read again through `secondPass` (app/formats/import-source.ts), each item checked to be
 * the one the first pass checked (same id and hash of every field, in the same place; the same bytes), handed on
 * with its plan in batches of 500, each written before the next is read. A file changed between the passes throws
 * `FileChangedError`.
 */
function* itemBatches<I extends { externalId: string }, O>(
  file: ItemFile<I>,
  firstSha256: string | null,
  plan: ItemImportPlan<O>,
  rules: Pick<ItemRules<I, O>, "hash" | "passHash">,
): Generator<ItemPlan<I, O>[]> {
  function* items(): Generator<I> {
    const report: CsvReport = { errors: [], warnings: [] };
    for (const item of file.read(report)) {
      report.warnings.length = 0;
      yield item;
    }
    if (report.errors.length) throw new FileChangedError();
  }
  let at = 0;
  for (const batch of secondPass({
    source: file.source,
    records: items,
    keyOf: (item) => ({ key: item.externalId, hash: rules.passHash?.(item) ?? rules.hash(item) }),
    first: plan.plans.map((p) => ({ key: p.externalId, hash: p.passHash })),
    firstSha256,
  }))
    yield batch.map((item) => ({ ...plan.plans[at++]!, item }));
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

/** The stored items the file does not list keep their order, after the file's items. */
function moveMissingItems<I, O extends StoredItem>(
  tx: DbOrTx,
  store: ItemStore<I, O>,
  plan: ItemImportPlan<O>,
  existing: O[],
): void {
  const inFile = new Set(plan.plans.map((p) => p.externalId));
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

/** A bank or set and its item file, as the import reads and writes them. */
export interface ItemFileImport<I, O, P extends { id: number }, R> {
  /** The parent's name, and what it is called in a refusal ("review set"). */
  name: string;
  what: string;
  /** The visible parent of that name (one an import is still creating is skipped). */
  find(tx: DbOrTx): P | undefined;
  /** Creates the new parent: hidden (its `import_run` = `runId`) when written in chunks, visible with null. */
  insert(tx: Tx, runId: string | null): { id: number };
  /** The parent's visible items (those an import is still adding are skipped: the views of db/schema-visible.ts). */
  existing(tx: DbOrTx, parentId: number): O[];
  store(parentId: number): ItemStore<I, O>;
  file: ItemFile<I>;
  rules(tx: DbOrTx): ItemRules<I, O>;
  /**
   * The parent's own writes, after the guard: `parent` is the existing parent as it is in that transaction, or
   * null when the import created it (write its "create" event). In the last transaction of an import in chunks; in
   * the one transaction's, before the items.
   */
  opened(tx: Tx, parentId: number, parent: P | null): void;
  /** The import's answer: `parentId` null in a dry run of a new parent; `warnings` the file's. */
  result(parentId: number | null, plan: ItemImportPlan<O>, parent: P | null, written: boolean, warnings: CsvIssue[]): R;
  now: number;
  input: { actorId: string | null; dryRun?: boolean; chunkBudgetMs?: number; onChunk?: (done: number) => void };
}

/**
 * Imports an item file into a bank or set (docs/reliability.md, "Imports that create their parent" and "Imports into
 * an existing set or bank"), in two passes over the file (docs/reliability.md, "Memory bounded by the longest line"):
 * the first checks it whole and keeps of each item its id, line and hashes; a file with an error writes nothing.
 * Then the file is read again (`itemBatches`) and written in the import run's short transactions: a new parent is
 * created hidden (`importItemsBehindHiddenParent`); into an existing one, the new items are added hidden by the run's
 * id (`addItemsInChunks`). Either way readers see nothing until the last transaction, and then all of it. A dry run,
 * a caller's transaction (the demo seed), and a parent that vanished meanwhile take one transaction. A file changed
 * between the passes is refused (`FILE: the file changed while it was being imported…`) and what was written removed.
 */
export function importItemFile<
  I extends { externalId: string; line: number },
  O extends StoredItem,
  P extends { id: number },
  R,
>(db: Db, parent: HiddenParent, spec: ItemFileImport<I, O, P, R>): R | Refusal {
  const checked = checkItemFile(spec.file, spec.rules(db));
  const refusal = (errors: CsvIssue[]): Refusal => ({ ok: false, errors, warnings: checked.warnings });
  if (checked.errors.length) return refusal(checked.errors);
  const pass = { file: spec.file, sha256: checked.sha256 };
  try {
    if (!spec.input.dryRun && !db.$client.inTransaction) {
      if (!spec.find(db)) {
        const created = importItemsBehindHiddenParent(db, parent, spec, checked, pass, refusal);
        if (created) return created;
        // Created meanwhile by another import: the new items go into it.
      }
      const added = addItemsInChunks(db, `${parent.table}:${spec.name}`, spec, checked, pass, refusal);
      if (added) return added;
    }
    return writeTransaction(db, (tx): R | Refusal => {
      const found = spec.find(tx) ?? null;
      const existing = found ? spec.existing(tx, found.id) : [];
      const rules = spec.rules(tx);
      const plan = planItemImport<O>(checked.items, existing, rules);
      if (plan.errors.length) return refusal(plan.errors);
      if (spec.input.dryRun) return spec.result(found?.id ?? null, plan, found, false, checked.warnings);
      const parentId = found ? found.id : spec.insert(tx, null).id;
      spec.opened(tx, parentId, found);
      const store = spec.store(parentId);
      const { actorId } = spec.input;
      moveMissingItems(tx, store, plan, existing);
      for (const batch of itemBatches(pass.file, pass.sha256, plan, rules))
        for (const p of batch) writeItemPlan(tx, store, p, { actorId, now: spec.now });
      return spec.result(parentId, plan, found, true, checked.warnings);
    });
  } catch (error) {
    if (error instanceof FileChangedError) return refusal([{ line: 0, message: FILE_CHANGED_MESSAGE }]);
    throw error;
  }
}

/**
 * Adds a file's items to an existing bank or set: the file is compared with the stored items and the guard checked
 * before any lock (a refusal writes nothing); the file is read again and its new items and their "create" events
 * written in the run's chunks, each carrying the run's id, which hides them from every reader; the items it changes
 * are kept (they are at most the stored items) for the last transaction, which checks again that the parent and its
 * items are still as the import read them and that no changed item has work now, writes the changed items, the
 * moved positions and the parent's own changes, and ends the run: everything becomes visible at once. Its length
 * grows with the number of existing items, not with the number of new ones. Null when the parent vanished.
 */
function addItemsInChunks<
  I extends { externalId: string; line: number },
  O extends StoredItem,
  P extends { id: number },
  R,
>(
  db: Db,
  target: string,
  spec: ItemFileImport<I, O, P, R>,
  checked: CheckedFile,
  pass: { file: ItemFile<I>; sha256: string | null },
  refusal: (errors: CsvIssue[]) => Refusal,
): R | Refusal | null {
  const found = spec.find(db);
  if (!found) return null;
  const existing = spec.existing(db, found.id);
  const rules = spec.rules(db);
  const plan = planItemImport<O>(checked.items, existing, rules);
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
    const updates: ItemPlan<I, O>[] = [];
    let written = 0;
    const write = (tx: Tx, p: ItemPlan<I, O>) =>
      writeItemPlan(tx, store, p, { actorId, now: spec.now, importRun: run.id, itemRun: run.id });
    for (const batch of itemBatches(pass.file, pass.sha256, plan, rules)) {
      const added = batch.filter((p) => p.kind === "create");
      for (const p of batch) if (p.kind === "update") updates.push(p);
      if (!added.length) continue;
      const offset = written;
      run.writeInChunks(added, write, onChunk && ((done) => onChunk(offset + done)));
      written += added.length;
    }
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
      for (const p of updates) writeItemPlan(tx, store, p, { actorId, now: spec.now });
      spec.opened(tx, found.id, parentNow!);
      return { result: spec.result(found.id, plan, parentNow!, true, checked.warnings), commit: true };
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
 * the parent with its `import_run`, the file is read again and its items and their "create" events follow in short
 * transactions, and the parent's own event runs in the last one, which makes everything visible at once. A refusal
 * (another import is writing that parent) is returned as the import's errors. Null when a visible parent of that
 * name exists now.
 */
function importItemsBehindHiddenParent<
  I extends { externalId: string; line: number },
  O extends StoredItem,
  P extends { id: number },
  R,
>(
  db: Db,
  parent: HiddenParent,
  spec: ItemFileImport<I, O, P, R>,
  checked: CheckedFile,
  pass: { file: ItemFile<I>; sha256: string | null },
  refusal: (errors: CsvIssue[]) => Refusal,
): R | Refusal | null {
  const rules = spec.rules(db);
  const plan = planItemImport<O>(checked.items, [], rules);
  let store: ItemStore<I, O> | undefined;
  const { actorId, chunkBudgetMs, onChunk } = spec.input;
  const outcome = importBehindHiddenParent(db, parent, {
    target: `${parent.table}:${spec.name}`,
    create: (tx, runId) => (nameFree(tx, parent, spec.name, spec.what) ? spec.insert(tx, runId) : null),
    rows: () => itemBatches(pass.file, pass.sha256, plan, rules),
    write: (tx, p, created, importRun) => {
      store ??= spec.store(created.id);
      writeItemPlan(tx, store, p, { actorId, now: spec.now, importRun });
    },
    finish: (tx, created) => {
      spec.opened(tx, created.id, null);
      return spec.result(created.id, plan, null, true, checked.warnings);
    },
    chunkBudgetMs,
    onChunk,
  });
  if ("done" in outcome) return outcome.done;
  if ("refused" in outcome) return refusal([{ line: 0, message: outcome.refused }]);
  return null;
}
