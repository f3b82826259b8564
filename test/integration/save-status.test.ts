/**
 * What a refused or failed save answers over HTTP (docs/security.md, "Honest answers"): an adjudication refused
 * because someone else decided first is a real 409, not a 200 carrying `status: 409`; a save the server cannot
 * write because its disk is full answers 507 with a message that says so and that the draft is still in the page.
 */
import Database from "better-sqlite3";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { studies } from "../../db/schema";
import { setDb, type Db } from "../../app/platform/db.server";
import { action as adjudicateAction } from "../../app/routes/adjudicate.$caseId";
import { action as annotateAction } from "../../app/routes/annotate.$caseId";
import { decide, getAdjudicationCase, type LabelInput } from "../../app/adjudication/adjudication.server";
import type { UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";
import { bodyOf, signedIn } from "../support/route-calls";
import { studyForPair, submitPair, sufficient } from "../support/labels";

let db: Db;
let cleanup: () => void;
let alice: UserView;
let bruno: UserView;
let caseIds: number[];
let studyId: number;

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  [alice, bruno] = await Promise.all([makeUser(db, "alice", ["annotator"]), makeUser(db, "bruno", ["annotator"])]);
  await Promise.all([makeUser(db, "judy", ["adjudicator"]), makeUser(db, "kim", ["adjudicator"])]);
  const s = studyForPair(db, { name: "Status", cases: 3, annotatorIds: [alice.id, bruno.id] });
  caseIds = s.caseIds;
  studyId = s.study.id;
});
afterEach(() => {
  setDb(db);
  cleanup();
});

const as = (username: string) => signedIn(db, username);

const F32: LabelInput = {
  sufficiency: "sufficient",
  icd10: "F32.2",
  earliestSection: 2,
  missingInfo: [],
  missingOther: "",
};

describe("adjudication refusals carry their real status", () => {
  it("a second decision on a case answers 409", async () => {
    db.update(studies).set({ adjudicationMode: "reveal_only" }).where(eq(studies.id, studyId)).run();
    submitPair(
      db,
      caseIds[0]!,
      { userId: alice.id, values: sufficient("F32.1", 2) },
      { userId: bruno.id, values: sufficient("F31.1", 3) },
    );
    const judy = await as("judy");
    const kim = await as("kim");
    const seen = getAdjudicationCase(db, { userId: judy.user.id, caseId: caseIds[0]! })!;
    expect(
      decide(db, {
        userId: kim.user.id,
        caseId: caseIds[0]!,
        label: F32,
        rationale: "Reviewed the history.",
        outcomeVersion: seen.outcomeVersion,
      }).ok,
    ).toBe(true);
    const out = await adjudicateAction({
      request: judy.post(`/adjudicate/${caseIds[0]}`, {
        intent: "submit",
        step: "decide",
        version: "0",
        values: JSON.stringify({ ...F32, rationale: "Reviewed the history." }),
        outcomeVersion: String(seen.outcomeVersion),
      }),
      params: { caseId: String(caseIds[0]) },
      context: {},
    } as never).catch((e) => e);
    const { status, body } = await bodyOf(out);
    expect(status).toBe(409);
    expect(body).toMatchObject({ ok: false, status: 409 });
  });

  it("a malformed adjudication post answers 422", async () => {
    submitPair(
      db,
      caseIds[1]!,
      { userId: alice.id, values: sufficient("F32.1", 2) },
      { userId: bruno.id, values: sufficient("F31.1", 3) },
    );
    const judy = await as("judy");
    const out = await adjudicateAction({
      request: judy.post(`/adjudicate/${caseIds[1]}`, {
        intent: "submit",
        step: "decide",
        version: "0",
        values: "{not json",
        outcomeVersion: "0",
      }),
      params: { caseId: String(caseIds[1]) },
      context: {},
    } as never).catch((e) => e);
    expect((await bodyOf(out)).status).toBe(422);
  });
});

describe("a full disk", () => {
  it("a draft save answers 507 saying the server is out of space and the draft is kept in the page", async () => {
    const { post } = await as("alice");
    // The database as it behaves when the disk is full: every write transaction fails with SQLITE_FULL.
    const full = new Proxy(db, {
      get(target, key, receiver) {
        if (key === "transaction")
          return () => {
            throw new Database.SqliteError("database or disk is full", "SQLITE_FULL");
          };
        return Reflect.get(target, key, receiver);
      },
    });
    setDb(full);
    const out = await annotateAction({
      request: post(`/annotate/${caseIds[2]}`, {
        intent: "draft",
        version: "0",
        values: JSON.stringify(sufficient("F32.1", 2)),
      }),
      params: { caseId: String(caseIds[2]) },
      context: {},
    } as never).catch((e) => e);
    const { status, body } = await bodyOf(out);
    expect(status).toBe(507);
    expect(body).toMatchObject({ ok: false, status: 507 });
    expect(String(body.message)).toMatch(/out of (disk )?space/i);
    expect(String(body.message)).toMatch(/kept in (this|the) page/i);
  });
});
