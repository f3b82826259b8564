import { and, eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { annotations, assignments } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { getAnnotatorCase, submitAnnotation, type AnnotationValues } from "../../app/annotation/annotations.server";
import { freshDb } from "../support/db";
import { seedStudy } from "../support/fixtures";

const label: AnnotationValues = {
  sufficiency: "sufficient",
  icd10: "F32.1",
  earliestSection: 1,
  missingInfo: [],
  missingOther: "",
  notes: "",
};

describe("locking does not reveal when the other annotator submitted", () => {
  let db: Db;
  let cleanup: () => void;
  beforeEach(() => ({ db, cleanup } = freshDb()));
  afterEach(() => cleanup());

  it("keeps each annotator's own last-saved time when the second submission locks the case", async () => {
    const { ids } = await seedStudy(db, {
      cases: 1,
      users: [
        { username: "a1", roles: ["annotator"] },
        { username: "a2", roles: ["annotator"] },
      ],
      annotators: ["a1", "a2"],
    });
    const caseId = db.select({ caseId: assignments.caseId }).from(assignments).get()!.caseId;
    expect(submitAnnotation(db, { userId: ids.a1!, caseId, values: label, version: 0, now: 1_000 }).ok).toBe(true);
    expect(submitAnnotation(db, { userId: ids.a2!, caseId, values: label, version: 0, now: 9_000 })).toMatchObject({
      state: "locked",
    });
    const mine = db
      .select()
      .from(annotations)
      .where(and(eq(annotations.caseId, caseId), eq(annotations.annotatorId, ids.a1!)))
      .get()!;
    expect(mine.status).toBe("locked");
    expect(mine.updatedAt).toBe(1_000);
    expect(getAnnotatorCase(db, { userId: ids.a1!, caseId })!.updatedAt).toBe(1_000);
  });
});
