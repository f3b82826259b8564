/**
 * Bulk imports that never block the app (docs/reliability.md, "Bulk imports"). A big import is read and validated
 * as a stream and written batch by batch as it is read, in many short IMMEDIATE transactions, each well under the
 * web server's busy timeout, with a pause after each one so that a waiting save gets the lock. Every row it writes
 * carries the run's id (`import_run`), and every reader hides rows whose run is still listed in `import_runs` by
 * reading the table's view (`visible_<table>`, db/schema-visible.ts, checked by the ESLint rule `concord/visible-rows`):
 * readers see nothing of the import until its last, short transaction deletes the run's row, and then
 * all of it at once. A run whose process died (kill -9, a crash, a power cut) is removed with all its rows by the
 * next import or the next start (`cleanAbandonedRuns`).
 */
import { eq, inArray, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { importRuns, studies } from "../../db/schema";
import type { Db, Tx } from "./db.server";
import { DatabaseBusyError, isBusy } from "./db.server";
import { ServiceError } from "./service-error";

/** Longest time one chunk holds the write lock; well under the web server's 200 ms busy timeout. */
export const CHUNK_BUDGET_MS = 25;
/** The pause after a chunk, as a share of the time it held the lock (at least 5 ms); measured by `npm run bench`. */
const PAUSE_RATIO = 0.5;
/**
 * The least pause: a writer waiting on its busy timeout retries 1, 3, 8 and 18 ms after it first found the lock
 * taken (SQLite's busy handler), so a pause of 5 ms after a chunk of at most 5 ms always holds one of its retries.
 */
const MIN_PAUSE_MS = 5;
/** A run that has not written for this long is abandoned even if a process with its pid exists (pid reuse). */
const HEARTBEAT_STALE_MS = 10 * 60 * 1000;
/** Rows removed per transaction when an abandoned run is cleaned. */
const CLEAN_BATCH = 2000;

/**
 * The tables (each with an `import_run` column) of rows that imports add under an existing parent — a
 * validation set's responses, a batch's verdicts, a bank's ratings, a review set's or bank's new items, a screening
 * study's new items, screen labels and recall tiers — children before the rows they reference: a run's rows there are removed with it, like its cases (decision 0010). A pending
 * item has nothing under it (no reader reaches it, so no review or rating can point at one).
 */
const ADDED_ROW_TABLES = [
  "judge_responses",
  "judge_response_imports",
  "grading_verdicts",
  "mentat_ratings",
  "review_items",
  "mentat_questions",
  "screening_recall_tiers",
  "screening_labels",
  "screening_items",
] as const;

/**
 * The condition that picks out rows of a run still in progress (negated): `col IS NULL OR col NOT IN (runs in
 * progress)`. Readers do not use it: they read the views of db/schema-visible.ts, which apply it; writers use it to
 * leave an import's hidden rows alone (or to find them).
 */
export function notPending(column: SQLiteColumn): SQL {
  return sql`(${column} is null or ${column} not in (select ${importRuns.id} from ${importRuns}))`;
}

type Run = typeof importRuns.$inferSelect;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}

function isAlive(run: Run, now: number): boolean {
  if (now - run.heartbeatAt > HEARTBEAT_STALE_MS) return false;
  return run.host !== hostname() || processAlive(run.pid);
}

