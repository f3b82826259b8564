/**
 * Adjudication on a real temporary SQLite database (docs/architecture.md#roles-and-blinding, docs/safe-psych.md#disagreement-and-adjudication): the queue and who may see a case, blinded
 * two-phase adjudication (independent judgement, then the annotations revealed as A/B in the stored order), the
 * reveal-only and independent-only modes, two adjudicators on one case, and reopening, all in the audit trail.
 */
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { adjudications, caseOutcomes, studies } from "../../db/schema";
import type { AdjudicationMode } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import {
  decide,
  getAdjudicationCase,
  listAdjudicationQueue,
  recordIndependent,
  reopenDecision,
  type LabelInput,
} from "../../app/adjudication/adjudication.server";
import { reassign } from "../../app/annotation/assignments.server";
import { listCaseEvents } from "../../app/audit/audit.server";
import type { UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";
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
let alice: UserView; // annotator
let bruno: UserView; // annotator
let paula: UserView; // annotator and adjudicator: annotated the last case
let judy: UserView; // adjudicator
let kim: UserView; // adjudicator
let boss: UserView; // admin
let studyId: number;
/** [sufficiency dispute, diagnosis dispute, agreed, dispute annotated by paula] */
let caseIds: number[];

const ALICE_NOTE = "First note: marked anhedonia, early waking";
const BRUNO_NOTE = "Second note: history suggests a bipolar course";

function label(
  values:
    | { sufficiency: "sufficient"; icd10: string; earliestSection: number }
    | { sufficiency: "insufficient"; missingInfo: string[]; missingOther?: string },
): LabelInput {
  return values.sufficiency === "sufficient"
    ? {
        sufficiency: "sufficient",
        icd10: values.icd10,
        earliestSection: values.earliestSection,
        missingInfo: [],
        missingOther: "",
      }
    : {
        sufficiency: "insufficient",
        icd10: "",
        earliestSection: null,
        missingInfo: values.missingInfo,
        missingOther: values.missingOther ?? "",
      };
}

const F32_2 = label({ sufficiency: "sufficient", icd10: "F32.2", earliestSection: 2 });
const F31_1 = label({ sufficiency: "sufficient", icd10: "F31.1", earliestSection: 3 });

function setMode(mode: AdjudicationMode) {
  db.update(studies).set({ adjudicationMode: mode }).where(eq(studies.id, studyId)).run();
}

let template: { db: Db; cleanup: () => void };

beforeAll(async () => {
  template = freshDb();
  [alice, bruno, paula, judy, kim, boss] = await Promise.all([
    makeUser(template.db, "alice", ["annotator"]),
    makeUser(template.db, "bruno", ["annotator"]),
    makeUser(template.db, "paula", ["annotator", "adjudicator"]),
    makeUser(template.db, "judy", ["adjudicator"]),
    makeUser(template.db, "kim", ["adjudicator"]),
    makeUser(template.db, "boss", ["admin"]),
  ]);
});
afterAll(() => template.cleanup());

beforeEach(() => {
  ({ db, cleanup } = cloneDb(template.db));
  const s = studyForPair(db, { name: "Adjudicated", cases: 4, annotatorIds: [alice.id, bruno.id] });
  studyId = s.study.id;
  caseIds = s.caseIds;
  // paula takes bruno's place on the last case before it starts.
  const brunoOnLast = assignmentsOf(db, caseIds[3]!).find((a) => a.annotatorId === bruno.id)!;
  reassign(db, { assignmentId: brunoOnLast.id, toAnnotatorId: paula.id, actorId: boss.id, studyId });

  submitPair(
    db,
    caseIds[0]!,
    { userId: alice.id, values: sufficient("F32.1", 2, ALICE_NOTE) },
    { userId: bruno.id, values: insufficient(["prior_episodes"], "", BRUNO_NOTE) },
  );
  submitPair(
    db,
    caseIds[1]!,
    { userId: alice.id, values: sufficient("F32.1", 1, ALICE_NOTE) },
    { userId: bruno.id, values: sufficient("F31.1", 3, BRUNO_NOTE) },
  );
  submitPair(
    db,
    caseIds[2]!,
    { userId: alice.id, values: sufficient("F32.1", 1) },
    { userId: bruno.id, values: sufficient("F32.1", 2) },
  );
  submitPair(
    db,
    caseIds[3]!,
    { userId: alice.id, values: sufficient("F20.0", 1) },
    { userId: paula.id, values: sufficient("F25.0", 1) },
  );
});
afterEach(() => cleanup());

describe("queue and access", () => {
  it("lists the disputed cases with their reason, and not agreed ones", () => {
    const queue = listAdjudicationQueue(db, judy.id);
    expect(queue.map((q) => [q.caseId, q.reason, q.mine])).toEqual([
      [caseIds[0], "sufficiency", "none"],
      [caseIds[1], "diagnosis", "none"],
      [caseIds[3], "diagnosis", "none"],
    ]);
    for (const q of queue) expect(q.disputedAt).toBe(outcomeOf(db, q.caseId)!.disputedAt);
    expect(getAdjudicationCase(db, { userId: judy.id, caseId: caseIds[2]! })).toBeNull();
    expect(recordIndependent(db, { userId: judy.id, caseId: caseIds[2]!, label: F32_2 })).toMatchObject({ ok: false });
  });

  it("never offers an adjudicator a case they annotated, by queue, view or action", () => {
    expect(listAdjudicationQueue(db, paula.id).map((q) => q.caseId)).toEqual([caseIds[0], caseIds[1]]);
    expect(getAdjudicationCase(db, { userId: paula.id, caseId: caseIds[3]! })).toBeNull();
    const before = caseSnapshot(db, caseIds[3]!);
    expect(recordIndependent(db, { userId: paula.id, caseId: caseIds[3]!, label: F32_2 })).toMatchObject({
      ok: false,
      status: 404,
    });
    expect(
      decide(db, {
        userId: paula.id,
        caseId: caseIds[3]!,
        label: F32_2,
        rationale: "mine",
        outcomeVersion: outcomeOf(db, caseIds[3]!)!.version,
      }),
    ).toMatchObject({ ok: false, status: 404 });
    expect(caseSnapshot(db, caseIds[3]!)).toEqual(before);
    expect(db.select().from(adjudications).all()).toEqual([]);
    // Others can adjudicate it.
    expect(getAdjudicationCase(db, { userId: judy.id, caseId: caseIds[3]! })).not.toBeNull();
  });
});

describe("two-phase adjudication (the default)", () => {
  it("hides the annotations until the independent judgement is recorded, then shows them as A/B in the stored order", () => {
    const caseId = caseIds[1]!;
    const first = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    expect(first).toMatchObject({
      mode: "two_phase",
      phase: "independent",
      annotations: null,
      independent: null,
      final: null,
    });
    // The dispute reason is derived from the annotations: not shown before the independent judgement.
    expect("reason" in first).toBe(false);
    const hidden = JSON.stringify(first);
    for (const secret of ["F32.1", "F31.1", ALICE_NOTE, BRUNO_NOTE, alice.id, bruno.id, "alice", "bruno"])
      expect(hidden).not.toContain(secret);

    expect(recordIndependent(db, { userId: judy.id, caseId, label: F32_2 })).toEqual({
      ok: true,
      status: "independent_recorded",
    });
    expect(listAdjudicationQueue(db, judy.id).find((q) => q.caseId === caseId)!.mine).toBe("independent_recorded");
    const revealed = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    expect(revealed.phase).toBe("reveal");
    expect(revealed.reason).toBe("diagnosis");
    expect(revealed.independent).toEqual({ sufficiency: "sufficient", icd10: "F32.2", earliestSection: 2 });

    const [aId, bId] = outcomeOf(db, caseId)!.annotatorOrder as [number, number];
    const rows = annotationsOf(db, caseId);
    const byId = (id: number) => rows.find((r) => r.id === id)!;
    const shownFor = (id: number) =>
      byId(id).annotatorId === alice.id
        ? { label: { sufficiency: "sufficient", icd10: "F32.1", earliestSection: 1 }, notes: ALICE_NOTE }
        : { label: { sufficiency: "sufficient", icd10: "F31.1", earliestSection: 3 }, notes: BRUNO_NOTE };
    expect(revealed.annotations).toEqual({ A: shownFor(aId), B: shownFor(bId) });
    // The same order on every load.
    expect(getAdjudicationCase(db, { userId: judy.id, caseId })!.annotations).toEqual(revealed.annotations);
    // Never who wrote which.
    const text = JSON.stringify(revealed);
    for (const secret of [alice.id, bruno.id, "alice", "bruno", "annotatorId", "assignmentId"])
      expect(text).not.toContain(secret);
    expect(eventsOf(db, caseId, "independent").map((e) => [e.actorId, e.changes])).toEqual([
      [judy.id, { independent: [null, { sufficiency: "sufficient", icd10: "F32.2", earliestSection: 2 }] }],
    ]);
  });

  it("the A/B order follows the stored order, whichever it is", () => {
    const caseId = caseIds[0]!;
    const outcome = outcomeOf(db, caseId)!;
    const [x, y] = outcome.annotatorOrder as [number, number];
    recordIndependent(db, { userId: judy.id, caseId, label: F32_2 });
    const before = getAdjudicationCase(db, { userId: judy.id, caseId })!.annotations!;
    // Swap the stored order: the view must follow it (it is the stored order, not a per-load draw or id order).
    db.update(caseOutcomes)
      .set({ annotatorOrder: [y, x] })
      .where(eq(caseOutcomes.caseId, caseId))
      .run();
    const after = getAdjudicationCase(db, { userId: judy.id, caseId })!.annotations!;
    expect(after).toEqual({ A: before.B, B: before.A });
  });

  it("fixes the independent judgement once recorded", () => {
    const caseId = caseIds[1]!;
    recordIndependent(db, { userId: judy.id, caseId, label: F32_2 });
    const refused = recordIndependent(db, { userId: judy.id, caseId, label: F31_1 });
    expect(refused).toMatchObject({ ok: false, status: 409 });
    expect((refused as { message: string }).message).toMatch(/already recorded/);
    expect(getAdjudicationCase(db, { userId: judy.id, caseId })!.independent).toEqual({
      sufficiency: "sufficient",
      icd10: "F32.2",
      earliestSection: 2,
    });
    expect(db.select().from(adjudications).all()).toHaveLength(1);
    expect(eventsOf(db, caseId, "independent")).toHaveLength(1);
  });

  it("refuses a decision before the independent judgement", () => {
    const caseId = caseIds[1]!;
    const before = caseSnapshot(db, caseId);
    const r = decide(db, {
      userId: judy.id,
      caseId,
      label: F32_2,
      rationale: "obvious",
      outcomeVersion: outcomeOf(db, caseId)!.version,
    });
    expect(r).toMatchObject({ ok: false, status: 409 });
    expect(caseSnapshot(db, caseId)).toEqual(before);
  });

  it("requires a rationale when the final label differs from the independent one, and makes the final label the gold", () => {
    const caseId = caseIds[1]!;
    recordIndependent(db, { userId: judy.id, caseId, label: F32_2 });
    const version = getAdjudicationCase(db, { userId: judy.id, caseId })!.outcomeVersion;
    const before = caseSnapshot(db, caseId);
    for (const rationale of ["", "   "]) {
      const r = decide(db, { userId: judy.id, caseId, label: F31_1, rationale, outcomeVersion: version });
      expect(r).toMatchObject({ ok: false, status: 422 });
      expect((r as { errors: Record<string, string> }).errors).toHaveProperty("rationale");
    }
    expect(caseSnapshot(db, caseId)).toEqual(before);

    const ok = decide(db, {
      userId: judy.id,
      caseId,
      label: F31_1,
      rationale: "  The history of a manic episode settles it.  ",
      outcomeVersion: version,
    });
    expect(ok).toEqual({ ok: true, status: "decided" });
    const o = outcomeOf(db, caseId)!;
    expect(o.status).toBe("adjudicated");
    expect(o.version).toBe(version + 1);
    expect(o.gold!).toEqual({ sufficiency: "sufficient", icd10: "F31.1", earliestSection: 3 });
    const row = db.select().from(adjudications).where(eq(adjudications.caseId, caseId)).get()!;
    expect(row).toMatchObject({
      adjudicatorId: judy.id,
      status: "decided",
      mode: "two_phase",
      rationale: "The history of a manic episode settles it.",
    });
    // Both phases are stored.
    expect(row.independentLabel!).toEqual({
      sufficiency: "sufficient",
      icd10: "F32.2",
      earliestSection: 2,
    });
    expect(row.finalLabel!).toEqual({ sufficiency: "sufficient", icd10: "F31.1", earliestSection: 3 });
    expect(eventsOf(db, caseId, "decide").map((e) => [e.actorId, e.changes])).toEqual([
      [
        judy.id,
        {
          gold: [null, { sufficiency: "sufficient", icd10: "F31.1", earliestSection: 3 }],
          rationale: "The history of a manic episode settles it.",
        },
      ],
    ]);
    expect(listAdjudicationQueue(db, judy.id).map((q) => q.caseId)).not.toContain(caseId);
    const decided = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    expect(decided).toMatchObject({
      phase: "decided",
      final: { label: { icd10: "F31.1" }, rationale: "The history of a manic episode settles it." },
    });
  });

  it("accepts a confirmation of the independent judgement without a rationale", () => {
    const caseId = caseIds[0]!;
    const independent = label({
      sufficiency: "insufficient",
      missingInfo: ["prior_episodes", "other"],
      missingOther: "Collateral",
    });
    recordIndependent(db, { userId: judy.id, caseId, label: independent });
    const r = decide(db, {
      userId: judy.id,
      caseId,
      label: independent,
      rationale: "",
      outcomeVersion: outcomeOf(db, caseId)!.version,
    });
    expect(r).toEqual({ ok: true, status: "decided" });
    expect(outcomeOf(db, caseId)!.gold!).toEqual({
      sufficiency: "insufficient",
      missingInfo: ["prior_episodes", "other"],
      missingInfoOther: "Collateral",
    });
  });

  it("refuses an invalid final label with field errors", () => {
    const caseId = caseIds[0]!; // T = 3
    recordIndependent(db, { userId: judy.id, caseId, label: F32_2 });
    const before = caseSnapshot(db, caseId);
    const r = decide(db, {
      userId: judy.id,
      caseId,
      label: label({ sufficiency: "sufficient", icd10: "F32.1", earliestSection: 4 }),
      rationale: "x",
      outcomeVersion: outcomeOf(db, caseId)!.version,
    });
    expect(r).toMatchObject({ ok: false, status: 422, errors: { earliestSection: expect.any(String) } });
    expect(caseSnapshot(db, caseId)).toEqual(before);
  });
});

describe("other adjudication modes (study setting)", () => {
  it("reveal_only: A/B shown from the start, no independent phase, a rationale always required", () => {
    setMode("reveal_only");
    const caseId = caseIds[1]!;
    const view = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    expect(view).toMatchObject({ mode: "reveal_only", phase: "reveal", independent: null });
    expect(view.annotations).not.toBeNull();
    expect([view.annotations!.A.notes, view.annotations!.B.notes].sort()).toEqual([ALICE_NOTE, BRUNO_NOTE]);
    expect(JSON.stringify(view)).not.toContain(alice.id);
    expect(recordIndependent(db, { userId: judy.id, caseId, label: F32_2 })).toMatchObject({ ok: false, status: 409 });
    expect(
      decide(db, { userId: judy.id, caseId, label: F32_2, rationale: " ", outcomeVersion: view.outcomeVersion }),
    ).toMatchObject({ ok: false, status: 422, errors: { rationale: expect.any(String) } });
    expect(outcomeOf(db, caseId)!.status).toBe("disputed");
    expect(
      decide(db, {
        userId: judy.id,
        caseId,
        label: F32_2,
        rationale: "Severity fits F32.2.",
        outcomeVersion: view.outcomeVersion,
      }),
    ).toEqual({ ok: true, status: "decided" });
    const row = db.select().from(adjudications).where(eq(adjudications.caseId, caseId)).get()!;
    expect(row).toMatchObject({ mode: "reveal_only", status: "decided", independentLabel: null });
    expect(outcomeOf(db, caseId)!.gold!).toMatchObject({ icd10: "F32.2" });
  });

  it("independent_only: the annotations are never shown; the judgement is the decision", () => {
    setMode("independent_only");
    const caseId = caseIds[1]!;
    const view = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    expect(view).toMatchObject({ mode: "independent_only", phase: "independent", annotations: null });
    expect(JSON.stringify(view)).not.toContain(ALICE_NOTE);
    expect(recordIndependent(db, { userId: judy.id, caseId, label: F32_2 })).toMatchObject({ ok: false, status: 409 });
    expect(getAdjudicationCase(db, { userId: judy.id, caseId })!.annotations).toBeNull();
    expect(
      decide(db, { userId: judy.id, caseId, label: F32_2, rationale: "", outcomeVersion: view.outcomeVersion }),
    ).toMatchObject({ ok: false, status: 422 });
    expect(
      decide(db, {
        userId: judy.id,
        caseId,
        label: F32_2,
        rationale: "Read blind.",
        outcomeVersion: view.outcomeVersion,
      }),
    ).toEqual({ ok: true, status: "decided" });
    const after = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    expect(after).toMatchObject({ phase: "decided", annotations: null });
    expect(JSON.stringify(after)).not.toContain(ALICE_NOTE);
    expect(JSON.stringify(after)).not.toContain(BRUNO_NOTE);
    const row = db.select().from(adjudications).where(eq(adjudications.caseId, caseId)).get()!;
    expect(row).toMatchObject({ mode: "independent_only", status: "decided" });
    expect(row.independentLabel!).toEqual(row.finalLabel!);
  });
});

describe("two adjudicators on one case", () => {
  it("refuses the second, stale decision with a clear message and overwrites nothing", () => {
    const caseId = caseIds[1]!;
    // Both open the case and record their own judgement.
    recordIndependent(db, { userId: judy.id, caseId, label: F32_2 });
    recordIndependent(db, { userId: kim.id, caseId, label: F31_1 });
    const judyView = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    const kimView = getAdjudicationCase(db, { userId: kim.id, caseId })!;
    expect(kimView.outcomeVersion).toBe(judyView.outcomeVersion);

    expect(
      decide(db, { userId: judy.id, caseId, label: F32_2, rationale: "", outcomeVersion: judyView.outcomeVersion }),
    ).toEqual({ ok: true, status: "decided" });
    const before = caseSnapshot(db, caseId);
    const stale = decide(db, {
      userId: kim.id,
      caseId,
      label: F31_1,
      rationale: "",
      outcomeVersion: kimView.outcomeVersion,
    });
    expect(stale).toMatchObject({ ok: false, status: 409 });
    expect((stale as { message: string }).message).toMatch(
      /Another adjudicator decided this case.*nothing was overwritten/,
    );
    expect(caseSnapshot(db, caseId)).toEqual(before);
    expect(outcomeOf(db, caseId)!.gold!).toMatchObject({ icd10: "F32.2" });
    const rows = db.select().from(adjudications).where(eq(adjudications.caseId, caseId)).all();
    expect(rows.map((r) => [r.adjudicatorId, r.status, r.finalLabel === null])).toEqual([
      [judy.id, "decided", false],
      [kim.id, "superseded", true],
    ]);
    expect(eventsOf(db, caseId, "decide")).toHaveLength(1);
    // The case is gone from kim's queue and view; a late independent judgement is refused too.
    expect(listAdjudicationQueue(db, kim.id).map((q) => q.caseId)).not.toContain(caseId);
    expect(getAdjudicationCase(db, { userId: kim.id, caseId })).toBeNull();
    expect(recordIndependent(db, { userId: kim.id, caseId, label: F31_1 })).toMatchObject({ ok: false, status: 409 });
  });

  it("tells one adjudicator in two tabs that the case was decided in their own other tab", () => {
    const caseId = caseIds[1]!;
    recordIndependent(db, { userId: judy.id, caseId, label: F32_2 });
    // Two tabs of judy's hold the same page; the first decides.
    const tab = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    expect(
      decide(db, { userId: judy.id, caseId, label: F32_2, rationale: "", outcomeVersion: tab.outcomeVersion }),
    ).toEqual({ ok: true, status: "decided" });
    const before = caseSnapshot(db, caseId);
    const second = decide(db, {
      userId: judy.id,
      caseId,
      label: F31_1,
      rationale: "other tab",
      outcomeVersion: tab.outcomeVersion,
    });
    expect(second).toMatchObject({ ok: false, status: 409 });
    const message = (second as { message: string }).message;
    expect(message).toMatch(/You decided this case in another tab or window/);
    expect(message).not.toMatch(/Another adjudicator/);
    expect(caseSnapshot(db, caseId)).toEqual(before);
  });

  it("refuses a form loaded before a decision and a reopen (same status, newer version)", () => {
    setMode("reveal_only");
    const caseId = caseIds[0]!;
    const kimView = getAdjudicationCase(db, { userId: kim.id, caseId })!;
    decide(db, { userId: judy.id, caseId, label: F32_2, rationale: "first", outcomeVersion: kimView.outcomeVersion });
    expect(
      reopenDecision(db, {
        adminId: boss.id,
        caseId,
        reason: "wrong code",
        outcomeVersion: outcomeOf(db, caseId)!.version,
      }),
    ).toEqual({ ok: true });
    expect(outcomeOf(db, caseId)!.status).toBe("disputed");
    const stale = decide(db, {
      userId: kim.id,
      caseId,
      label: F31_1,
      rationale: "late",
      outcomeVersion: kimView.outcomeVersion,
    });
    expect(stale).toMatchObject({ ok: false, status: 409 });
    expect(outcomeOf(db, caseId)!).toMatchObject({ status: "disputed", gold: null });
    // With the fresh version it goes through.
    const fresh = getAdjudicationCase(db, { userId: kim.id, caseId })!;
    expect(
      decide(db, { userId: kim.id, caseId, label: F31_1, rationale: "late", outcomeVersion: fresh.outcomeVersion }),
    ).toEqual({ ok: true, status: "decided" });
  });
});

describe("reopening a decision", () => {
  it("returns the case to the queue, keeps the old decision (status reopened), and records it all in the audit trail", () => {
    const caseId = caseIds[1]!;
    recordIndependent(db, { userId: judy.id, caseId, label: F32_2 });
    decide(db, {
      userId: judy.id,
      caseId,
      label: F31_1,
      rationale: "manic episode",
      outcomeVersion: outcomeOf(db, caseId)!.version,
    });
    const decidedVersion = outcomeOf(db, caseId)!.version;

    expect(
      reopenDecision(db, {
        adminId: boss.id,
        caseId: caseIds[2]!,
        reason: "agreed cases cannot be reopened",
        outcomeVersion: outcomeOf(db, caseIds[2]!)!.version,
      }),
    ).toMatchObject({ ok: false });
    expect(
      reopenDecision(db, {
        adminId: boss.id,
        caseId,
        reason: "new collateral history",
        outcomeVersion: decidedVersion,
      }),
    ).toEqual({ ok: true });

    const o = outcomeOf(db, caseId)!;
    expect(o).toMatchObject({
      status: "disputed",
      gold: null,
      disputeReason: "diagnosis",
      version: decidedVersion + 1,
    });
    expect(listAdjudicationQueue(db, judy.id).map((q) => q.caseId)).toContain(caseId);
    expect(listAdjudicationQueue(db, kim.id).find((q) => q.caseId === caseId)).toMatchObject({
      reason: "diagnosis",
      mine: "none",
    });
    const old = db.select().from(adjudications).where(eq(adjudications.caseId, caseId)).all();
    expect(old).toHaveLength(1);
    expect(old[0]).toMatchObject({ status: "reopened", adjudicatorId: judy.id, rationale: "manic episode" });
    expect(old[0]!.finalLabel!).toMatchObject({ icd10: "F31.1" });
    // Judy decided it and has seen A and B: no second "independent" step (docs/safe-psych.md, "Reopening"). Her
    // earlier judgement stands, the annotations and the admin's reason are shown, the form starts from her decision.
    const revising = getAdjudicationCase(db, { userId: judy.id, caseId })!;
    expect(revising).toMatchObject({
      phase: "reveal",
      independent: { sufficiency: "sufficient", icd10: "F32.2", earliestSection: 2 },
      final: null,
      reopened: { reason: "new collateral history" },
      revision: { previous: { label: { icd10: "F31.1" }, rationale: "manic episode" } },
    });
    expect(revising.annotations).not.toBeNull();
    expect(revising.reason).toBe("diagnosis");
    expect(recordIndependent(db, { userId: judy.id, caseId, label: F32_2 })).toMatchObject({ ok: false, status: 409 });
    // Kim is new to the case: the blind independent step first, the admin's reason (which may speak of the
    // annotations) held back until it is recorded.
    expect(getAdjudicationCase(db, { userId: kim.id, caseId })).toMatchObject({
      phase: "independent",
      annotations: null,
      final: null,
      reopened: { reason: null },
      revision: null,
    });
    expect(listAdjudicationQueue(db, kim.id).find((q) => q.caseId === caseId)).toMatchObject({ reopened: true });
    expect(
      reopenDecision(db, { adminId: boss.id, caseId, reason: "again", outcomeVersion: decidedVersion + 1 }),
    ).toMatchObject({ ok: false });

    const history = listCaseEvents(db, caseId).filter(
      (e) => e.entity !== "annotation" && e.entity !== "assignment" && e.entity !== "case",
    );
    expect(history.map((e) => [e.action, e.actor])).toEqual([
      ["disputed", null],
      ["independent", "judy"],
      ["decide", "judy"],
      ["reopen", "boss"],
    ]);
    expect(history.at(-1)!.changes).toEqual({
      gold: [{ sufficiency: "sufficient", icd10: "F31.1", earliestSection: 3 }, null],
      reason: "new collateral history",
    });

    // Judy's revision is held to her earlier independent judgement (F32.2): a different label needs a rationale.
    expect(
      decide(db, {
        userId: judy.id,
        caseId,
        label: F31_1,
        rationale: "",
        outcomeVersion: outcomeOf(db, caseId)!.version,
      }),
    ).toMatchObject({ ok: false, status: 422, errors: { rationale: expect.any(String) } });

    // The second round's decision becomes the gold; the first stays in history.
    recordIndependent(db, { userId: kim.id, caseId, label: F32_2 });
    expect(
      decide(db, {
        userId: kim.id,
        caseId,
        label: F32_2,
        rationale: "",
        outcomeVersion: outcomeOf(db, caseId)!.version,
      }),
    ).toEqual({ ok: true, status: "decided" });
    expect(outcomeOf(db, caseId)!.gold!).toMatchObject({ icd10: "F32.2" });
    expect(
      db
        .select()
        .from(adjudications)
        .where(eq(adjudications.caseId, caseId))
        .all()
        .map((r) => r.status),
    ).toEqual(["reopened", "decided"]);
    expect(eventsOf(db, caseId, "decide")).toHaveLength(2);
  });
});
