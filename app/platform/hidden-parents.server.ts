/**
 * Imports that create their parent (a validation set, a screening study, a review set, a question bank) behind that
 * parent (docs/reliability.md, "Bulk imports"; decision 0010): the parent row is created with its `import_run` set,
 * and every reader of the parents skips such a row, so nothing under it is reached; the children follow in the
 * import run's short transactions; the last transaction checks that the parent is still this import's hidden one and
 * clears `import_run`, making the whole import visible at once. A failed import removes what it wrote; a killed one
 * leaves a hidden parent whose run is gone, removed by the next import of its kind and at the server's start
 * (`cleanHiddenParents`, after `cleanAbandonedRuns`).
 */
import { sql } from "drizzle-orm";
import type { Db, Tx } from "./db.server";
import { beginImportRun, cleanAbandonedRuns, pauseThread } from "./import-runs.server";
import { ServiceError } from "./service-error";

/** Where a kind of parent lives, and how what an import wrote under it is removed. */
export interface HiddenParent {
  /** The parent's table (columns `id` and `import_run`). */
  table: string;
  /**
   * Deletes of the rows under one parent, children before their parents, each taking the parent's id as its only
   * parameter and removing at most a batch (`… where id in (select id … limit 2000)`): each runs until it removes
   * nothing, in short transactions.
   */
  children: string[];
}

/**
 * Whether no parent of that name exists, inside the transaction that would create it: false when a visible one does
 * (the caller imports into it instead); refused (ServiceError) when another import is still writing one.
 */
export function nameFree(tx: Tx, parent: HiddenParent, name: string, what: string): boolean {
  const taken = tx.get<{ import_run: string | null } | undefined>(
    sql`select import_run from ${sql.identifier(parent.table)} where name = ${name}`,
  );
  if (taken?.import_run)
    throw new ServiceError(
      `Another import is still writing the new ${what} "${name}". Wait for it to finish, then import again.`,
      "name",
      409,
    );
  return !taken;
}

/** Removes a hidden parent and every row under it, in short transactions. */
export function removeHiddenParent(db: Db, parent: HiddenParent, id: number): void {
  const $ = db.$client;
  for (const sql of parent.children) {
    const step = $.prepare(sql);
    for (;;) {
      const changed = db.transaction(() => step.run(id).changes, { behavior: "immediate" });
      if (changed === 0) break;
      pauseThread(5);
    }
  }
  db.transaction(() => $.prepare(`delete from ${parent.table} where id = ? and import_run is not null`).run(id), {
    behavior: "immediate",
  });
}

/**
 * Removes every parent still hidden by an import whose run is gone (killed, crashed); returns how many. A live
 * import's run is still listed, so its parent is left alone. Call it after `cleanAbandonedRuns`, which removes the
 * runs of dead processes.
 */
export function cleanHiddenParents(db: Db, parents: readonly HiddenParent[]): number {
  let cleaned = 0;
  for (const parent of parents) {
    const orphans = db.$client
      .prepare(
        `select id from ${parent.table} where import_run is not null and import_run not in (select id from import_runs)`,
      )
      .pluck()
      .all() as number[];
    for (const id of orphans) removeHiddenParent(db, parent, id);
    cleaned += orphans.length;
  }
  return cleaned;
}

export interface HiddenImport<P extends { id: number }, T, R> {
  /** The import run's target: one import at a time per target (e.g. `judge-set:NAME`). */
  target: string;
  /** Creates the hidden parent (its `import_run` = `runId`) and its first rows; null when the parent exists now. */
  create(tx: Tx, runId: string): P | null;
  /**
   * The rows written in chunks once the parent exists: all at once, or in batches read one at a time (an import that
   * reads its file again as it writes, docs/reliability.md, "Bulk imports": each batch is written before the next
   * is read).
   */
  rows(created: P): readonly T[] | Iterable<readonly T[]>;
  /** Writes one row; `runId` marks rows that readers hide while the run is listed (the audit events). */
  write(tx: Tx, row: T, created: P, runId: string): void;
  /** The last transaction's writes (the audit events), after the guard and before the parent becomes visible. */
  finish(tx: Tx, created: P): R;
  chunkBudgetMs?: number;
  onChunk?: (done: number) => void;
}

export type HiddenImportOutcome<R> = { done: R } | { refused: string } | { exists: true };

/** The refusal of an import whose hidden parent was removed under it (it never became visible). */
export const INTERRUPTED = "The import was interrupted: nothing was imported.";

/**
 * Writes an import that creates its parent behind the hidden parent (see the module's comment). `exists` when the
 * parent was created meanwhile (or is still being written by another import); `refused` when another import of the
 * same target is running or the parent was removed before the last transaction. Throws what a write threw, after
 * removing everything written.
 */
export function importBehindHiddenParent<P extends { id: number }, T, R>(
  db: Db,
  parent: HiddenParent,
  spec: HiddenImport<P, T, R>,
): HiddenImportOutcome<R> {
  cleanAbandonedRuns(db);
  cleanHiddenParents(db, [parent]);
  let begun;
  try {
    begun = beginImportRun(db, spec.target, spec.create, { waitMs: 0, chunkBudgetMs: spec.chunkBudgetMs });
  } catch (error) {
    if (error instanceof ServiceError) return { refused: error.message };
    throw error;
  }
  const { run, prepared } = begun;
  if (!prepared) {
    run.abandon();
    return { exists: true };
  }
  const guard = db.$client.prepare(`select import_run from ${parent.table} where id = ?`).pluck();
  const reveal = db.$client.prepare(`update ${parent.table} set import_run = null where id = ?`);
  try {
    const rows = spec.rows(prepared);
    const write = (tx: Tx, row: T) => spec.write(tx, row, prepared, run.id);
    if (isRowArray(rows)) run.writeInChunks(rows, write, spec.onChunk);
    else {
      let before = 0;
      for (const batch of rows) {
        run.writeInChunks(batch, write, spec.onChunk && ((done) => spec.onChunk!(before + done)));
        before += batch.length;
      }
    }
    const done = run.finish((tx) => {
      // The guard, again in the transaction that makes the parent visible: it is still this import's hidden parent.
      if (guard.get(prepared.id) !== run.id) return { result: null, commit: false };
      reveal.run(prepared.id);
      return { result: { value: spec.finish(tx, prepared) }, commit: true };
    });
    if (done === null) {
      removeHiddenParent(db, parent, prepared.id);
      return { refused: INTERRUPTED };
    }
    return { done: done.value };
  } catch (error) {
    run.abandon();
    removeHiddenParent(db, parent, prepared.id);
    throw error;
  }
}

function isRowArray<T>(rows: readonly T[] | Iterable<readonly T[]>): rows is readonly T[] {
  return Array.isArray(rows);
}
