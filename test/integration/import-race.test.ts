/**
 * The check that guards an import's write runs inside the write's IMMEDIATE transaction (docs/reliability.md,
 * "Checks inside the write"): a draft saved after the file was read but before the write lock was taken stops the
 * import, instead of having the case's text replaced under it.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { annotations, assignments } from "../../db/schema";
import { SECTION_KINDS } from "../../app/annotation/domain/sections";
import type { Db } from "../../app/platform/db.server";
import { getCaseSections, importCases, listStudyCases, requireStudyByName } from "../../app/annotation/studies.server";
import { freshDb, makeUser } from "../support/db";

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

const csv = (text: string) =>
  new TextEncoder().encode(
    [
      ["id", "age_group", "sex", ...SECTION_KINDS].join(","),
      ["c1", "38-47", "F", text, "None.", "Calm.", "", ""].join(","),
    ].join("\n") + "\n",
  );

it("refuses to replace a case's text when a draft is saved just before the write lock is taken", async () => {
  importCases(db, { studyName: "Pilot", bytes: csv("Low mood."), filename: "a.csv", actorId: null });
  const caseId = listStudyCases(db, requireStudyByName(db, "Pilot").id)[0]!.id;
  const annotator = await makeUser(db, "annotator1", ["annotator"]);
  const assignmentId = db
    .insert(assignments)
    .values({ caseId, annotatorId: annotator.id, assignedAt: 1 })
    .returning({ id: assignments.id })
    .get().id;

  // The annotator's first draft lands in the gap between the import reading the database and taking the lock.
  const original = db.transaction.bind(db);
  let drafted = false;
  (db as { transaction: unknown }).transaction = ((fn: never, config?: never) => {
    if (!drafted) {
      drafted = true;
      db.$client
        .prepare("insert into annotations (assignment_id, case_id, annotator_id, updated_at) values (?, ?, ?, 2)")
        .run(assignmentId, caseId, annotator.id);
    }
    return original(fn, config);
  }) as never;

  const result = importCases(db, { studyName: "Pilot", bytes: csv("Changed text."), filename: "b.csv", actorId: null });
  (db as { transaction: unknown }).transaction = original;
  expect(drafted).toBe(true);
  expect(result.written).toBe(false);
  expect(result.conflicts.map((c) => c.message).join()).toMatch(/already has annotations/);
  expect(getCaseSections(db, caseId)[0]!.content).toBe("Low mood.");
  expect(db.select().from(annotations).all()).toHaveLength(1);
});
