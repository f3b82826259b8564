/** Integration-test databases: a fresh, migrated SQLite file per test, set as the process-wide database. */
import { rmSync } from "node:fs";
import type { Role } from "../../db/schema";
import { openDatabase, setDb, type Db } from "../../app/platform/db.server";
import { createUser } from "../../app/accounts/users.server";
import { tempDbPath } from "./server";

export function freshDb(): { db: Db; path: string; cleanup: () => void } {
  const { dir, dbPath } = tempDbPath();
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
