/**
 * SQLite's own checks of the database file (docs/reliability.md, "The server refuses a damaged database"): the start-up
 * check (app/platform/startup.server.ts:checkDatabaseIntegrity) and the whole check of `check-db`
 * (app/platform/backup-cli.ts).
 */
import Database from "better-sqlite3";

/** SQLite's answer of `pragma` on a read-only connection to `path`, or the error that stopped it. */
export function pragmaOn(path: string, run: (db: Database.Database) => string): string {
  try {
    const check = new Database(path, { readonly: true, fileMustExist: true });
    try {
      return run(check);
    } finally {
      check.close();
    }
  } catch (e) {
    return (e as Error).message;
  }
}

/** The whole database's integrity_check: "ok", or SQLite's first findings. Cost grows with the file. */
export function fullIntegrityCheck(path: string): string {
  return pragmaOn(path, (db) => String(db.pragma("integrity_check", { simple: true })));
}
