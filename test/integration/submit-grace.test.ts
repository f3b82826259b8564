/**
 * Second chances (docs/safe-psych.md, "Second chances"): the submission that completes a case's pair can be undone
 * for the grace period; then the pair locks and the dispute rule runs, once, in one transaction, at the first read
 * after the grace period or at the sweep. Cases in grace are not final anywhere (export, progress, adjudication).
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import {
  getAnnotatorItem,
  settleDueLocks,
  submitAnnotation,
  undoSubmission,
  type AnnotationValues,
} from "../../app/annotation/annotations.server";
import { listAdjudicationQueue } from "../../app/adjudication/adjudication.server";
import { exportGold, goldExportRefusal, listCaseProgress } from "../../app/gold/gold-export.server";
import { submitGraceMs, submitGraceProblem } from "../../app/annotation/submit-grace.server";
import { UNDO_CLOSED } from "../../app/annotation/rater-quality.server";
import type { UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";
import { annotationsOf, cloneDb, eventsOf, outcomeOf, studyForPair, sufficient } from "../support/labels";

const GRACE = 120_000;
const T0 = Date.UTC(2030, 0, 1, 9, 0, 0);

let template: { db: Db; cleanup: () => void };
let db: Db;
let path: string;
let cleanup: () => void;
let alice: UserView;
let bruno: UserView;
let judy: UserView;
let studyId: number;
let caseIds: number[];

beforeAll(async () => {
  template = freshDb();
  [alice, bruno, judy] = await Promise.all([
    makeUser(template.db, "alice", ["annotator"]),
    makeUser(template.db, "bruno", ["annotator"]),
    makeUser(template.db, "judy", ["adjudicator"]),
  ]);
});
afterAll(() => template.cleanup());
beforeEach(() => {
  process.env.CONCORD_SUBMIT_GRACE_SECONDS = String(GRACE / 1000);
  ({ db, path, cleanup } = cloneDb(template.db));
  const s = studyForPair(db, { name: "Grace", cases: 3, annotatorIds: [alice.id, bruno.id] });
  studyId = s.study.id;
  caseIds = s.caseIds;
});
afterEach(() => {
  process.env.CONCORD_SUBMIT_GRACE_SECONDS = "0";
  cleanup();
});

const submit = (userId: string, caseId: number, values: AnnotationValues, version: number, now: number) =>
  submitAnnotation(db, { userId, caseId, values, version, now });
const viewOf = (userId: string, caseId: number, now: number) => {
  const found = getAnnotatorItem(db, { userId, key: String(caseId), now });
  if (!found || !("view" in found)) throw new Error("not found");
  return found.view;
};

/** Alice submits F32.1 first; Bruno's slip (F33.1) completes the pair at T0. */
function pairInGrace(caseId: number) {
  expect(submit(alice.id, caseId, sufficient("F32.1", 1, "alice's note"), 0, T0 - 60_000)).toMatchObject({
    ok: true,
    state: "submitted",
  });
  const second = submit(bruno.id, caseId, sufficient("F33.1", 1), 0, T0);
  expect(second).toEqual({ ok: true, version: 1, savedAt: T0, state: "submitted", undoUntil: T0 + GRACE });
  return second;
}

