/**
 * The demo study: fictional notes (app/demo/demo-notes.jsonl, written for the demo) and an account for every role.
 * Seeded only into a fresh database, and recognised afterwards by the `demo` fact in app_meta: it never touches a
 * database that holds real work.
 */
import { readFileSync } from "node:fs";
import { count, eq } from "drizzle-orm";
import { appMeta, studies, users, type Role } from "../../db/schema";
import type { Db } from "../lib/db.server";
import { fromRoot } from "../lib/paths.server";
import { autoAssign, listStudyAnnotators } from "./assignments.server";
import { importCases, requireStudyByName } from "./studies.server";
import { createUser } from "./users.server";

export const DEMO_STUDY = "Demo study";
export const DEMO_PASSWORD = "concord-demo";
export const DEMO_ACCOUNTS: { username: string; displayName: string; roles: Role[] }[] = [
  { username: "admin", displayName: "Study manager (demo)", roles: ["admin"] },
  { username: "annotator1", displayName: "Dr Annotator One", roles: ["annotator"] },
  { username: "annotator2", displayName: "Dr Annotator Two", roles: ["annotator"] },
  { username: "annotator3", displayName: "Dr Annotator Three", roles: ["annotator"] },
  { username: "adjudicator", displayName: "Dr Senior Adjudicator", roles: ["adjudicator"] },
  { username: "rater1", displayName: "Rater One", roles: ["rater"] },
  { username: "rater2", displayName: "Rater Two", roles: ["rater"] },
  { username: "rater3", displayName: "Rater Three", roles: ["rater"] },
];

export function isDemoDatabase(db: Db): boolean {
  return db.select().from(appMeta).where(eq(appMeta.key, "demo")).get()?.value === "1";
}

export function isFreshDatabase(db: Db): boolean {
  return db.select({ n: count() }).from(users).get()!.n === 0 && db.select({ n: count() }).from(studies).get()!.n === 0;
}

export function demoNotesBytes(): Uint8Array {
  return readFileSync(fromRoot("app", "demo", "demo-notes.jsonl"));
}

/** Seeds the demo into a fresh database. Returns false (and does nothing) for any other database. */
export async function seedDemo(db: Db): Promise<boolean> {
  if (!isFreshDatabase(db)) return false;
  db.insert(appMeta).values({ key: "demo", value: "1" }).run();
  for (const account of DEMO_ACCOUNTS) await createUser(db, { ...account, password: DEMO_PASSWORD, actorId: null });
  const admin = db.select({ id: users.id }).from(users).where(eq(users.username, "admin")).get()!;
  const result = importCases(db, { studyName: DEMO_STUDY, bytes: demoNotesBytes(), filename: "demo-notes.jsonl", actorId: admin.id });
  if (!result.written) throw new Error("The demo notes failed to import: " + JSON.stringify(result.parse.errors.slice(0, 3)));
  const study = requireStudyByName(db, DEMO_STUDY);
  const annotatorIds = listStudyAnnotators(db, study.id).map((a) => a.id);
  autoAssign(db, { studyId: study.id, annotatorIds, seed: 1, actorId: admin.id });
  return true;
}
