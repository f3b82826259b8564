/**
 * Rater quality switched on mid-study (docs/rater-quality.md, "Switching it on mid-study"): the cases an annotator
 * has started keep their names and addresses; only cases not started take opaque names, as every retest and
 * calibration item has; the admin page's preview says so with counts before saving.
 */
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assignments, events } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import {
  getAnnotatorItem,
  listAnnotatorCases,
  resolveAnnotatorItem,
  saveDraft,
  submitAnnotation,
} from "../../app/annotation/annotations.server";
import { qualitySwitchPreview, setQualitySettings } from "../../app/annotation/rater-quality.server";
import { QUALITY_OFF } from "../../app/annotation/domain/rater-quality";
import type { UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";
import { studyForPair, sufficient } from "../support/labels";

let db: Db;
let cleanup: () => void;
let alice: UserView;
let bruno: UserView;
let studyId: number;
let caseIds: number[];

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  [alice, bruno] = await Promise.all([makeUser(db, "alice", ["annotator"]), makeUser(db, "bruno", ["annotator"])]);
  const s = studyForPair(db, { name: "Mid-study", cases: 4, annotatorIds: [alice.id, bruno.id] });
  studyId = s.study.id;
  caseIds = s.caseIds;
});
afterEach(() => cleanup());

describe("switching rater quality on mid-study", () => {
  it("keeps the names and addresses of started work, gives the rest opaque ones, and the preview counted it", () => {
    // Alice has submitted the first case and has a draft of the second; Bruno has not started.
    expect(
      submitAnnotation(db, { userId: alice.id, caseId: caseIds[0]!, values: sufficient("F32.1", 1), version: 0 }).ok,
    ).toBe(true);
    expect(
      saveDraft(db, { userId: alice.id, caseId: caseIds[1]!, values: sufficient("F32.1", 1), version: 0 }).ok,
    ).toBe(true);
    const before = listAnnotatorCases(db, alice.id).map((r) => [r.key, r.externalId]);
    expect(qualitySwitchPreview(db, studyId)).toEqual({ started: 2, annotators: 1, unstarted: 6 });

    setQualitySettings(db, { studyId, settings: { ...QUALITY_OFF, retestFraction: 0.25, seed: 1 }, actorId: null });

    const after = listAnnotatorCases(db, alice.id).filter((r) => /^\d+$/.test(r.key) || /^k/.test(r.key));
    const byCase = (caseId: number) => after.find((r) => r.key === String(caseId));
    // Started: the same key (the case id) and the same name as before the switch.
    for (const i of [0, 1]) expect([byCase(caseIds[i]!)!.key, byCase(caseIds[i]!)!.externalId]).toEqual(before[i]);
    expect(getAnnotatorItem(db, { userId: alice.id, key: String(caseIds[1]!) })).not.toBeNull();
    expect(resolveAnnotatorItem(db, alice.id, String(caseIds[1]!))).toEqual({ kind: "assignment", caseId: caseIds[1] });
    // Not started: opaque keys and names; the case ids name nothing (404), for Alice and for Bruno.
    const opaque = after.filter((r) => r.key.startsWith("k"));
    expect(opaque.length).toBeGreaterThanOrEqual(2);
    for (const r of opaque) expect(r.externalId).not.toMatch(/^case-/);
    for (const i of [2, 3]) expect(resolveAnnotatorItem(db, alice.id, String(caseIds[i]!))).toBeNull();
    for (const i of [0, 1, 2, 3]) expect(resolveAnnotatorItem(db, bruno.id, String(caseIds[i]!))).toBeNull();
    expect(listAnnotatorCases(db, bruno.id).every((r) => r.key.startsWith("k"))).toBe(true);
    // Recorded with the change of settings.
    const event = db.select().from(events).where(eq(events.action, "set_rater_quality")).get()!;
    expect(event.changes).toMatchObject({ namesKept: 2 });
    // After the switch, nothing started is left to keep: the preview of the next switch would say so.
    expect(
      db
        .select({ key: assignments.itemKey })
        .from(assignments)
        .where(eq(assignments.annotatorId, alice.id))
        .all()
        .filter((a) => a.key === null),
    ).toHaveLength(2);
  });
});
