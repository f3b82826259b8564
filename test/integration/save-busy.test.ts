/**
 * A save while another process holds the database's write lock (docs/architecture.md, "Saving under load"): the web
 * server's short busy timeout makes the workspace action answer 503 with Retry-After within a moment, nothing is
 * written, and the same save goes through once the lock is released. And a reopen carries the outcome version its
 * page read: a stale page cannot reopen a newer decision.
 */
import Database from "better-sqlite3";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { annotations, caseOutcomes, studies } from "../../db/schema";
import { applyWebBusyTimeout, type Db } from "../../app/platform/db.server";
import { requireUser } from "../../app/accounts/guard.server";
import { action as annotateAction } from "../../app/routes/annotate.$caseId";
import {
  decide,
  getAdjudicationCase,
  reopenDecision,
  REOPEN_STALE,
  type LabelInput,
} from "../../app/adjudication/adjudication.server";
import { login, type UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";
import { studyForPair, submitPair, sufficient } from "../support/labels";

const BASE = "http://concord.test";
let db: Db;
let path: string;
let cleanup: () => void;
let alice: UserView;
let bruno: UserView;
let caseIds: number[];
let studyId: number;

beforeEach(async () => {
  ({ db, path, cleanup } = freshDb());
  [alice, bruno] = await Promise.all([makeUser(db, "alice", ["annotator"]), makeUser(db, "bruno", ["annotator"])]);
  await makeUser(db, "boss", ["admin"]);
  await makeUser(db, "judy", ["adjudicator"]);
  const s = studyForPair(db, { name: "Busy", cases: 2, annotatorIds: [alice.id, bruno.id] });
  caseIds = s.caseIds;
  studyId = s.study.id;
});
afterEach(() => cleanup());

async function post(username: string, url: string, fields: Record<string, string>) {
  const r = await login(db, { username, password: TEST_PASSWORD, ip: "192.0.2.1" });
  if (!r.ok) throw new Error(r.error);
  const cookie = r.sessionCookie.split(";")[0]!;
  const user = await requireUser(new Request(`${BASE}/`, { headers: { Cookie: cookie } }));
  return new Request(BASE + url, {
    method: "POST",
    headers: { Cookie: cookie },
    body: new URLSearchParams({ csrf: user.csrf, ...fields }),
  });
}

type Out = { type: string; data: Record<string, unknown>; init: { status: number; headers: Record<string, string> } };

describe("a save while another process holds the write lock", () => {
  it("answers 503 with Retry-After within ~250 ms, writes nothing, and succeeds once the lock is released", async () => {
    applyWebBusyTimeout();
    const values = JSON.stringify({ ...sufficient("F32.1", 2), notes: "kept in the page" });
    // Logged in before the lock is taken (logging in writes too).
    const first = await post("alice", `/annotate/${caseIds[0]}`, { intent: "draft", version: "0", values });
    const second = await post("alice", `/annotate/${caseIds[0]}`, { intent: "draft", version: "0", values });
    const send = (req: Request) =>
      annotateAction({ request: req, params: { caseId: String(caseIds[0]) }, context: {} } as never);
    // Another connection (as a bulk import would be) holds the write lock.
    const holder = new Database(path);
    holder.exec("BEGIN IMMEDIATE");
    try {
      const started = performance.now();
      const out = (await send(first)) as unknown as Out;
      const took = performance.now() - started;
      expect(out.init.status).toBe(503);
      expect(out.init.headers["Retry-After"]).toBe("1");
      expect(out.data).toMatchObject({ ok: false, status: 503, retryAfter: 1 });
      expect(String(out.data.message)).toMatch(/draft is kept in this page/);
      expect(took).toBeLessThan(500);
      expect(db.select().from(annotations).all()).toHaveLength(0);
    } finally {
      holder.exec("COMMIT");
      holder.close();
    }
    const out = (await send(second)) as unknown as Out;
    expect(out.init.status).toBe(200);
    expect(out.data).toMatchObject({ ok: true, version: 1 });
    expect(out.init.headers["X-Concord-Version"]).toBe("1");
    expect(db.select().from(annotations).get()!.notes).toBe("kept in the page");
  });
});

const F32: LabelInput = {
  sufficiency: "sufficient",
  icd10: "F32.2",
  earliestSection: 2,
  missingInfo: [],
  missingOther: "",
};

describe("reopening carries the version it was read at", () => {
  it("refuses a reopen from a page read before the outcome last changed, and changes nothing", () => {
    db.update(studies).set({ adjudicationMode: "reveal_only" }).where(eq(studies.id, studyId)).run();
    const caseId = caseIds[1]!;
    submitPair(
      db,
      caseId,
      { userId: alice.id, values: sufficient("F32.1", 2) },
      { userId: bruno.id, values: sufficient("F31.1", 3) },
    );
    const judyId = db.$client.prepare("SELECT id FROM users WHERE username = 'judy'").pluck().get() as string;
    const bossId = db.$client.prepare("SELECT id FROM users WHERE username = 'boss'").pluck().get() as string;
    const outcome = () => db.select().from(caseOutcomes).where(eq(caseOutcomes.caseId, caseId)).get()!;
    const seen = getAdjudicationCase(db, { userId: judyId, caseId })!;
    expect(
      decide(db, { userId: judyId, caseId, label: F32, rationale: "first", outcomeVersion: seen.outcomeVersion }).ok,
    ).toBe(true);
    // A stale admin tab read the outcome before the decision.
    expect(
      reopenDecision(db, { adminId: bossId, caseId, reason: "stale tab", outcomeVersion: seen.outcomeVersion }),
    ).toEqual({
      ok: false,
      status: 409,
      message: REOPEN_STALE,
    });
    expect(outcome().status).toBe("adjudicated");
    // Read fresh, it reopens; the first tab, read at the decided version, cannot reopen the next decision.
    const decided = outcome().version;
    expect(reopenDecision(db, { adminId: bossId, caseId, reason: "wrong code", outcomeVersion: decided })).toEqual({
      ok: true,
    });
    const again = getAdjudicationCase(db, { userId: judyId, caseId })!;
    expect(
      decide(db, { userId: judyId, caseId, label: F32, rationale: "second", outcomeVersion: again.outcomeVersion }).ok,
    ).toBe(true);
    expect(reopenDecision(db, { adminId: bossId, caseId, reason: "old page", outcomeVersion: decided })).toMatchObject({
      ok: false,
      status: 409,
    });
    expect(outcome().status).toBe("adjudicated");
  });
});
