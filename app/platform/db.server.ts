import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import * as schema from "../../db/schema";
import { fromRoot } from "./paths.server";

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

/** The database file: CONCORD_DB, else ./data/concord.db under the project root. */
export function databasePath(): string {
  return process.env.CONCORD_DB || fromRoot("data", "concord.db");
}

/**
 * How long a connection waits for another process's write lock before SQLite answers SQLITE_BUSY. The web server
 * waits briefly, so a save made while a bulk command (an import, a backup) holds the lock answers 503 at once and the
 * page retries with the draft kept (docs/architecture.md, "Saving under load"); command-line work waits longer,
 * because nobody is watching a spinner there.
 */
export const WEB_BUSY_TIMEOUT_MS = 200;
export const CLI_BUSY_TIMEOUT_MS = 5000;

let defaultBusyTimeoutMs = CLI_BUSY_TIMEOUT_MS;

/** Called once by the web server before it opens the database: its connection uses the short busy timeout. */
export function applyWebBusyTimeout(): void {
  defaultBusyTimeoutMs = WEB_BUSY_TIMEOUT_MS;
  shared?.$client.pragma(`busy_timeout = ${WEB_BUSY_TIMEOUT_MS}`);
}

/** Another connection holds the write lock (SQLITE_BUSY after the busy timeout): nothing was written. */
export class DatabaseBusyError extends Error {
  constructor() {
    super("The database is busy: another process holds its write lock.");
    this.name = "DatabaseBusyError";
  }
}

/**
 * SQLite's "database is locked" (SQLITE_BUSY and its extended codes), or DatabaseBusyError, also when wrapped as the
 * cause of another error (drizzle's DrizzleQueryError wraps the driver's error).
 */
export function isBusy(error: unknown): boolean {
  for (let e = error, depth = 0; e != null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof DatabaseBusyError) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("SQLITE_BUSY")) return true;
  }
  return false;
}

/** Opens (creating if needed) a database, sets WAL and foreign keys, and applies pending migrations. */
export function openDatabase(path: string = databasePath(), opts: { busyTimeoutMs?: number } = {}): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? defaultBusyTimeoutMs}`);
  // FULL, not NORMAL: in WAL mode NORMAL may lose the last commits on a power cut, and an acknowledged submission of
  // a clinician's label must survive one (docs/security.md, "Durability"; its cost is measured by `npm run bench`).
  sqlite.pragma("synchronous = FULL");
  const db = drizzle(sqlite, { schema }) as Db;
  migrate(db, { migrationsFolder: fromRoot("db", "migrations") });
  handles.set(sqlite, db);
  return db;
}

/** The drizzle handle of each open connection, so a transaction handle finds the statements of its connection. */
const handles = new WeakMap<Database.Database, Db>();

/** The connection under a database or transaction handle (a transaction runs on its database's one connection). */
function connectionOf(h: DbOrTx): Database.Database {
  return "$client" in h ? h.$client : (h as unknown as { session: { client: Database.Database } }).session.client;
}

/**
 * Statements prepared once per connection (docs/architecture.md, "Prepared statements"). `build` gets the
 * connection's drizzle handle and returns queries made with `.prepare()` and `sql.placeholder`; every later call on
 * that connection, or inside one of its transactions, gets the same ones back, so a hot path neither rebuilds its SQL
 * nor asks SQLite to compile it again. A prepared query run inside a transaction runs in it: a connection has one
 * transaction at a time.
 */
export function preparedOn<T>(build: (db: Db) => T): (h: DbOrTx) => T {
  const cache = new WeakMap<Database.Database, T>();
  return (h) => {
    const connection = connectionOf(h);
    let statements = cache.get(connection);
    if (statements === undefined) {
      let db = handles.get(connection);
      if (db === undefined)
        handles.set(connection, (db = "$client" in h ? h : (drizzle(connection, { schema }) as Db)));
      cache.set(connection, (statements = build(db)));
    }
    return statements;
  };
}

let shared: Db | undefined;

/** The process-wide database used by the web app and the CLI. */
export function getDb(): Db {
  return (shared ??= openDatabase());
}

/** For tests and the CLI: use this database as the process-wide one. */
export function setDb(db: Db | undefined): void {
  shared = db;
}

/** A transaction handle; services that write take `DbOrTx` so they compose inside a caller's transaction. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type DbOrTx = Db | Tx;
