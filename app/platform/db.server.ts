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

/** Opens (creating if needed) a database, sets WAL and foreign keys, and applies pending migrations. */
export function openDatabase(path: string = databasePath()): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  // FULL, not NORMAL: in WAL mode NORMAL may lose the last commits on a power cut, and an acknowledged submission of
  // a clinician's label must survive one (docs/security.md, "Durability"; its cost is measured by `npm run bench`).
  sqlite.pragma("synchronous = FULL");
  const db = drizzle(sqlite, { schema }) as Db;
  migrate(db, { migrationsFolder: fromRoot("db", "migrations") });
  return db;
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
