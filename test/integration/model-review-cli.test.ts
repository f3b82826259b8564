/**
 * The clinician review from the command line and changing a review's reviewers (docs/evaluation.md, "Clinician
 * review of model steps", "Changing the reviewers"): `eval-review-send` calls the page's service (same refusals,
 * exit 2, nothing written), `eval-review-report` prints the page's figures, and adding or removing a reviewer moves
 * only steps not yet started; a removed reviewer's labels are kept but their keys answer nothing.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { listReviewerItems, listReviews, resolveReviewKey } from "../../app/evaluation/model-review.server";
import { freshDb, makeUser } from "../support/db";
import { signedIn } from "../support/route-calls";
import {
  action as reviewsAction,
  loader as reviewsLoader,
} from "../../app/routes/admin.evaluations.$evaluationId.reviews";
import { goldCases, writeEvalRuns } from "../support/eval-runs";
import { cli, tempDirs } from "../support/cli-run";

const tempDir = tempDirs("concord-reviewcli-");
let db: Db;
let cleanup: () => void;
let evaluationId: number;

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  await makeUser(db, "psy1", ["annotator"]);
  await makeUser(db, "psy2", ["adjudicator"]);
  await makeUser(db, "psy3", ["annotator"]);
  await makeUser(db, "rat", ["rater"]);
  await makeUser(db, "admin", ["admin"]);
  const root = tempDir();
  const spec = { cases: 12, models: ["zeta-model-9b"], strategies: ["sequential_info_neutral_prompting"], seeds: [11] };
  const { goldPath, runsDir } = writeEvalRuns(root, spec);
  const kinds = [
    "presenting_symptoms",
    "psychiatric_history",
    "psychiatric_exam",
    "psychological_exam",
    "secondary_diagnoses",
  ];
  const notes = goldCases(spec).map((g) =>
    JSON.stringify({ id: g.id, sections: Object.fromEntries(kinds.slice(0, g.T).map((k, i) => [k, `S${i} ${g.id}`])) }),
  );
  writeFileSync(join(root, "cases.jsonl"), notes.join("\n") + "\n");
  expect((await cli(["import", "--study", "Notes", join(root, "cases.jsonl")])).code).toBe(0);
  const studyId = db.$client.prepare("select id from studies where name = 'Notes'").pluck().get() as number;
  const imported = await cli([
    "eval-import",
    "--evaluation",
    "E1",
    "--gold",
    goldPath,
    "--study",
    String(studyId),
    "--runs",
    runsDir,
  ]);
  expect(imported.code, imported.err).toBe(0);
  evaluationId = db.$client.prepare("select id from evaluations where name = 'E1'").pluck().get() as number;
});
afterEach(() => cleanup());

const userId = (name: string) =>
  db.$client.prepare("select id from users where username = ?").pluck().get(name) as string;
const counts = () =>
  db.$client
    .prepare("select (select count(*) from evaluation_reviews) + (select count(*) from evaluation_review_labels)")
    .pluck()
    .get();
const openOf = (name: string) =>
  db.$client
    .prepare(
      "select count(*) from evaluation_review_labels where reviewer_id = ? and status = 'not_started' and removed_at is null",
    )
    .pluck()
    .get(userId(name)) as number;

describe("eval-review-send", () => {
  it("sends through the page's service and refuses bad input with exit 2 and nothing written", async () => {
    const bad = [
      [["--evaluation", "E1", "--name", "R", "--reviewers", "psy1", "--per-step", "3"], "--per-step takes 1 or 2"],
      [["--evaluation", "E1", "--name", "R", "--reviewers", "psy1", "--failure", "nope"], "--failure takes one of"],
      [["--evaluation", "E1", "--name", "R", "--reviewers", "psy1", "--sample", "x"], "--sample takes a whole number"],
      [["--evaluation", "Nope", "--name", "R", "--reviewers", "psy1"], 'no evaluation named "Nope"'],
      [["--evaluation", "E1", "--name", "R", "--reviewers", "psy1,rat"], "neither the annotator nor the adjudicator"],
      [["--evaluation", "E1", "--name", "R", "--reviewers", "psy1", "--per-step", "2"], "at least two reviewers"],
      [["--evaluation", "E1", "--name", "R", "--reviewers", "ghost"], 'No user named "ghost"'],
      [["--evaluation", "E1", "--name", "R", "--reviewers", "psy1", "--model", "none"], "picks no model step"],
      [["--evaluation", "E1", "--reviewers", "psy1"], "--name is required"],
    ] as const;
    for (const [argv, message] of bad) {
      const r = await cli(["eval-review-send", ...argv]);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.err).toContain(message);
      expect(r.err).not.toMatch(/\n\s+at /);
    }
    expect(counts()).toBe(0);
    const ok = await cli([
      "eval-review-send",
      "--evaluation",
      "E1",
      "--name",
      "R",
      "--reviewers",
      "psy1,psy2",
      "--per-step",
      "2",
      "--sample",
      "5",
      "--seed",
      "7",
    ]);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toContain('Sent 5 model steps (of 11 the filter picks) to the review "R"');
    expect(listReviewerItems(db, userId("psy1"))).toHaveLength(5);
    const again = await cli(["eval-review-send", "--evaluation", "E1", "--name", "R", "--reviewers", "psy1"]);
    expect(again.code).toBe(2);
    expect(again.err).toContain('already has a review named "R"');
  });
});

describe("eval-review-report", () => {
  it("prints the page's figures, as text, JSON and a CSV file", async () => {
    expect(
      (
        await cli([
          "eval-review-send",
          "--evaluation",
          "E1",
          "--name",
          "R",
          "--reviewers",
          "psy1,psy2",
          "--per-step",
          "2",
          "--seed",
          "3",
        ])
      ).code,
    ).toBe(0);
    // Both reviewers submit: psy1 says yes everywhere, psy2 yes on all but the first item.
    const first = db.$client.prepare("select min(id) from evaluation_review_items").pluck().get() as number;
    db.$client.prepare("update evaluation_review_labels set status = 'submitted', defensible = 'yes'").run();
    db.$client
      .prepare("update evaluation_review_labels set defensible = 'no' where item_id = ? and reviewer_id = ?")
      .run(first, userId("psy2"));
    const page = listReviews(db, evaluationId)[0]!;
    const json = await cli(["eval-review-report", "--evaluation", "E1", "--json"]);
    expect(json.code, json.err).toBe(0);
    expect(JSON.parse(json.out)).toEqual(JSON.parse(JSON.stringify([page])));
    expect(page.agreement.items).toBe(11);
    const text = await cli(["eval-review-report", "--evaluation", "E1", "--review", "R"]);
    expect(text.out).toContain("psy1: 11 of 11 submitted");
    expect(text.out).toContain("Any step sent | all models | 11 | 10 of 11 (90.9%) | 1");
    expect(text.out).toContain("Agreement on 11 steps reviewed twice: 90.9% agree");
    const out = join(tempDir(), "reviews.csv");
    expect((await cli(["eval-review-report", "--evaluation", "E1", "--csv", out])).code).toBe(0);
    expect(readFileSync(out, "utf8")).toContain("R,any,all,11,10,1,0.9091");
    const none = await cli(["eval-review-report", "--evaluation", "E1", "--review", "Other"]);
    expect(none.code).toBe(2);
    expect(none.err).toContain('no review named "Other"');
  });
});

describe("changing the reviewers", () => {
  it("an added reviewer takes a share of the steps not started; drafts and submitted labels stay", async () => {
    expect(
      (await cli(["eval-review-send", "--evaluation", "E1", "--name", "R", "--reviewers", "psy1", "--seed", "1"])).code,
    ).toBe(0);
    const mine = listReviewerItems(db, userId("psy1"));
    db.$client
      .prepare("update evaluation_review_labels set status = 'submitted', defensible = 'yes' where item_key = ?")
      .run(mine[0]!.key);
    db.$client
      .prepare("update evaluation_review_labels set status = 'draft', version = 1 where item_key = ?")
      .run(mine[1]!.key);
    const r = await cli(["eval-review-send", "--evaluation", "E1", "--name", "R", "--add", "psy2"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain("reviewers now psy1, psy2");
    // 11 steps (one trajectory excluded): 9 not started, shared 5 and 4; the submitted and the draft stay with psy1.
    expect(openOf("psy1")).toBe(5);
    expect(openOf("psy2")).toBe(4);
    expect(resolveReviewKey(db, userId("psy1"), mine[0]!.key)).not.toBeNull();
    expect(resolveReviewKey(db, userId("psy1"), mine[1]!.key)).not.toBeNull();
    // A moved label has a new key: the old one no longer answers for anyone.
    const moved = mine.filter((m) => resolveReviewKey(db, userId("psy1"), m.key) === null);
    expect(moved).toHaveLength(4);
    for (const m of moved) expect(resolveReviewKey(db, userId("psy2"), m.key)).toBeNull();
  });

  it("a removed reviewer's labels are kept but out of reach; their unfinished steps go to the others", async () => {
    expect(
      (
        await cli([
          "eval-review-send",
          "--evaluation",
          "E1",
          "--name",
          "R",
          "--reviewers",
          "psy1,psy2,psy3",
          "--per-step",
          "2",
          "--seed",
          "2",
        ])
      ).code,
    ).toBe(0);
    const gone = listReviewerItems(db, userId("psy3"));
    db.$client
      .prepare("update evaluation_review_labels set status = 'submitted', defensible = 'no' where item_key = ?")
      .run(gone[0]!.key);
    const refused = await cli(["eval-review-send", "--evaluation", "E1", "--name", "R", "--remove", "psy3,psy2"]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain("keeps at least two");
    const r = await cli(["eval-review-send", "--evaluation", "E1", "--name", "R", "--remove", "psy3"]);
    expect(r.code, r.err).toBe(0);
    for (const g of gone) expect(resolveReviewKey(db, userId("psy3"), g.key)).toBeNull();
    expect(listReviewerItems(db, userId("psy3"))).toEqual([]);
    // Every step still has two labels, psy3's kept.
    // (the step psy3 submitted keeps that label as one of its two).
    expect(listReviewerItems(db, userId("psy1")).length + listReviewerItems(db, userId("psy2")).length).toBe(21);
    expect(
      db.$client.prepare("select count(*) from evaluation_review_labels where removed_at is not null").pluck().get(),
    ).toBe(gone.length);
    // The kept submitted label still counts in the figures.
    const review = listReviews(db, evaluationId)[0]!;
    expect(review.reviewers.find((p) => p.username === "psy3")).toEqual({
      username: "psy3",
      submitted: 1,
      total: 1,
      active: false,
    });
    const again = await cli(["eval-review-send", "--evaluation", "E1", "--name", "R", "--remove", "psy3"]);
    expect(again.code).toBe(2);
    expect(again.err).toContain('"psy3" is not a reviewer of this review');
  });
});

describe("changing the reviewers on the reviews page", () => {
  async function change(username: string, fields: [string, string][]) {
    const who = await signedIn(db, username);
    const path = `/admin/evaluations/${evaluationId}/reviews`;
    const body = new URLSearchParams([...fields, ["csrf", who.user.csrf]]);
    const request = new Request("http://concord.test" + path, {
      method: "POST",
      headers: who.post(path, {}).headers,
      body,
    });
    try {
      return await reviewsAction({ request, params: { evaluationId: String(evaluationId) }, context: {} });
    } catch (e) {
      if (e instanceof Response) return e.status;
      throw e;
    }
  }

  it("adds and removes through the same service, admins only, and shows who was removed", async () => {
    expect(
      (await cli(["eval-review-send", "--evaluation", "E1", "--name", "R", "--reviewers", "psy1", "--seed", "4"])).code,
    ).toBe(0);
    expect(
      await change("psy1", [
        ["intent", "reviewers"],
        ["review", "R"],
        ["add", "psy2"],
      ]),
    ).toBe(403);
    const added = await change("admin", [
      ["intent", "reviewers"],
      ["review", "R"],
      ["add", "psy2"],
      ["add", "psy3"],
    ]);
    expect(added).toMatchObject({ changed: { review: "R", reviewers: ["psy1", "psy2", "psy3"] } });
    expect([openOf("psy1"), openOf("psy2"), openOf("psy3")].sort()).toEqual([3, 4, 4]);
    const refused = await change("admin", [
      ["intent", "reviewers"],
      ["review", "R"],
      ["add", "psy2"],
    ]);
    expect(refused).toMatchObject({ error: '"psy2" already reviews this review.', review: "R" });
    const psy2Key = listReviewerItems(db, userId("psy2"))[0]!.key;
    db.$client
      .prepare("update evaluation_review_labels set status = 'submitted', defensible = 'yes' where item_key = ?")
      .run(psy2Key);
    expect(
      await change("admin", [
        ["intent", "reviewers"],
        ["review", "R"],
        ["remove", "psy2"],
      ]),
    ).toMatchObject({
      changed: { reviewers: ["psy1", "psy3"] },
    });
    expect(resolveReviewKey(db, userId("psy2"), psy2Key)).toBeNull();
    const who = await signedIn(db, "admin");
    const path = `/admin/evaluations/${evaluationId}/reviews`;
    const data = await reviewsLoader({
      request: new Request("http://concord.test" + path, { headers: who.post(path, {}).headers }),
      params: { evaluationId: String(evaluationId) },
      context: {},
    });
    expect(data.reviews[0]!.reviewers).toContainEqual({ username: "psy2", submitted: 1, total: 1, active: false });
    expect(openOf("psy1") + openOf("psy3")).toBe(11 - 1);
  });
});

describe("the demo's evaluation and review", () => {
  it("seeds a demo evaluation with runs and a review sent to the three demo annotators, two per step", async () => {
    const { seedDemo, DEMO_EVALUATION } = await import("../../app/demo/demo.server");
    const demo = freshDb();
    try {
      expect(await seedDemo(demo.db)).toBe(true);
      const id = demo.db.$client.prepare("select id from evaluations where name = ?").pluck().get(DEMO_EVALUATION);
      const [review] = listReviews(demo.db, id as number);
      expect(review!.perItem).toBe(2);
      expect(review!.reviewers.map((r) => r.username)).toEqual(["annotator1", "annotator2", "annotator3"]);
      expect(review!.items).toBeGreaterThan(5);
      const a1 = demo.db.$client.prepare("select id from users where username = 'annotator1'").pluck().get() as string;
      expect(listReviewerItems(demo.db, a1).length).toBeGreaterThan(0);
    } finally {
      demo.cleanup();
    }
  });
});
