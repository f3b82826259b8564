import { existsSync, statSync } from "node:fs";
import { signInConfigProblem } from "../accounts/sign-in-config";
import { applyWebBusyTimeout, DatabaseBusyError, getDb } from "./db.server";
import { databasePath } from "./db.server";
import { interruptStaleJobs } from "./jobs.server";
import { cleanAbandonedRuns } from "./import-runs.server";
import { cleanHiddenParents } from "./hidden-parents.server";
import { count } from "drizzle-orm";
import { users } from "../../db/schema";
import { visibleStudies } from "../../db/schema-visible";
import type { Db } from "./db.server";
import { registered, type PeriodicTask } from "./registry.server";
import { maxOf } from "../stats/extremes";
import { fullIntegrityCheck, pragmaOn } from "./integrity.server";

/** No user and no study yet. */
export function isFreshDatabase(db: Db): boolean {
  return (
    db.select({ n: count() }).from(users).get()!.n === 0 &&
    db.select({ n: count() }).from(visibleStudies).get()!.n === 0
  );
}

/**
 * Run once when the server starts: opening the database applies pending migrations; a fresh database gets the demo
 * study unless CONCORD_DEMO=0. Prints where to go and, for a demo database, the demo accounts.
 */
export async function startup({ baseUrl, log }: { baseUrl: string; log: (line: string) => void }) {
  // A half-written sign-in configuration stops the start (docs/deploying.md, "Signing in with the institution's account").
  const signIn = signInConfigProblem();
  if (signIn) throw new StartupRefusal(signIn);
  checkDatabaseIntegrity(databasePath());
  for (const task of registered().periodic) {
    const problem = task.problem?.();
    if (problem) throw new StartupRefusal(problem);
  }
  // A save waits at most a moment for another process's write lock; then the page retries (docs/architecture.md).
  applyWebBusyTimeout();
  const db = getDb();
  // The protocols' hidden-import tables and the demo, registered by app/protocols.server.ts.
  const { hiddenParents, demo, periodic } = registered();
  log(`Database: ${databasePath()}`);
  // Jobs an earlier server left running can never finish: they are marked interrupted, to be started again.
  // The protocols' periodic work runs now and then every few seconds: e.g. pairs whose grace period ended while the
  // server was down lock now, so that a pair nobody looks at still locks on time (docs/safe-psych.md, "Second
  // chances"); every reader settles too.
  for (const task of periodic) {
    runTask(db, task, log);
    setInterval(() => runTask(db, task, log), task.everyMs).unref();
  }
  const interrupted = interruptStaleJobs(db);
  if (interrupted) log(`Marked ${interrupted} background job(s) of the previous run as interrupted.`);
  // An import killed half way left hidden rows; remove them (docs/reliability.md, "Bulk imports").
  try {
    const cleaned = cleanAbandonedRuns(db) + cleanHiddenParents(db, hiddenParents);
    if (cleaned) log(`Removed what ${cleaned} interrupted import(s) had written (none of it was ever visible).`);
  } catch {
    log("An interrupted import left hidden rows; the next import removes them (the database was busy now).");
  }
  // A fresh database gets the demo, except in production, where a mistyped CONCORD_DB must not quietly create
  // accounts with the published demo password: there it takes CONCORD_DEMO=1.
  const demoWanted =
    process.env.NODE_ENV === "production" ? process.env.CONCORD_DEMO === "1" : process.env.CONCORD_DEMO !== "0";
  if (demoWanted && isFreshDatabase(db)) {
    await demo.seed(db);
    log("Seeded the demo study into this fresh database.");
  }
  if (demo.isDemoDatabase(db)) {
    log("");
    log(`Concord demo: open ${baseUrl} and log in with one of these accounts (password for all: ${demo.password})`);
    const width = maxOf(demo.accounts.map((a) => a.username.length));
    for (const a of demo.accounts) log(`  ${a.username.padEnd(width)}  ${a.roles.join(", ")}`);
    log("This is a demo database with fictional notes. Never put real data into it.");
    log("");
  } else if (isFreshDatabase(db)) {
    if (process.env.NODE_ENV === "production" && process.env.CONCORD_DEMO !== "0")
      log("Production mode: no demo seeded into this fresh database (set CONCORD_DEMO=1 to seed one).");
    log("No users yet. Create the first admin with:");
    log("  npm run concord -- users create --username NAME --role admin");
  }
}

