/**
 * The demo (app/demo/demo.server.ts): on a fresh database every demo rater finds work on each of the raters'
 * pages — judge validation (/judge-validation), screening review (/screening) and expert ratings (/expert-ratings), through the same
 * service functions those loaders call — and on a database that already holds work, seedDemo does nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { judgeRatings, users } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { DEMO_ACCOUNTS, isDemoDatabase, seedDemo } from "../../app/demo/demo.server";
import { listRaterItems as listJudgeItems } from "../../app/judge-validation/judge-ratings.server";
import { listReviewerEntries } from "../../app/screening/screening-review.server";
import { listRaterQuestions } from "../../app/mentat/ratings.server";
import { listRaterItems as listCaseItems } from "../../app/case-review/case-review.server";
import { setReport } from "../../app/judge-validation/judge-candidates.server";
import { getJudgeSetByName } from "../../app/judge-validation/judge-sets.server";
import { DEMO_JUDGE_SET } from "../../app/demo/demo.server";
import { freshDb, makeUser } from "../support/db";

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

const RATERS = DEMO_ACCOUNTS.filter((a) => a.roles.includes("rater")).map((a) => a.username);

function userId(username: string): string {
  return db.select({ id: users.id }).from(users).where(eq(users.username, username)).get()!.id;
}

describe("the demo for raters", () => {
  it("gives every demo rater judge validation, screening review and expert ratings to do", async () => {
    const started = Date.now();
    expect(await seedDemo(db)).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(RATERS).toEqual(["rater1", "rater2", "rater3"]);
    for (const username of RATERS) {
      const id = userId(username);
      const judge = listJudgeItems(db, id);
      expect(judge.length, `${username} on /judge-validation`).toBeGreaterThan(0);
      expect(judge.every((r) => r.open)).toBe(true);
      expect(listReviewerEntries(db, id).length, `${username} on /screening`).toBeGreaterThan(0);
      expect(listRaterQuestions(db, id).length, `${username} on /expert-ratings (questions)`).toBeGreaterThan(0);
      expect(listCaseItems(db, id).length, `${username} on /expert-ratings (cases)`).toBeGreaterThan(0);
    }
    // The same sample for all three, with a few responses already labelled by rater2 and rater3.
    const [one, two, three] = RATERS.map((u) => listJudgeItems(db, userId(u)));
    expect(two!.map((r) => r.itemId)).toEqual(one!.map((r) => r.itemId));
    expect(one!.filter((r) => r.state === "submitted")).toHaveLength(0);
    expect(two!.filter((r) => r.state === "submitted")).toHaveLength(2);
    expect(three!.filter((r) => r.state === "submitted")).toHaveLength(1);
    expect(db.select().from(judgeRatings).where(eq(judgeRatings.status, "submitted")).all()).toHaveLength(3);
    const set = getJudgeSetByName(db, DEMO_JUDGE_SET)!;
    expect(set.status).toBe("rating");
    expect(setReport(db, set.id)).toBeTruthy();
    // The expert bank shows its triage and documentation questions; the review set its cases and seed.
    expect(listRaterQuestions(db, userId("rater1")).map((q) => q.domain)).toEqual([
      "triage",
      "triage",
      "documentation",
      "documentation",
    ]);
    expect(listCaseItems(db, userId("rater1")).map((i) => i.kind)).toEqual([
      "seed",
      "case",
      "case",
      "case",
      "case",
      "case",
    ]);
  });

  it("is the same demo every time", async () => {
    await seedDemo(db);
    const first = listJudgeItems(db, userId("rater1")).map((r) => r.annotationId);
    const firstReview = listReviewerEntries(db, userId("rater1")).length;
    cleanup();
    ({ db, cleanup } = freshDb());
    await seedDemo(db);
    expect(listJudgeItems(db, userId("rater1")).map((r) => r.annotationId)).toEqual(first);
    expect(listReviewerEntries(db, userId("rater1")).length).toBe(firstReview);
  });

  it("does nothing on a database that is not fresh", async () => {
    const someone = await makeUser(db, "someone", ["rater"]);
    expect(await seedDemo(db)).toBe(false);
    expect(isDemoDatabase(db)).toBe(false);
    expect(
      db
        .select()
        .from(users)
        .all()
        .map((u) => u.username),
    ).toEqual(["someone"]);
    expect(listJudgeItems(db, someone.id)).toEqual([]);
    expect(listReviewerEntries(db, someone.id)).toEqual([]);
    expect(listRaterQuestions(db, someone.id)).toEqual([]);
    expect(listCaseItems(db, someone.id)).toEqual([]);
  });

  it("does nothing when run a second time", async () => {
    expect(await seedDemo(db)).toBe(true);
    const counts = () =>
      ["users", "judge_sets", "judge_ratings", "screening_studies", "mentat_banks", "review_sets"].map(
        (t) => (db.$client.prepare(`select count(*) as n from ${t}`).get() as { n: number }).n,
      );
    const before = counts();
    expect(await seedDemo(db)).toBe(false);
    expect(counts()).toEqual(before);
  });
});