describe("the grace period after the second submission", () => {
  it("the grace period is configurable; a bad setting is refused with a clear reason", () => {
    expect(submitGraceMs()).toBe(GRACE);
    expect(submitGraceProblem("90")).toBeNull();
    expect(submitGraceProblem("2m")).toMatch(/^CONCORD_SUBMIT_GRACE_SECONDS: expected a whole number .* got "2m"$/);
    expect(submitGraceProblem("99999")).toMatch(/from 0 to 3600/);
  });

  it("shows the final values with an undo until the end, blind to the other annotator, and nothing is final", () => {
    const caseId = caseIds[0]!;
    pairInGrace(caseId);
    const mine = viewOf(bruno.id, caseId, T0 + 1_000);
    expect(mine).toMatchObject({ state: "submitted", undoUntil: T0 + GRACE, values: sufficient("F33.1", 1) });
    // Blinding: nothing of Alice's annotation reaches Bruno's page.
    expect(JSON.stringify(mine)).not.toMatch(/F32\.1|alice/);
    // Alice's page says nothing new: her annotation is submitted, with no undo and no hint of Bruno's.
    expect(viewOf(alice.id, caseId, T0 + 1_000)).toMatchObject({ state: "submitted", undoUntil: null });
    // No outcome: the dispute rule has not run; the case is in no adjudication queue and not in the export.
    expect(outcomeOf(db, caseId)).toBeUndefined();
    expect(annotationsOf(db, caseId).map((a) => a.status)).toEqual(["submitted", "submitted"]);
    expect(listAdjudicationQueue(db, judy.id)).toEqual([]);
    expect(goldExportRefusal(db, studyId)).toMatch(/not final/);
    const partial = exportGold(db, { studyId, allowPartial: true, now: new Date(T0) });
    expect(partial).toMatchObject({ ok: true, exported: 0 });
    expect(listCaseProgress(db, studyId).find((p) => p.caseId === caseId)!.state).not.toMatch(/agreed|disputed/);
  });

  it("undo within the grace period restores the draft with its values, and the case does not lock", () => {
    const caseId = caseIds[0]!;
    pairInGrace(caseId);
    const undone = undoSubmission(db, { userId: bruno.id, key: String(caseId), version: 1, now: T0 + 30_000 });
    expect(undone).toMatchObject({ ok: true, state: "draft", version: 2 });
    const view = viewOf(bruno.id, caseId, T0 + 30_000);
    expect(view).toMatchObject({ state: "draft", version: 2, undoUntil: null, values: sufficient("F33.1", 1) });
    expect(eventsOf(db, caseId, "undo_submit").map((e) => [e.actorId, e.changes])).toEqual([
      [bruno.id, { status: ["submitted", "draft"] }],
    ]);
    // Long after the grace period nothing locks: the pair is not complete.
    expect(settleDueLocks(db, T0 + 10 * GRACE)).toBe(0);
    expect(outcomeOf(db, caseId)).toBeUndefined();
    // The corrected submission completes the pair again, with a new grace period; it agrees with Alice's.
    expect(submit(bruno.id, caseId, sufficient("F32.1", 1), 2, T0 + 40_000)).toMatchObject({
      ok: true,
      undoUntil: T0 + 40_000 + GRACE,
    });
    expect(viewOf(bruno.id, caseId, T0 + 40_000 + GRACE).state).toBe("locked");
    expect(outcomeOf(db, caseId)).toMatchObject({ status: "agreed" });
    expect(eventsOf(db, caseId, "disputed")).toEqual([]);
  });

  it("a stale undo (another tab) is the engine's conflict and changes nothing", () => {
    const caseId = caseIds[0]!;
    pairInGrace(caseId);
    expect(undoSubmission(db, { userId: bruno.id, key: String(caseId), version: 0, now: T0 + 1 })).toMatchObject({
      ok: false,
      status: 409,
    });
    expect(annotationsOf(db, caseId).map((a) => a.status)).toEqual(["submitted", "submitted"]);
    // The first annotator has no undo: their submission did not complete the pair.
    expect(undoSubmission(db, { userId: alice.id, key: String(caseId), version: 1, now: T0 + 1 })).toEqual({
      ok: false,
      status: 409,
      message: UNDO_CLOSED,
    });
  });

  it("after the grace period the pair locks and the dispute rule runs exactly once, at the grace period's end", () => {
    const caseId = caseIds[1]!;
    pairInGrace(caseId);
    // Just before the end: still open.
    expect(settleDueLocks(db, T0 + GRACE - 1)).toBe(0);
    expect(outcomeOf(db, caseId)).toBeUndefined();
    // Every reader after the end sees the same locked state; only the first one locks.
    const later = T0 + GRACE + 5_000;
    expect(viewOf(bruno.id, caseId, later)).toMatchObject({ state: "locked", undoUntil: null });
    expect(settleDueLocks(db, later)).toBe(0);
    expect(listAdjudicationQueue(db, judy.id).map((q) => q.caseId)).toEqual([caseId]);
    expect(goldExportRefusal(db, studyId)).toMatch(/not final/); // the other cases
    expect(outcomeOf(db, caseId)).toMatchObject({ status: "disputed", disputedAt: T0 + GRACE });
    expect(eventsOf(db, caseId, "disputed")).toHaveLength(1);
    expect(eventsOf(db, caseId, "lock").map((e) => e.at)).toEqual([T0 + GRACE, T0 + GRACE]);
    expect(annotationsOf(db, caseId).map((a) => [a.status, a.locksAt])).toEqual([
      ["locked", null],
      ["locked", null],
    ]);
    // Too late to undo, and a revision is refused as on any locked case.
    expect(undoSubmission(db, { userId: bruno.id, key: String(caseId), version: 2, now: later })).toMatchObject({
      ok: false,
      status: 409,
    });
    expect(submit(bruno.id, caseId, sufficient("F32.1", 1), 2, later)).toMatchObject({ ok: false, status: 409 });
  });

  it("a save after the grace period locks the pair in its own transaction before it is judged", () => {
    const caseId = caseIds[2]!;
    pairInGrace(caseId);
    // A revision from a page left open past the end: the pair locks first, and the revision is refused.
    const r = submit(bruno.id, caseId, sufficient("F32.1", 1), 1, T0 + GRACE);
    expect(r).toMatchObject({ ok: false, status: 409 });
    expect(outcomeOf(db, caseId)).toMatchObject({ status: "disputed" });
    expect(annotationsOf(db, caseId).find((a) => a.annotatorId === bruno.id)!.icd10).toBe("F33.1");
  });
});