/** Blocks this thread for `ms` without burning CPU (the import is synchronous; the pause lets other writers in). */
export function pauseThread(ms: number): void {
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function immediate<T>(db: Db, fn: (tx: Tx) => T): T {
  try {
    return db.transaction(fn, { behavior: "immediate" });
  } catch (error) {
    if (isBusy(error)) throw new DatabaseBusyError();
    throw error;
  }
}

/**
 * Removes a run's rows in short transactions (the rows added under existing parents, then sections, reference labels
 * and events before their cases), then its study if it created one, then the run itself.
 */
function removeRunRows(db: Db, runId: string): void {
  const $ = db.$client;
  const steps = [
    ...ADDED_ROW_TABLES.map((table) =>
      $.prepare(
        `delete from ${table} where rowid in (select rowid from ${table} where import_run = ? limit ${CLEAN_BATCH})`,
      ),
    ),
    $.prepare(
      `delete from case_sections where rowid in (select s.rowid from case_sections s join cases c on c.id = s.case_id where c.import_run = ? limit ${CLEAN_BATCH * 4})`,
    ),
    $.prepare(
      `delete from reference_labels where case_id in (select id from cases where import_run = ? and id in (select case_id from reference_labels) limit ${CLEAN_BATCH})`,
    ),
    $.prepare(`delete from events where id in (select id from events where import_run = ? limit ${CLEAN_BATCH})`),
    $.prepare(`delete from cases where id in (select id from cases where import_run = ? limit ${CLEAN_BATCH})`),
  ];
  for (const step of steps) {
    for (;;) {
      const changed = immediate(db, () => step.run(runId).changes);
      if (changed === 0) break;
      pauseThread(5);
    }
  }
  immediate(db, (tx) => {
    tx.delete(studies).where(eq(studies.importRun, runId)).run();
    tx.delete(importRuns).where(eq(importRuns.id, runId)).run();
  });
}

/**
 * Removes every run whose process is gone, with the rows it wrote; returns how many. Called at the server's start
 * and before every bulk import. A run still alive is left alone.
 */
export function cleanAbandonedRuns(db: Db, now: number = Date.now()): number {
  const dead = db
    .select()
    .from(importRuns)
    .all()
    .filter((r) => !isAlive(r, now));
  for (const run of dead) removeRunRows(db, run.id);
  return dead.length;
}

export interface ImportRun {
  id: string;
  /**
   * Writes `write` in short IMMEDIATE transactions over `items`, pausing between them; `afterChunk` runs after each
   * commit with the number of items of this call written so far. Called again with the next items (an import that
   * writes its file batch by batch as it reads it), it first pauses for what remains of the pause owed after the
   * last chunk of the previous call.
   */
  writeInChunks<T>(items: readonly T[], write: (tx: Tx, item: T) => void, afterChunk?: (done: number) => void): void;
  /**
   * One chunk: pays what remains of the pause owed after the last one, writes the first of `items` for at most the
   * chunk budget in one IMMEDIATE transaction, owes the pause after it, and returns how many it wrote (at least
   * one). An import that reads as it writes reads during the pause (`pauseLeft`) and then writes the next chunk, so
   * the pause costs it no time (docs/reliability.md, "Bulk imports").
   */
  writeChunk<T>(items: readonly T[], write: (tx: Tx, item: T) => void): number;
  /** Milliseconds left of the pause owed after the last chunk (0 when it is over). */
  pauseLeft(): number;
  /** The last transaction: its checks and writes, and the flip that makes every row of the run visible. */
  finish<R>(fn: (tx: Tx) => { result: R; commit: boolean }): R;
  /** Removes everything the run wrote (a refused or failed import). */
  abandon(): void;
}

/**
 * Starts a bulk import of `target` (one at a time per target): cleans abandoned runs, waits up to `waitMs` for a live
 * run of the same target to end, and registers this one. `prepare` runs in the same transaction as the registration
 * (e.g. to create the hidden study) and its result is returned with the run.
 */
export function beginImportRun<P>(
  db: Db,
  target: string,
  prepare: (tx: Tx, runId: string) => P,
  opts: { waitMs?: number; chunkBudgetMs?: number } = {},
): { run: ImportRun; prepared: P } {
  const nested = db.$client.inTransaction;
  cleanAbandonedRuns(db);
  const id = randomBytes(12).toString("base64url");
  const deadline = Date.now() + (nested ? 0 : (opts.waitMs ?? 10 * 60 * 1000));
  let prepared: P | undefined;
  for (;;) {
    const started = immediate(db, (tx) => {
      const now = Date.now();
      const other = tx.select().from(importRuns).where(eq(importRuns.target, target)).all();
      if (other.some((r) => isAlive(r, now))) return false;
      if (other.length)
        tx.delete(importRuns)
          .where(
            inArray(
              importRuns.id,
              other.map((r) => r.id),
            ),
          )
          .run();
      tx.insert(importRuns)
        .values({ id, target, pid: process.pid, host: hostname(), startedAt: now, heartbeatAt: now })
        .run();
      prepared = prepare(tx, id);
      return true;
    });
    if (started) break;
    if (Date.now() >= deadline)
      throw new ServiceError(
        "Another import into the same place is still running. Wait for it to finish, then run this one again.",
        undefined,
        409,
      );
    pauseThread(200);
    cleanAbandonedRuns(db);
  }
  const budget = opts.chunkBudgetMs ?? CHUNK_BUDGET_MS;
  const heartbeat = db.$client.prepare("update import_runs set heartbeat_at = ? where id = ?");
  const addCasesToCounters = db.$client.prepare(
    "insert into study_progress_counts (study_id, state, n) select study_id, progress_state, count(*) from cases where import_run = ? group by study_id, progress_state on conflict (study_id, state) do update set n = n + excluded.n",
  );
  // The pause owed after the last chunk of a call, paid before the next call's first chunk: an import that reads
  // its file batch by batch spends part of the pause reading.
  let pauseUntil = 0;
  /** One IMMEDIATE transaction writing items[from..] for at most the budget; the index after the last written. */
  const chunk = <T>(items: readonly T[], from: number, write: (tx: Tx, item: T) => void): number => {
    let next = from;
    const t0 = performance.now();
    immediate(db, (tx) => {
      do {
        // Check the clock every few rows: a row takes tens of microseconds.
        for (let k = 0; k < 8 && next < items.length; k++) write(tx, items[next++]!);
      } while (next < items.length && performance.now() - t0 < budget);
      heartbeat.run(Date.now(), id);
    });
    const pause = Math.max(MIN_PAUSE_MS, Math.ceil((performance.now() - t0) * PAUSE_RATIO));
    pauseUntil = performance.now() + pause;
    return next;
  };
  /** `fn` with the chunks' commits not waiting for the disk (see below); straight through inside a caller's transaction. */
  const unsynced = (fn: () => void) => {
    // The chunks' commits need not reach the disk one by one: their rows are hidden until the last transaction,
    // which runs with synchronous = FULL and so makes every earlier frame of the write-ahead log durable with it.
    // A power cut before it loses only hidden rows, removed as an abandoned run (docs/security.md, "Durability").
    if (nested) return fn();
    const sync = db.$client.pragma("synchronous", { simple: true }) as number;
    db.$client.pragma("synchronous = NORMAL");
    try {
      fn();
    } finally {
      db.$client.pragma(`synchronous = ${sync}`);
    }
  };
  const run: ImportRun = {
    id,
    pauseLeft: () => (nested ? 0 : Math.max(0, pauseUntil - performance.now())),
    writeChunk(items, write) {
      let written = 0;
      unsynced(() => {
        if (!nested) pauseThread(pauseUntil - performance.now());
        written = chunk(items, 0, write);
      });
      return written;
    },
    writeInChunks(items, write, afterChunk) {
      let next = 0;
      // Inside a caller's transaction (the demo seed) the lock is the caller's: write straight through, no pauses.
      unsynced(() => {
        if (!nested) pauseThread(pauseUntil - performance.now());
        while (next < items.length) {
          next = chunk(items, next, write);
          afterChunk?.(next);
          // A pause after each chunk, so that a writer waiting on its busy timeout finds the lock free.
          if (next < items.length && !nested) pauseThread(pauseUntil - performance.now());
        }
      });
    },
    finish(fn) {
      const { result, commit } = immediate(db, (tx) => {
        const out = fn(tx);
        if (out.commit) {
          // The study counters leave hidden cases out (migration import_counts_in_bulk): the run's cases are added
          // once, here, in the transaction that makes them visible, read by the index of cases by run.
          addCasesToCounters.run(id);
          tx.delete(importRuns).where(eq(importRuns.id, id)).run();
        }
        return out;
      });
      if (!commit) removeRunRows(db, id);
      return result;
    },
    abandon() {
      removeRunRows(db, id);
    },
  };
  return { run, prepared: prepared as P };
}
