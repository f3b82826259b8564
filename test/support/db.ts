/**
 * Integration-test databases: a fresh, migrated SQLite file per test, set as the process-wide database. Each test
 * process migrates one template database once and copies it for every test (3 ms against 30 ms, and far more on a
 * loaded machine); opening the copy finds no migration left to apply.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Role } from "../../db/schema";
import { openDatabase, setDb, type Db } from "../../app/platform/db.server";
import { createUser } from "../../app/accounts/users.server";
import { tempDbPath } from "./server";

let template: string | undefined;

/** The path of this process's migrated template database, made on first use and removed when the process exits. */
function migratedTemplate(): string {
  if (template !== undefined && existsSync(template)) return template;
  const dir = mkdtempSync(join(tmpdir(), "concord-template-"));
  const path = join(dir, "template.db");
  const db = openDatabase(path);
  // Everything into the main file, so that the copy is the whole database.
  db.$client.pragma("wal_checkpoint(TRUNCATE)");
  db.$client.close();
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  template = path;
  return path;
}

export function freshDb(): { db: Db; path: string; cleanup: () => void } {
  const { dir, dbPath } = tempDbPath();
  copyFileSync(migratedTemplate(), dbPath);
  const db = openDatabase(dbPath);
  setDb(db);
  return {
    db,
    path: dbPath,
    cleanup: () => {
      setDb(undefined);
      db.$client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const TEST_PASSWORD = "test-password-1";

export async function makeUser(db: Db, username: string, roles: Role[]) {
  return createUser(db, { username, password: TEST_PASSWORD, roles, actorId: null });
}
