/**
 * Time on task of adjudication (docs/statistics.md, "Time on task"): the active time the adjudication page sends with
 * its drafts, its independent judgement and its decision is added to one `work_time` row per (case, adjudicator), a
 * refused step adds nothing, and the study's summary reports the medians of the decided cases per adjudicator.
 *
 * Expected numbers by hand: judy's decided cases carry 30 000 + 10 000 + 20 000 + 15 000 = 75 000 ms (case 0),
 * 40 000 + 20 000 = 60 000 ms (case 1) and 10 000 + 20 000 = 30 000 ms (case 2); sorted 30 000, 60 000, 75 000, so
 * the median is 60 000 and the total 165 000. Kim's 5 000 ms on case 2 is a judgement superseded by judy's decision:
 * not a decision, not counted.
 */
import { and, eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { workTime } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { action as adjudicateAction } from "../../app/routes/adjudicate.$caseId";
import { getAdjudicationCase, type LabelInput } from "../../app/adjudication/adjudication.server";
import { getTimeOnTask } from "../../app/study-report/time-on-task.server";
import { formatTimeOnTaskMarkdown, formatTimeOnTaskText } from "../../app/study-report/domain/time-on-task";
import type { UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";
import { studyForPair, submitPair, sufficient } from "../support/labels";
import { bodyOf, signedIn } from "../support/route-calls";

let db: Db;
let cleanup: () => void;
let judy: UserView;
let kim: UserView;
let caseIds: number[];
let studyId: number;

const F32: LabelInput = {
  sufficiency: "sufficient",
  icd10: "F32.2",
  earliestSection: 2,
  missingInfo: [],
  missingOther: "",
};
const DRAFT = { ...F32, rationale: "" };

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  const [alice, bruno] = await Promise.all([
    makeUser(db, "alice", ["annotator"]),
    makeUser(db, "bruno", ["annotator"]),
  ]);
  [judy, kim] = await Promise.all([makeUser(db, "judy", ["adjudicator"]), makeUser(db, "kim", ["adjudicator"])]);
  const s = studyForPair(db, { name: "Timed adjudication", cases: 3, annotatorIds: [alice.id, bruno.id] });
  caseIds = s.caseIds;
  studyId = s.study.id;
  // Every case disputed on the diagnosis (two-phase adjudication, the study's default).
  for (const c of caseIds)
    submitPair(
      db,
      c,
      { userId: alice.id, values: sufficient("F32.1", 2) },
      { userId: bruno.id, values: sufficient("F31.1", 3) },
    );
});
afterEach(() => cleanup());

/** Posts one form of the adjudication page as `username`; the status the action answered. */
async function postAs(username: string, caseId: number, fields: Record<string, string>) {
  const { post } = await signedIn(db, username);
  const out = await adjudicateAction({
    request: post(`/adjudicate/${caseId}`, fields),
    params: { caseId: String(caseId) },
    context: {},
  } as never).catch((e: unknown) => e);
  return bodyOf(out);
}

const draft = (version: number, activeMs: number) => ({
  intent: "draft",
  version: String(version),
  values: JSON.stringify(DRAFT),
  activeMs: String(activeMs),
});
const step = (name: "independent" | "decide", caseId: number, userId: string, activeMs: number) => ({
  intent: "submit",
  step: name,
  version: "0",
  values: JSON.stringify(DRAFT),
  outcomeVersion: String(getAdjudicationCase(db, { userId, caseId })?.outcomeVersion ?? 0),
  activeMs: String(activeMs),
});

function timeOf(caseId: number, userId: string) {
  return db
    .select()
    .from(workTime)
    .where(and(eq(workTime.entity, "adjudication"), eq(workTime.itemId, caseId), eq(workTime.userId, userId)))
    .get();
}

describe("the adjudication page's active time", () => {
  it("drafts, the independent judgement and the decision add up on one row of the case and adjudicator", async () => {
    const c = caseIds[0]!;
    expect((await postAs("judy", c, draft(0, 30_000))).status).toBe(200);
    expect((await postAs("judy", c, draft(1, 10_000))).status).toBe(200);
    // Recording and deciding answer 200 with where the page goes next.
    expect((await postAs("judy", c, step("independent", c, judy.id, 20_000))).status).toBe(200);
    expect((await postAs("judy", c, step("decide", c, judy.id, 15_000))).status).toBe(200);
    expect(timeOf(c, judy.id)).toMatchObject({ activeMs: 75_000, saves: 4 });
  });

  it("a refused step adds nothing", async () => {
    const c = caseIds[0]!;
    // Deciding before the independent judgement is refused in two-phase mode (409).
    expect((await postAs("judy", c, step("decide", c, judy.id, 99_000))).status).toBe(409);
    // A stale draft version is refused too.
    expect((await postAs("judy", c, draft(5, 99_000))).status).toBe(409);
    expect(timeOf(c, judy.id)).toBeUndefined();
  });

  it("the study's summary has the medians of the decided cases per adjudicator", async () => {
    const [c0, c1, c2] = caseIds as [number, number, number];
    await postAs("judy", c0, draft(0, 30_000));
    await postAs("judy", c0, draft(1, 10_000));
    await postAs("judy", c0, step("independent", c0, judy.id, 20_000));
    await postAs("judy", c0, step("decide", c0, judy.id, 15_000));
    await postAs("judy", c1, step("independent", c1, judy.id, 40_000));
    await postAs("judy", c1, step("decide", c1, judy.id, 20_000));
    await postAs("kim", c2, step("independent", c2, kim.id, 5_000));
    await postAs("judy", c2, step("independent", c2, judy.id, 10_000));
    await postAs("judy", c2, step("decide", c2, judy.id, 20_000));
    expect(timeOf(c2, kim.id)?.activeMs).toBe(5_000);

    const t = getTimeOnTask(db, studyId);
    expect(t.adjudication).toEqual({
      n: 3,
      median_ms: 60_000,
      total_ms: 165_000,
      per_adjudicator: [{ adjudicator: "judy", n: 3, median_ms: 60_000, total_ms: 165_000 }],
    });
    expect(formatTimeOnTaskText(t)).toContain("3 decisions, median 1 min 00 s, total 2 min 45 s");
    expect(formatTimeOnTaskMarkdown(t)).toContain("| judy | 3 | 1 min 00 s | 2 min 45 s |");
  });
});
