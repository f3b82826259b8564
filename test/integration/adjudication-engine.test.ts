/**
 * The adjudicator's independent judgement, decision and an admin's reopening are steps of the work-item engine
 * (docs/architecture.md, "The work-item engine"; docs/safe-psych.md, "Disagreement and adjudication"): the version
 * every step names is the case outcome's the page read, a stale one is refused with the engine's conflict wording and
 * writes nothing (no row, no event, no time on task), and one adjudicator in two tabs is told it was their own tab.
 */
import { and, eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { adjudications, studies, workTime } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import {
  decide,
  getAdjudicationCase,
  recordIndependent,
  reopenDecision,
  REOPEN_STALE,
  type LabelInput,
} from "../../app/adjudication/adjudication.server";
import { WORK_MESSAGES } from "../../app/work-items/domain/work-item";
import type { UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";
import { caseSnapshot, cloneDb, eventsOf, outcomeOf, studyForPair, submitPair, sufficient } from "../support/labels";

let db: Db;
let cleanup: () => void;
let alice: UserView;
let bruno: UserView;
let judy: UserView;
let kim: UserView;
let boss: UserView;
let studyId: number;
let caseId: number;
let template: { db: Db; cleanup: () => void };

const label = (icd10: string, earliestSection: number): LabelInput => ({
  sufficiency: "sufficient",
  icd10,
  earliestSection,
  missingInfo: [],
  missingOther: "",
});
const F32_2 = label("F32.2", 2);
const F31_1 = label("F31.1", 3);

beforeAll(async () => {
  template = freshDb();
  [alice, bruno, judy, kim, boss] = await Promise.all([
    makeUser(template.db, "alice", ["annotator"]),
    makeUser(template.db, "bruno", ["annotator"]),
    makeUser(template.db, "judy", ["adjudicator"]),
    makeUser(template.db, "kim", ["adjudicator"]),
    makeUser(template.db, "boss", ["admin"]),
  ]);
});
afterAll(() => template.cleanup());

beforeEach(() => {
  ({ db, cleanup } = cloneDb(template.db));
  const s = studyForPair(db, { name: "Engine steps", cases: 1, annotatorIds: [alice.id, bruno.id] });
  studyId = s.study.id;
  caseId = s.caseIds[0]!;
  submitPair(
    db,
    caseId,
    { userId: alice.id, values: sufficient("F32.1", 1) },
    { userId: bruno.id, values: sufficient("F31.1", 3) },
  );
});
afterEach(() => cleanup());

const timeOf = (userId: string) =>
  db
    .select()
    .from(workTime)
    .where(and(eq(workTime.entity, "adjudication"), eq(workTime.itemId, caseId), eq(workTime.userId, userId)))
    .get()?.activeMs ?? 0;

/** Kim decides in reveal-only mode and an admin reopens: the case is disputed again, at a newer version. */
function decidedAndReopened() {
  db.update(studies).set({ adjudicationMode: "reveal_only" }).where(eq(studies.id, studyId)).run();
  const v = outcomeOf(db, caseId)!.version;
  expect(decide(db, { userId: kim.id, caseId, label: F31_1, rationale: "kim", outcomeVersion: v }).ok).toBe(true);
  const decided = outcomeOf(db, caseId)!.version;
  expect(reopenDecision(db, { adminId: boss.id, caseId, reason: "check", outcomeVersion: decided })).toEqual({
    ok: true,
  });
  db.update(studies).set({ adjudicationMode: "two_phase" }).where(eq(studies.id, studyId)).run();
}

describe("the independent judgement names the outcome's version", () => {
  it("refuses a judgement from a page read before the case was decided and reopened, and records nothing", () => {
    const page = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    expect(page.phase).toBe("independent");
    decidedAndReopened();
    const before = caseSnapshot(db, caseId);
    const stale = recordIndependent(db, {
      userId: judy.id,
      caseId,
      label: F32_2,
      outcomeVersion: page.outcomeVersion,
      activeMs: 30_000,
    });
    expect(stale).toEqual({ ok: false, status: 409, message: WORK_MESSAGES.changedElsewhere("case") });
    expect(caseSnapshot(db, caseId)).toEqual(before);
    expect(db.select().from(adjudications).where(eq(adjudications.adjudicatorId, judy.id)).all()).toEqual([]);
    expect(eventsOf(db, caseId, "independent")).toEqual([]);
    expect(timeOf(judy.id)).toBe(0);
    // Read again, the judgement is recorded, with the guidelines version in its event, and its time on task.
    const fresh = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    expect(
      recordIndependent(db, {
        userId: judy.id,
        caseId,
        label: F32_2,
        outcomeVersion: fresh.outcomeVersion,
        activeMs: 30_000,
      }),
    ).toEqual({ ok: true, status: "independent_recorded" });
    const events = eventsOf(db, caseId, "independent");
    expect(events.map((e) => [e.actorId, e.entity, e.changes])).toEqual([
      [
        judy.id,
        "adjudication",
        { independent: [null, { sufficiency: "sufficient", icd10: "F32.2", earliestSection: 2 }] },
      ],
    ]);
    expect(timeOf(judy.id)).toBe(30_000);
    // The judgement leaves the outcome's version as it was.
    expect(outcomeOf(db, caseId)!.version).toBe(fresh.outcomeVersion);
  });

  it("tells a second tab of the same adjudicator that the judgement is already recorded", () => {
    const tab = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    const first = { userId: judy.id, caseId, label: F32_2, outcomeVersion: tab.outcomeVersion };
    expect(recordIndependent(db, first)).toEqual({ ok: true, status: "independent_recorded" });
    const second = recordIndependent(db, { ...first, label: F31_1 });
    expect(second).toMatchObject({ ok: false, status: 409 });
    expect((second as { message: string }).message).toMatch(/already recorded \(in another window/);
    expect(eventsOf(db, caseId, "independent")).toHaveLength(1);
  });
});

describe("the decision names the outcome's version", () => {
  it("a page read before a decision and a reopening gets the engine's conflict, not 'another adjudicator decided'", () => {
    const page = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    expect(
      recordIndependent(db, { userId: judy.id, caseId, label: F32_2, outcomeVersion: page.outcomeVersion }).ok,
    ).toBe(true);
    decidedAndReopened();
    const before = caseSnapshot(db, caseId);
    const stale = decide(db, {
      userId: judy.id,
      caseId,
      label: F32_2,
      rationale: "",
      outcomeVersion: page.outcomeVersion,
      activeMs: 12_000,
    });
    // The case is open again: nobody decided it, so the refusal must not say so.
    expect(stale).toEqual({ ok: false, status: 409, message: WORK_MESSAGES.changedElsewhere("case") });
    expect(caseSnapshot(db, caseId)).toEqual(before);
    expect(eventsOf(db, caseId, "decide")).toHaveLength(1); // kim's only
    const fresh = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    expect(
      decide(db, { userId: judy.id, caseId, label: F32_2, rationale: "", outcomeVersion: fresh.outcomeVersion }),
    ).toEqual({ ok: true, status: "decided" });
    expect(outcomeOf(db, caseId)).toMatchObject({ status: "adjudicated", version: fresh.outcomeVersion + 1 });
    const decideEvents = eventsOf(db, caseId, "decide");
    expect(decideEvents.at(-1)).toMatchObject({ actorId: judy.id, entity: "adjudication" });
    expect(decideEvents.at(-1)!.guidelineVersion).toEqual(decideEvents[0]!.guidelineVersion);
  });

  it("field errors come after the version: a stale, invalid decision answers the conflict", () => {
    const page = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    recordIndependent(db, { userId: judy.id, caseId, label: F32_2, outcomeVersion: page.outcomeVersion });
    decidedAndReopened();
    const r = decide(db, {
      userId: judy.id,
      caseId,
      label: label("F99.9", 9),
      rationale: "",
      outcomeVersion: page.outcomeVersion,
    });
    expect(r).toMatchObject({ ok: false, status: 409 });
  });
});

describe("the reopening names the outcome's version", () => {
  it("a stale admin page is refused with the engine's wording and changes nothing", () => {
    db.update(studies).set({ adjudicationMode: "reveal_only" }).where(eq(studies.id, studyId)).run();
    const read = outcomeOf(db, caseId)!.version;
    expect(decide(db, { userId: kim.id, caseId, label: F31_1, rationale: "kim", outcomeVersion: read }).ok).toBe(true);
    const stale = reopenDecision(db, { adminId: boss.id, caseId, reason: "old tab", outcomeVersion: read });
    expect(stale).toEqual({ ok: false, status: 409, message: WORK_MESSAGES.changedElsewhere("decision") });
    expect(REOPEN_STALE).toBe(WORK_MESSAGES.changedElsewhere("decision"));
    expect(outcomeOf(db, caseId)!.status).toBe("adjudicated");
    expect(eventsOf(db, caseId, "reopen")).toEqual([]);
    // A disputed case, read at its version, is not reopened either: only an adjudicated case can be.
    const v = outcomeOf(db, caseId)!.version;
    expect(reopenDecision(db, { adminId: boss.id, caseId, reason: "ok", outcomeVersion: v })).toEqual({ ok: true });
    expect(reopenDecision(db, { adminId: boss.id, caseId, reason: "twice", outcomeVersion: v + 1 })).toEqual({
      ok: false,
      status: 409,
      message: "Only an adjudicated case can be reopened.",
    });
    expect(eventsOf(db, caseId, "reopen").map((e) => [e.actorId, e.entity, e.entityId, e.changes])).toEqual([
      [
        boss.id,
        "case_outcome",
        String(caseId),
        { gold: [{ sufficiency: "sufficient", icd10: "F31.1", earliestSection: 3 }, null], reason: "ok" },
      ],
    ]);
  });

  it("a case with no outcome is not found", () => {
    expect(reopenDecision(db, { adminId: boss.id, caseId: 987_654, reason: "x", outcomeVersion: 1 })).toMatchObject({
      ok: false,
      status: 404,
    });
  });
});