describe("two annotators submitting one case at the same moment, with a grace period", () => {
  it("both succeed, exactly one holds the undo, and the pair locks once after it", async () => {
    const caseId = caseIds[0]!;
    const ROOT = new URL("../..", import.meta.url).pathname;
    const SCRIPT = new URL("../support/submit-race.ts", import.meta.url).pathname;
    const race = (userId: string, values: AnnotationValues) => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", SCRIPT, path, userId, JSON.stringify([{ caseId, values, version: 0, offsetMs: 0 }])],
        { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env } },
      );
      const lines: { result?: { ok: boolean; state?: string; undoUntil?: number } }[] = [];
      let markReady!: () => void;
      const ready = new Promise<void>((r) => (markReady = r));
      createInterface({ input: child.stdout }).on("line", (l) => {
        if (l === "ready") markReady();
        else if (l.startsWith("{")) lines.push(JSON.parse(l));
      });
      const done = new Promise<number | null>((r) => child.on("exit", r));
      return { ready, go: (at: number) => child.stdin.end(`${at}\n`), done, lines };
    };
    const racers = [race(alice.id, sufficient("F32.1", 1)), race(bruno.id, sufficient("F20.0", 2))];
    await Promise.all(racers.map((r) => r.ready));
    const at = Date.now() + 300;
    for (const r of racers) r.go(at);
    expect(await Promise.all(racers.map((r) => r.done))).toEqual([0, 0]);
    const results = racers.map((r) => r.lines[0]!.result!);
    expect(results.map((r) => r.ok)).toEqual([true, true]);
    expect(results.map((r) => r.state)).toEqual(["submitted", "submitted"]);
    expect(results.filter((r) => r.undoUntil !== undefined)).toHaveLength(1);
    const rows = annotationsOf(db, caseId);
    expect(rows.filter((r) => r.locksAt !== null)).toHaveLength(1);
    expect(outcomeOf(db, caseId)).toBeUndefined();
    const end = rows.find((r) => r.locksAt !== null)!.locksAt!;
    expect(settleDueLocks(db, end)).toBe(1);
    expect(settleDueLocks(db, end + 1)).toBe(0);
    expect(outcomeOf(db, caseId)).toMatchObject({ status: "disputed" });
    expect(eventsOf(db, caseId, "disputed")).toHaveLength(1);
  });
});