function runTask(db: Db, task: PeriodicTask, log: (line: string) => void): void {
  try {
    task.run(db);
  } catch (error) {
    // Busy now: the next run (or, for locks, the next reader) does it.
    if (!(error instanceof DatabaseBusyError)) log(`${task.name} failed: ${String(error)}`);
  }
}

/** A refusal to start, printed as one line by server.js (exit 2), without a stack trace. */
export class StartupRefusal extends Error {
  override name = "StartupRefusal";
}

/**
 * Up to this size (the file and its WAL), the server checks the whole database when it starts; above it, only what
 * does not grow with the studies (docs/reliability.md, "The server refuses a damaged database"): a start must not
 * take longer as the database grows (a full check of a 100,000-case study took over 30 s under load).
 */
export const STARTUP_FULL_CHECK_BYTES = 256 * 1024 * 1024;

/**
 * What the start-up check reads of a database past `STARTUP_FULL_CHECK_BYTES`: the schema (read to prepare any
 * statement) and the tables that hold the accounts, the sessions, the migrations and the list of studies and
 * imports, whose size follows the people and studies, not the cases. A table not in the file is skipped.
 */
export const STARTUP_CHECKED_TABLES = [
  "__drizzle_migrations",
  "app_meta",
  "users",
  "sessions",
  "studies",
  "import_runs",
  "study_summary_versions",
] as const;

function fileBytes(path: string): number {
  const size = (p: string) => (existsSync(p) ? statSync(p).size : 0);
  return size(path) + size(`${path}-wal`);
}

/**
 * Refuses a damaged database before anything reads or writes it (docs/reliability.md, "The server refuses a damaged
 * database"): serving from a damaged file would spread the damage into new labels and exports. Up to `fullCheckBytes`
 * it runs SQLite's integrity_check over the whole file; above, quick_check of the schema and of
 * `STARTUP_CHECKED_TABLES`, so that starting costs the same at 1,000 and at 100,000 cases. The whole check of a big
 * database is `npm run concord -- check-db` (and every `backup` checks its copy whole).
 */
export function checkDatabaseIntegrity(
  path: string,
  { fullCheckBytes = STARTUP_FULL_CHECK_BYTES }: { fullCheckBytes?: number } = {},
): void {
  if (path === ":memory:" || !existsSync(path)) return;
  const whole = fileBytes(path) <= fullCheckBytes;
  const result = whole
    ? fullIntegrityCheck(path)
    : pragmaOn(path, (db) => {
        const present = new Set(
          (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map(
            (r) => r.name,
          ),
        );
        for (const table of ["sqlite_schema", ...STARTUP_CHECKED_TABLES]) {
          if (table !== "sqlite_schema" && !present.has(table)) continue;
          const found = String(db.pragma(`quick_check("${table}")`, { simple: true }));
          if (found !== "ok") return found;
        }
        return "ok";
      });
  if (result !== "ok")
    throw new StartupRefusal(
      `The database ${path} is damaged (SQLite's ${whole ? "integrity_check" : "quick_check"}: ${result.split("\n")[0]!.slice(0, 200)}). ` +
        `Concord will not start on it. Stop every process using it, restore the last good backup with ` +
        `"cp BACKUP.db ${path} && rm -f ${path}-wal ${path}-shm" (backups are made by "npm run concord -- backup --out FILE"), then start again.`,
    );
}
