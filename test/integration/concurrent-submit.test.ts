/**
 * Two annotators submitting the same case at the same moment (docs/safe-psych.md#annotation). Each
 * annotator is a separate OS process with its own SQLite connection (test/support/submit-race.ts), both spinning
 * until the same instant. The IMMEDIATE transaction must serialise them: both succeed, exactly one of them locks the
 * case, one outcome row, two lock events, and no SQLITE_BUSY reaches anyone.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { saveDraft, type AnnotationValues } from "../../app/annotation/annotations.server";
import type { UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";
import { annotationsOf, eventsOf, insufficient, outcomeOf, studyForPair, sufficient } from "../support/labels";

const ROOT = new URL("../..", import.meta.url).pathname;
const SCRIPT = new URL("../support/submit-race.ts", import.meta.url).pathname;
const ROUNDS = 8;
const SPACING_MS = 250;

let db: Db;
let path: string;
let cleanup: () => void;
let ann1: UserView;
let ann2: UserView;

beforeAll(async () => {
  ({ db, path, cleanup } = freshDb());
  [ann1, ann2] = await Promise.all([makeUser(db, "alice", ["annotator"]), makeUser(db, "bruno", ["annotator"])]);
});
afterAll(() => cleanup());

interface Line {
  caseId: number;
  result?: { ok: boolean; state?: string; status?: number; message?: string };
  startedAt?: number;
  endedAt?: number;
  spunMs?: number;
  error?: string;
}

interface Racer {
  ready: Promise<void>;
  go: (startAt: number) => void;
  done: Promise<{ lines: Line[]; stderr: string; code: number | null }>;
}

function racer(
  userId: string,
  plan: { caseId: number; values: AnnotationValues; version: number; offsetMs: number }[],
): Racer {
  const child = spawn(process.execPath, ["--import", "tsx", SCRIPT, path, userId, JSON.stringify(plan)], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const lines: Line[] = [];
  let markReady: () => void;
  let failReady: (e: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  createInterface({ input: child.stdout }).on("line", (l) => {
    if (l === "ready") markReady();
    else if (l.startsWith("{")) lines.push(JSON.parse(l));
  });
  const done = new Promise<{ lines: Line[]; stderr: string; code: number | null }>((resolve) =>
    child.on("exit", (code) => {
      failReady(new Error(`racer exited before it was ready (code ${code}):\n${stderr}`));
      resolve({ lines, stderr, code });
    }),
  );
  return { ready, go: (startAt) => child.stdin.end(`${startAt}\n`), done };
}

describe("two annotators submitting the same case at the same moment", () => {
  it("both succeed, both annotations are locked, one outcome, two lock events, no SQLITE_BUSY", async () => {
    const { caseIds } = studyForPair(db, { name: "Race", cases: ROUNDS, annotatorIds: [ann1.id, ann2.id] });
    // A mix: agreeing and disputed pairs, from scratch (version 0) and from saved drafts (version 1).
    const valuesFor = (round: number, who: 0 | 1): AnnotationValues => {
      switch (round % 4) {
        case 0:
          return sufficient("F32.1", who === 0 ? 1 : 2);
        case 1:
          return who === 0 ? sufficient("F20.0", 2) : insufficient(["imaging"]);
        case 2:
          return insufficient(who === 0 ? ["laboratory"] : ["onset_duration"]);
        default:
          return sufficient(who === 0 ? "F32.1" : "F33.1", 1);
      }
    };
    const versionFor = (round: number) => (round % 2 === 0 ? 0 : 1);
    for (let round = 0; round < ROUNDS; round++)
      if (versionFor(round) === 1)
        for (const [who, user] of [ann1, ann2].entries()) {
          const r = saveDraft(db, {
            userId: user.id,
            caseId: caseIds[round]!,
            values: valuesFor(round, who as 0 | 1),
            version: 0,
          });
          expect(r.ok).toBe(true);
        }

    const plans = [ann1, ann2].map((user, who) =>
      caseIds.map((caseId, round) => ({
        caseId,
        values: valuesFor(round, who as 0 | 1),
        version: versionFor(round),
        offsetMs: round * SPACING_MS,
      })),
    );
    const racers = [racer(ann1.id, plans[0]!), racer(ann2.id, plans[1]!)];
    await Promise.all(racers.map((r) => r.ready));
    const startAt = Date.now() + 300;
    for (const r of racers) r.go(startAt);
    const [one, two] = await Promise.all(racers.map((r) => r.done));

    for (const run of [one!, two!]) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toMatch(/SQLITE_BUSY|database is locked/i);
      expect(run.lines.filter((l) => l.error)).toEqual([]);
      expect(run.lines).toHaveLength(ROUNDS);
    }

    let overlapping = 0;
    for (const [round, caseId] of caseIds.entries()) {
      const a = one!.lines.find((l) => l.caseId === caseId)!;
      const b = two!.lines.find((l) => l.caseId === caseId)!;
      expect(a.result, `round ${round}`).toMatchObject({ ok: true });
      expect(b.result, `round ${round}`).toMatchObject({ ok: true });
      // Exactly one of the two made the second submission and locked the case.
      expect([a.result!.state, b.result!.state].sort(), `round ${round}`).toEqual(["locked", "submitted"]);
      if (a.startedAt! <= b.endedAt! && b.startedAt! <= a.endedAt!) overlapping++;

      const rows = annotationsOf(db, caseId);
      expect(
        rows.map((r) => r.status),
        `round ${round}`,
      ).toEqual(["locked", "locked"]);
      expect(rows.map((r) => r.annotatorId).sort()).toEqual([ann1.id, ann2.id].sort());
      const outcome = outcomeOf(db, caseId);
      expect(outcome, `round ${round}`).toBeDefined();
      expect(outcome!.status).toBe(round % 4 === 0 || round % 4 === 2 ? "agreed" : "disputed");
      expect(eventsOf(db, caseId, "lock"), `round ${round}`).toHaveLength(2);
      expect(eventsOf(db, caseId, "submit"), `round ${round}`).toHaveLength(2);
      expect(eventsOf(db, caseId).filter((e) => e.action === "gold_derived" || e.action === "disputed")).toHaveLength(
        1,
      );
    }
    // At least some rounds really ran at the same time (otherwise this test would prove nothing).
    expect(overlapping).toBeGreaterThan(0);
    const outcomes = db.$client.prepare("select count(*) as n from case_outcomes").get() as { n: number };
    expect(outcomes.n).toBe(ROUNDS);
  }, 90_000);
});
