/**
 * The annotation rules on a real temporary SQLite database, end to end through the services (docs/safe-psych.md#annotation, docs/safe-psych.md#disagreement-and-adjudication):
 * what two submitted annotations become (every row of the table in docs/safe-psych.md#disagreement-and-adjudication), locking and optimistic concurrency,
 * the audit trail of drafts, and the assignment rules (two distinct people per case, balanced, reproducible,
 * reassignment only before the work has started).
 */
import { asc, eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assignments, cases, users } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import {
  getAnnotatorCase,
  listAnnotatorCases,
  saveDraft,
  submitAnnotation,
} from "../../app/annotation/annotations.server";
import { autoAssign, assignmentsWindow, listStudyAnnotators, reassign } from "../../app/annotation/assignments.server";
import { listCaseEvents } from "../../app/audit/audit.server";
import { importCases, requireStudyByName } from "../../app/annotation/studies.server";
import { setActive, type UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";
import { smallStudyJsonl } from "../support/fixtures";
import {
  annotationsOf,
  assignmentsOf,
  caseSnapshot,
  cloneDb,
  eventsOf,
  insufficient,
  outcomeOf,
  studyForPair,
  submitPair,
  sufficient,
} from "../support/labels";

let db: Db;
let cleanup: () => void;
let template: { db: Db; cleanup: () => void };
let ann1: UserView; // alice
let ann2: UserView; // bruno
let carla: UserView;
let dmitri: UserView;
let boss: UserView;

beforeAll(async () => {
  template = freshDb();
  [ann1, ann2, carla, dmitri, boss] = await Promise.all([
    makeUser(template.db, "alice", ["annotator"]),
    makeUser(template.db, "bruno", ["annotator"]),
    makeUser(template.db, "carla", ["annotator"]),
    makeUser(template.db, "dmitri", ["annotator"]),
    makeUser(template.db, "boss", ["admin"]),
  ]);
});
afterAll(() => template.cleanup());
beforeEach(() => {
  ({ db, cleanup } = cloneDb(template.db));
});
afterEach(() => cleanup());

function pair(n = 4) {
  return studyForPair(db, { name: "Pilot", cases: n, annotatorIds: [ann1.id, ann2.id] });
}

describe("docs/safe-psych.md#disagreement-and-adjudication: what two submitted annotations become", () => {
  it("sufficiency differs → dispute (reason sufficiency), no gold, neither agreement flag", () => {
    const { caseIds } = pair();
    const caseId = caseIds[1]!;
    submitPair(
      db,
      caseId,
      { userId: ann1.id, values: sufficient("F32.1", 2) },
      { userId: ann2.id, values: insufficient(["onset_duration"]) },
    );
    const o = outcomeOf(db, caseId)!;
    expect(o).toMatchObject({
      status: "disputed",
      disputeReason: "sufficiency",
      gold: null,
      sufficiencyAgreement: false,
      diagnosisAgreement: false,
    });
    expect(o.disputedAt).not.toBeNull();
    expect(eventsOf(db, caseId, "disputed").map((e) => e.changes)).toEqual([{ reason: "sufficiency" }]);
    expect(eventsOf(db, caseId, "gold_derived")).toEqual([]);
  });

  it("both sufficient, different diagnosis → dispute (reason diagnosis), sufficiency agreed", () => {
    const { caseIds } = pair();
    // Same category F32, different diagnosis level (F32.1 vs F32.2): a disagreement at the benchmark's level (docs/icd10.md).
    submitPair(
      db,
      caseIds[0]!,
      { userId: ann1.id, values: sufficient("F32.1", 2) },
      { userId: ann2.id, values: sufficient("F32.2", 2) },
    );
    expect(outcomeOf(db, caseIds[0]!)).toMatchObject({
      status: "disputed",
      disputeReason: "diagnosis",
      gold: null,
      sufficiencyAgreement: true,
      diagnosisAgreement: false,
    });
    // Different groups altogether.
    submitPair(
      db,
      caseIds[1]!,
      { userId: ann2.id, values: sufficient("F20.0", 1) },
      { userId: ann1.id, values: sufficient("F32.1", 1) },
    );
    expect(outcomeOf(db, caseIds[1]!)).toMatchObject({
      status: "disputed",
      disputeReason: "diagnosis",
      sufficiencyAgreement: true,
      diagnosisAgreement: false,
    });
  });

  it("both sufficient, same diagnosis → agreed, gold = that diagnosis with the EARLIER earliest section", () => {
    const { caseIds } = pair();
    // Written differently ("f321" is canonicalised on submission), same diagnosis; the earlier section comes second.
    submitPair(
      db,
      caseIds[1]!,
      { userId: ann1.id, values: sufficient("F32.1", 4) },
      { userId: ann2.id, values: sufficient("f321", 2) },
    );
    const o = outcomeOf(db, caseIds[1]!)!;
    expect(o).toMatchObject({
      status: "agreed",
      disputeReason: null,
      sufficiencyAgreement: true,
      diagnosisAgreement: true,
      disputedAt: null,
    });
    expect(o.gold!).toEqual({ sufficiency: "sufficient", icd10: "F32.1", earliestSection: 2 });
    expect(eventsOf(db, caseIds[1]!, "gold_derived").map((e) => e.changes)).toEqual([
      { gold: [null, { sufficiency: "sufficient", icd10: "F32.1", earliestSection: 2 }] },
    ]);

    // And the other way round: the earlier one submitted first.
    submitPair(
      db,
      caseIds[2]!,
      { userId: ann2.id, values: sufficient("F20.0", 1) },
      { userId: ann1.id, values: sufficient("F20.0", 3) },
    );
    expect(outcomeOf(db, caseIds[2]!)!.gold!).toEqual({
      sufficiency: "sufficient",
      icd10: "F20.0",
      earliestSection: 1,
    });
  });

  it("both insufficient → agreed, gold insufficient, missing information = union of both (list order)", () => {
    const { caseIds } = pair();
    submitPair(
      db,
      caseIds[0]!,
      { userId: ann1.id, values: insufficient(["other", "substance_use"], "  Collateral from the sister  ") },
      { userId: ann2.id, values: insufficient(["laboratory", "onset_duration", "substance_use"]) },
    );
    const o = outcomeOf(db, caseIds[0]!)!;
    expect(o).toMatchObject({
      status: "agreed",
      disputeReason: null,
      sufficiencyAgreement: true,
      diagnosisAgreement: true,
    });
    expect(o.gold!).toEqual({
      sufficiency: "insufficient",
      missingInfo: ["onset_duration", "substance_use", "laboratory", "other"],
      missingInfoOther: "Collateral from the sister",
    });
  });

  it("both insufficient with two different 'other' texts keeps both", () => {
    const { caseIds } = pair();
    submitPair(
      db,
      caseIds[0]!,
      { userId: ann1.id, values: insufficient(["other"], "Thyroid panel") },
      { userId: ann2.id, values: insufficient(["other", "imaging"], "EEG") },
    );
    expect(outcomeOf(db, caseIds[0]!)!.gold!).toEqual({
      sufficiency: "insufficient",
      missingInfo: ["imaging", "other"],
      missingInfoOther: "EEG; Thyroid panel",
    });
  });

  it("stores a stable A/B order made of the case's two annotation ids", () => {
    const { caseIds } = pair();
    submitPair(
      db,
      caseIds[0]!,
      { userId: ann1.id, values: sufficient("F32.1", 1) },
      { userId: ann2.id, values: insufficient(["imaging"]) },
    );
    const ids = annotationsOf(db, caseIds[0]!).map((a) => a.id);
    const order = outcomeOf(db, caseIds[0]!)!.annotatorOrder as number[];
    expect([...order].sort((x, y) => x - y)).toEqual(ids);
  });

  it("no outcome while only one annotation is in", () => {
    const { caseIds } = pair();
    expect(
      submitAnnotation(db, { userId: ann1.id, caseId: caseIds[0]!, values: sufficient("F32.1", 1), version: 0 }),
    ).toMatchObject({ ok: true, state: "submitted" });
    expect(outcomeOf(db, caseIds[0]!)).toBeUndefined();
    // A draft of the other annotator does not count as "in".
    expect(
      saveDraft(db, { userId: ann2.id, caseId: caseIds[0]!, values: sufficient("F32.1", 1), version: 0 }),
    ).toMatchObject({ ok: true });
    expect(outcomeOf(db, caseIds[0]!)).toBeUndefined();
    expect(annotationsOf(db, caseIds[0]!).map((a) => a.status)).toEqual(["submitted", "draft"]);
  });

  it("refuses an invalid submission with field errors and writes nothing", () => {
    const { caseIds } = pair();
    const caseId = caseIds[0]!; // T = 3
    const before = caseSnapshot(db, caseId);
    const bad = [
      [sufficient("F32.1", 4), "earliestSection"],
      [sufficient("F99.9", 1), "icd10"],
      [sufficient("", 1), "icd10"],
      [insufficient([]), "missingInfo"],
      [insufficient(["other"], "   "), "missingOther"],
    ] as const;
    for (const [values, field] of bad) {
      const r = submitAnnotation(db, { userId: ann1.id, caseId, values, version: 0 });
      expect(r.ok).toBe(false);
      if (!r.ok && r.status === 422) expect(Object.keys(r.errors)).toContain(field);
      else throw new Error(`expected 422 for ${field}, got ${JSON.stringify(r)}`);
    }
    expect(caseSnapshot(db, caseId)).toEqual(before);
  });
});

describe("locking and optimistic concurrency", () => {
  it("locks both annotations when the second is submitted and then refuses any change (409, nothing written)", () => {
    const { caseIds } = pair();
    const caseId = caseIds[0]!;
    const first = submitAnnotation(db, { userId: ann1.id, caseId, values: sufficient("F32.1", 1), version: 0 });
    expect(first).toMatchObject({ ok: true, state: "submitted", version: 1 });
    const second = submitAnnotation(db, { userId: ann2.id, caseId, values: sufficient("F32.1", 2), version: 0 });
    expect(second).toMatchObject({ ok: true, state: "locked", version: 2 });
    expect(annotationsOf(db, caseId).map((a) => [a.annotatorId, a.status, a.version])).toEqual([
      [ann1.id, "locked", 2],
      [ann2.id, "locked", 2],
    ]);
    expect(eventsOf(db, caseId, "lock")).toHaveLength(2);
    expect(getAnnotatorCase(db, { userId: ann1.id, caseId })!.state).toBe("locked");

    const before = caseSnapshot(db, caseId);
    for (const [userId, version] of [
      [ann1.id, 2],
      [ann2.id, 2],
    ] as const) {
      const revise = submitAnnotation(db, { userId, caseId, values: sufficient("F20.0", 3), version });
      expect(revise).toMatchObject({ ok: false, status: 409 });
      expect((revise as { message: string }).message).toMatch(/locked/);
      const draft = saveDraft(db, { userId, caseId, values: sufficient("F20.0", 3), version });
      expect(draft).toMatchObject({ ok: false, status: 409 });
      expect((draft as { message: string }).message).toMatch(/locked/);
    }
    expect(caseSnapshot(db, caseId)).toEqual(before);
  });

  it("lets an annotator revise their submission until the second annotation arrives; the lock uses the revision", () => {
    const { caseIds } = pair();
    const caseId = caseIds[1]!;
    expect(submitAnnotation(db, { userId: ann1.id, caseId, values: sufficient("F32.1", 3), version: 0 })).toMatchObject(
      { ok: true, version: 1, state: "submitted" },
    );
    // A draft save on a submitted annotation is refused: revisions are submissions.
    expect(saveDraft(db, { userId: ann1.id, caseId, values: sufficient("F33.1", 3), version: 1 })).toMatchObject({
      ok: false,
      status: 409,
    });
    const revised = submitAnnotation(db, { userId: ann1.id, caseId, values: sufficient("F33.1", 2), version: 1 });
    expect(revised).toMatchObject({ ok: true, version: 2, state: "submitted" });
    const revise = eventsOf(db, caseId, "revise");
    expect(revise).toHaveLength(1);
    expect(revise[0]!.actorId).toBe(ann1.id);
    expect(revise[0]!.changes).toEqual({ icd10: ["F32.1", "F33.1"], earliestSection: [3, 2] });

    submitAnnotation(db, { userId: ann2.id, caseId, values: sufficient("F33.1", 4), version: 0 });
    expect(outcomeOf(db, caseId)!.gold!).toEqual({
      sufficiency: "sufficient",
      icd10: "F33.1",
      earliestSection: 2,
    });
  });

  it("refuses a stale version (another tab saved meanwhile) with 409 and writes nothing", () => {
    const { caseIds } = pair();
    const caseId = caseIds[0]!;
    expect(saveDraft(db, { userId: ann1.id, caseId, values: sufficient("F32.1", 1), version: 0 })).toMatchObject({
      ok: true,
      version: 1,
    });
    expect(saveDraft(db, { userId: ann1.id, caseId, values: sufficient("F32.2", 1), version: 1 })).toMatchObject({
      ok: true,
      version: 2,
    });
    const before = caseSnapshot(db, caseId);
    for (const stale of [0, 1, 3]) {
      const d = saveDraft(db, { userId: ann1.id, caseId, values: sufficient("F20.0", 2), version: stale });
      expect(d).toMatchObject({ ok: false, status: 409 });
      expect((d as { message: string }).message).toMatch(/nothing was overwritten/);
      expect(
        submitAnnotation(db, { userId: ann1.id, caseId, values: sufficient("F20.0", 2), version: stale }),
      ).toMatchObject({ ok: false, status: 409 });
    }
    expect(caseSnapshot(db, caseId)).toEqual(before);
    expect(annotationsOf(db, caseId)[0]).toMatchObject({ status: "draft", icd10: "F32.2", version: 2 });
    // The current version goes through.
    expect(submitAnnotation(db, { userId: ann1.id, caseId, values: sufficient("F20.0", 2), version: 2 })).toMatchObject(
      { ok: true, version: 3 },
    );
  });

  it("answers 404 for a case that is not assigned to the annotator, whatever they send", () => {
    const outsider = carla;
    const { caseIds } = pair();
    const before = caseSnapshot(db, caseIds[0]!);
    expect(
      saveDraft(db, { userId: outsider.id, caseId: caseIds[0]!, values: sufficient("F32.1", 1), version: 0 }),
    ).toMatchObject({ ok: false, status: 404 });
    expect(
      submitAnnotation(db, { userId: outsider.id, caseId: caseIds[0]!, values: sufficient("F32.1", 1), version: 0 }),
    ).toMatchObject({ ok: false, status: 404 });
    expect(getAnnotatorCase(db, { userId: outsider.id, caseId: caseIds[0]! })).toBeNull();
    expect(getAnnotatorCase(db, { userId: ann1.id, caseId: 999_999 })).toBeNull();
    expect(caseSnapshot(db, caseIds[0]!)).toEqual(before);
  });
});

describe("audit trail of drafts", () => {
  it("records a draft save with old and new values only when a value changes", () => {
    const { caseIds } = pair();
    const caseId = caseIds[1]!;
    const t0 = 1_700_000_000_000;
    const r1 = saveDraft(db, {
      userId: ann1.id,
      caseId,
      values: { ...sufficient("", 0), earliestSection: null },
      version: 0,
      now: t0,
    });
    expect(r1).toMatchObject({ ok: true, version: 1 });
    let drafts = eventsOf(db, caseId, "draft");
    expect(drafts).toHaveLength(1);
    expect(drafts[0]).toMatchObject({ actorId: ann1.id, at: t0, entity: "annotation" });
    expect(drafts[0]!.changes.sufficiency).toEqual([null, "sufficient"]);
    expect(drafts[0]!.changes).not.toHaveProperty("icd10");

    // The same values again (an autosave with nothing new): no new version, no event.
    const r2 = saveDraft(db, {
      userId: ann1.id,
      caseId,
      values: { ...sufficient("", 0), earliestSection: null },
      version: 1,
      now: t0 + 1000,
    });
    expect(r2).toMatchObject({ ok: true, version: 1, savedAt: t0 });
    expect(eventsOf(db, caseId, "draft")).toHaveLength(1);

    // One field changes: one event naming exactly that field with its old and new value.
    expect(
      saveDraft(db, {
        userId: ann1.id,
        caseId,
        values: sufficient("F32.1", null as unknown as number),
        version: 1,
        now: t0 + 2000,
      }),
    ).toMatchObject({ ok: true, version: 2 });
    expect(
      saveDraft(db, { userId: ann1.id, caseId, values: sufficient("F32.1", 3), version: 2, now: t0 + 3000 }),
    ).toMatchObject({ ok: true, version: 3 });
    expect(
      saveDraft(db, { userId: ann1.id, caseId, values: sufficient("F32.2", 2), version: 3, now: t0 + 4000 }),
    ).toMatchObject({ ok: true, version: 4 });
    drafts = eventsOf(db, caseId, "draft");
    expect(drafts.slice(1).map((e) => [e.at, e.changes])).toEqual([
      [t0 + 2000, { icd10: [null, "F32.1"] }],
      [t0 + 3000, { earliestSection: [null, 3] }],
      [t0 + 4000, { icd10: ["F32.1", "F32.2"], earliestSection: [3, 2] }],
    ]);

    // Submission is audited with what it changed, and the admin's history shows all of it, oldest first, by username.
    submitAnnotation(db, { userId: ann1.id, caseId, values: insufficient(["imaging"]), version: 4, now: t0 + 5000 });
    const submit = eventsOf(db, caseId, "submit");
    expect(submit).toHaveLength(1);
    expect(submit[0]!.changes).toMatchObject({
      sufficiency: ["sufficient", "insufficient"],
      icd10: ["F32.2", null],
      earliestSection: [2, null],
      missingInfo: [[], ["imaging"]],
    });
    const history = listCaseEvents(db, caseId).filter((e) => e.entity === "annotation");
    expect(history.map((e) => [e.action, e.actor])).toEqual([
      ["draft", "alice"],
      ["draft", "alice"],
      ["draft", "alice"],
      ["draft", "alice"],
      ["submit", "alice"],
    ]);
  });
});

describe("assignment", () => {
  const everyone = () => [ann1, ann2, carla, dmitri] as const;

  function importStudy(name: string, n: number) {
    importCases(db, { studyName: name, bytes: smallStudyJsonl(n), filename: `${name}.jsonl`, actorId: null });
    return requireStudyByName(db, name);
  }

  function casesOf(studyId: number) {
    return db.select().from(cases).where(eq(cases.studyId, studyId)).orderBy(asc(cases.position)).all();
  }

  /** Per case in study order, the sorted ids of its annotators. */
  function planOf(studyId: number) {
    return casesOf(studyId).map((c) =>
      assignmentsOf(db, c.id)
        .map((a) => a.annotatorId)
        .sort(),
    );
  }

  it("gives every case to two different annotators, loads balanced within one, audited", () => {
    const people = everyone();
    const ids = people.slice(0, 3).map((p) => p.id);
    const study = importStudy("Balanced", 7);
    const result = autoAssign(db, { studyId: study.id, annotatorIds: ids, seed: 11, actorId: null });
    expect(result).toEqual({ created: 14, cases: 7 });
    for (const annotators of planOf(study.id)) {
      expect(annotators).toHaveLength(2);
      expect(new Set(annotators).size).toBe(2);
    }
    const loads = listStudyAnnotators(db, study.id)
      .filter((l) => ids.includes(l.id))
      .map((l) => l.assigned);
    expect(loads.reduce((x, y) => x + y, 0)).toBe(14);
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
    // dmitri was not selected and has nothing.
    expect(listStudyAnnotators(db, study.id).find((l) => l.username === "dmitri")!.assigned).toBe(0);
    const assignEvents = casesOf(study.id).flatMap((c) => eventsOf(db, c.id, "assign"));
    expect(assignEvents).toHaveLength(14);
    // A second run has nothing left to fill.
    expect(autoAssign(db, { studyId: study.id, annotatorIds: ids, seed: 11, actorId: null })).toEqual({
      created: 0,
      cases: 0,
    });
  });

  it("never gives a case to the person already on it, and balances against existing loads", () => {
    const people = everyone();
    const study = importStudy("Partial", 4);
    const studyCases = casesOf(study.id);
    // alice already holds the first two cases (e.g. from an earlier round).
    for (const c of studyCases.slice(0, 2))
      db.insert(assignments).values({ caseId: c.id, annotatorId: ann1.id, assignedAt: 1 }).run();
    autoAssign(db, { studyId: study.id, annotatorIds: [ann1.id, ann2.id, people[2].id], seed: 3, actorId: null });
    for (const annotators of planOf(study.id)) expect(new Set(annotators).size).toBe(2);
    const loads = Object.fromEntries(listStudyAnnotators(db, study.id).map((l) => [l.username, l.assigned]));
    // 8 slots; alice had 2 already: final loads 3/3/2 in some order, alice not above 3.
    expect(loads.alice + loads.bruno + loads.carla).toBe(8);
    expect(
      Math.max(loads.alice, loads.bruno, loads.carla) - Math.min(loads.alice, loads.bruno, loads.carla),
    ).toBeLessThanOrEqual(1);
  });

  it("is reproducible: the same seed gives the same plan, other seeds may differ", () => {
    const people = everyone();
    const ids = people.map((p) => p.id);
    const plans = new Map<number, string>();
    for (const [i, seed] of [1, 1, 2, 3, 4, 5].entries()) {
      const study = importStudy(`Seeded ${i}`, 9);
      autoAssign(db, {
        studyId: study.id,
        annotatorIds: seed === 1 && i === 1 ? [...ids].reverse() : ids,
        seed,
        actorId: null,
      });
      const plan = JSON.stringify(planOf(study.id));
      if (plans.has(seed)) expect(plan).toBe(plans.get(seed));
      plans.set(seed, plan);
    }
    // If the seed were ignored, every plan would be the same.
    expect(new Set(plans.values()).size).toBeGreaterThan(1);
  });

  it("refuses fewer than two annotators, and inactive or non-annotator users, writing nothing", () => {
    const admin = boss;
    const study = importStudy("Refused", 3);
    expect(() => autoAssign(db, { studyId: study.id, annotatorIds: [ann1.id], seed: 1, actorId: null })).toThrow(/two/);
    expect(() =>
      autoAssign(db, { studyId: study.id, annotatorIds: [ann1.id, admin.id], seed: 1, actorId: null }),
    ).toThrow(/annotator role/);
    setActive(db, { userId: ann2.id, active: false, actorId: admin.id });
    expect(() =>
      autoAssign(db, { studyId: study.id, annotatorIds: [ann1.id, ann2.id], seed: 1, actorId: null }),
    ).toThrow(/active/);
    expect(db.select().from(assignments).all()).toEqual([]);
  });

  it("reassigns an unstarted assignment (audited) and refuses once the annotation has started", () => {
    const admin = boss;
    const { study, caseIds } = pair(2);
    const [a1, a2] = assignmentsOf(db, caseIds[0]!);
    expect([a1!.annotatorId, a2!.annotatorId].sort()).toEqual([ann1.id, ann2.id].sort());
    const aliceOn0 = [a1!, a2!].find((a) => a.annotatorId === ann1.id)!;
    const brunoOn0 = [a1!, a2!].find((a) => a.annotatorId === ann2.id)!;

    // Not to someone already on the case.
    expect(() =>
      reassign(db, { assignmentId: aliceOn0.id, toAnnotatorId: ann2.id, actorId: admin.id, studyId: study.id }),
    ).toThrow(/already assigned/);
    reassign(db, { assignmentId: aliceOn0.id, toAnnotatorId: carla.id, actorId: admin.id, studyId: study.id });
    expect(
      assignmentsOf(db, caseIds[0]!)
        .map((a) => a.annotatorId)
        .sort(),
    ).toEqual([ann2.id, carla.id].sort());
    expect(eventsOf(db, caseIds[0]!, "reassign").map((e) => [e.actorId, e.changes])).toEqual([
      [admin.id, { annotator: [ann1.id, carla.id] }],
    ]);
    expect(listAnnotatorCases(db, ann1.id).map((r) => r.key)).not.toContain(String(caseIds[0]));
    expect(listAnnotatorCases(db, carla.id).map((r) => r.key)).toEqual([String(caseIds[0])]);

    // bruno starts (a draft is enough): his assignment can no longer move.
    saveDraft(db, { userId: ann2.id, caseId: caseIds[0]!, values: sufficient("F32.1", 1), version: 0 });
    const before = assignmentsOf(db, caseIds[0]!);
    expect(() =>
      reassign(db, { assignmentId: brunoOn0.id, toAnnotatorId: dmitri.id, actorId: admin.id, studyId: study.id }),
    ).toThrow(/started/);
    expect(assignmentsOf(db, caseIds[0]!)).toEqual(before);
    expect(eventsOf(db, caseIds[0]!, "reassign")).toHaveLength(1);
  });

  it("lists a deactivated annotator's unstarted cases for reassignment (and not the started ones)", () => {
    const admin = boss;
    const study = importStudy("Leaver", 6);
    autoAssign(db, { studyId: study.id, annotatorIds: [ann1.id, ann2.id, carla.id], seed: 5, actorId: null });
    const carlaCases = listAnnotatorCases(db, carla.id).map((r) => Number(r.key));
    expect(carlaCases.length).toBe(4);
    saveDraft(db, { userId: carla.id, caseId: carlaCases[0]!, values: insufficient(["imaging"]), version: 0 });
    setActive(db, { userId: carla.id, active: false, actorId: admin.id });

    const unstarted = (annotator = "") =>
      assignmentsWindow(db, study.id, new URLSearchParams({ a_annotator: annotator, a_state: "unstarted" }));
    const listed = unstarted(carla.id).rows;
    expect(listed.map((r) => r.caseId).sort()).toEqual(carlaCases.slice(1).sort());
    for (const r of listed) expect(r).toMatchObject({ annotator: "carla", annotatorActive: false, state: "unstarted" });
    // Every listed row is unstarted, whoever holds it.
    expect(unstarted().rows.every((r) => r.state === "unstarted")).toBe(true);
    // The deactivated annotator cannot receive work, but their case can go to an active colleague not on it.
    const move = listed[0]!;
    const onCase = assignmentsOf(db, move.caseId).map((a) => a.annotatorId);
    const to = [ann1.id, ann2.id].find((id) => !onCase.includes(id))!;
    reassign(db, { assignmentId: move.assignmentId, toAnnotatorId: to, actorId: admin.id, studyId: study.id });
    expect(() =>
      reassign(db, {
        assignmentId: listed[1]!.assignmentId,
        toAnnotatorId: carla.id,
        actorId: admin.id,
        studyId: study.id,
      }),
    ).toThrow();
    expect(db.select({ active: users.active }).from(users).where(eq(users.id, carla.id)).get()!.active).toBeFalsy();
  });
});
