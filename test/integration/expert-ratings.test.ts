/**
 * Expert ratings on a real temporary SQLite database (docs/mentat.md): question-bank import (all or nothing, updates,
 * rated questions frozen), the panel, the expert's blinded view, option ratings (drafts, submission, revision,
 * optimistic concurrency, audit, the recorded option order), variant sets, the label fit and the JSONL export;
 * review sets, reviews and the report.
 */
import { readFileSync } from "node:fs";
import { and, eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { events, mentatRatings } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import {
  getRaterItem,
  getReviewReport,
  importReviewSet,
  addReviewRaters,
  listRaterItems,
  saveReview,
  type ReviewValues,
} from "../../app/case-review/case-review.server";
import { addBankRaters, listBankPanel } from "../../app/mentat/panel.server";
import { expandBank, listDatasets } from "../../app/mentat/questions.server";
import { exportDataset } from "../../app/mentat/export.server";
import { getLatestFit, runBankFit } from "../../app/mentat/fits.server";
import { getRaterQuestion, listRaterQuestions, saveOptionRating } from "../../app/mentat/ratings.server";
import { importQuestionBank } from "../../app/mentat/banks.server";
import type { UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";

const BANK = readFileSync(new URL("../fixtures/expert-ratings/questions.csv", import.meta.url), "utf8");
const CASES = readFileSync(new URL("../fixtures/expert-ratings/cases.csv", import.meta.url), "utf8");

let db: Db;
let cleanup: () => void;
let boss: UserView;
let ann: UserView;
let ben: UserView;
let cat: UserView;

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  boss = await makeUser(db, "boss", ["admin"]);
  ann = await makeUser(db, "ann", ["rater"]);
  ben = await makeUser(db, "ben", ["rater"]);
  cat = await makeUser(db, "cat", ["rater", "annotator"]);
});
afterEach(() => cleanup());

function importBank() {
  const r = importQuestionBank(db, { bankName: "Mentat pilot", text: BANK, actorId: boss.id, seed: 5 });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return r.ok ? r.bankId! : 0;
}

function eventsOf(entity: string) {
  return db.select().from(events).where(eq(events.entity, entity)).all();
}

describe("question-bank import", () => {
  it("creates the bank and its questions, then recognises an unchanged re-import", () => {
    const r = importQuestionBank(db, { bankName: "Mentat pilot", text: BANK, actorId: boss.id });
    expect(r).toMatchObject({ ok: true, createdBank: true, created: 6, updated: 0, unchanged: 0, written: true });
    const again = importQuestionBank(db, { bankName: "Mentat pilot", text: BANK, actorId: boss.id });
    expect(again).toMatchObject({ ok: true, createdBank: false, created: 0, updated: 0, unchanged: 6 });
    expect(eventsOf("mentat_question")).toHaveLength(6);
  });

  it("writes nothing when any line is wrong, and a dry run writes nothing either", () => {
    const bad = BANK.replace("x02,Monitor", "x02,Surgery");
    const r = importQuestionBank(db, { bankName: "Mentat pilot", text: bad, actorId: boss.id });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.errors).toEqual([
        {
          line: 7,
          message: 'the domain "Surgery" is not one of diagnosis, treatment, monitoring, triage, documentation.',
        },
      ]);
    const dry = importQuestionBank(db, { bankName: "Mentat pilot", text: BANK, actorId: boss.id, dryRun: true });
    expect(dry).toMatchObject({ ok: true, written: false, created: 6 });
    expect(db.$client.prepare("select count(*) as n from mentat_questions").get()).toEqual({ n: 0 });
    expect(db.$client.prepare("select count(*) as n from mentat_banks").get()).toEqual({ n: 0 });
  });

  it("refuses to change a question that has ratings, but updates an unrated one", async () => {
    const bankId = importBank();
    addBankRaters(db, { bankId, raterIds: [ann.id], actorId: boss.id });
    const t01 = listRaterQuestions(db, ann.id).find((q) => q.externalId === "t01")!;
    expect(
      saveOptionRating(db, {
        userId: ann.id,
        questionId: t01.questionId,
        values: { scores: [50, null, null, null, null], comment: "" },
        version: 0,
        intent: "draft",
      }).ok,
    ).toBe(true);
    const changed = BANK.replace("Same-day urgent evaluation", "Same-day urgent review").replace(
      "PHQ-9",
      "PHQ-9 questionnaire",
    );
    const r = importQuestionBank(db, { bankName: "Mentat pilot", text: changed, actorId: boss.id });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.errors).toEqual([{ line: 2, message: expect.stringMatching(/question "t01" already has ratings/) }]);
    const unrated = importQuestionBank(db, {
      bankName: "Mentat pilot",
      text: BANK.replace("PHQ-9", "PHQ-9 questionnaire"),
      actorId: boss.id,
    });
    expect(unrated).toMatchObject({ ok: true, updated: 1, unchanged: 5 });
  });
});

describe("option ratings", () => {
  it("lists only the preference-domain questions of the expert's banks", () => {
    const bankId = importBank();
    expect(listRaterQuestions(db, ann.id)).toEqual([]);
    addBankRaters(db, { bankId, raterIds: [ann.id, ben.id], actorId: boss.id });
    expect(listRaterQuestions(db, ann.id).map((q) => q.externalId)).toEqual(["t01", "t02", "d01", "d02"]);
    expect(() => addBankRaters(db, { bankId, raterIds: [boss.id], actorId: boss.id })).toThrow(/rater role/);
    expect(
      listBankPanel(db, bankId)
        .filter((p) => p.onPanel)
        .map((p) => p.username),
    ).toEqual(["ann", "ben"]);
  });

  it("shows the expert the options in their own seeded order, blinded, and finds nothing for a non-member", () => {
    const bankId = importBank();
    addBankRaters(db, { bankId, raterIds: [ann.id, ben.id], actorId: boss.id });
    const q = listRaterQuestions(db, ann.id)[1]!; // t02: gendered texts
    expect(getRaterQuestion(db, { userId: cat.id, questionId: q.questionId })).toBeNull();
    const x01 = db.$client.prepare("select id from mentat_questions where external_id = 'x01'").get() as { id: number };
    expect(getRaterQuestion(db, { userId: ann.id, questionId: x01.id })).toBeNull(); // diagnosis: not rated by experts
    const view = getRaterQuestion(db, { userId: ann.id, questionId: q.questionId })!;
    expect([...view.question.options].sort()).toEqual(
      [
        "Increase the antipsychotic dose and review in a week",
        "Emergency evaluation and consider involuntary admission",
        "Add a benzodiazepine",
        "Refer to psychotherapy",
        "Document and continue the current plan",
      ].sort(),
    );
    expect(view.question.text).toMatch(/^A (man|woman|patient) with schizophrenia/);
    expect(JSON.stringify(view)).not.toMatch(/intended|answer|Rated by the panel/i);
    expect(view.scores).toEqual([null, null, null, null, null]);
  });

  it("saves drafts, submits, revises; stores scores in the original order; audits every change", () => {
    const bankId = importBank();
    addBankRaters(db, { bankId, raterIds: [ann.id, ben.id], actorId: boss.id });
    const q = listRaterQuestions(db, ann.id)[0]!;
    const view = getRaterQuestion(db, { userId: ann.id, questionId: q.questionId })!;
    const save = (scores: (number | null)[], version: number, intent: "draft" | "submit", comment = "") =>
      saveOptionRating(db, { userId: ann.id, questionId: q.questionId, values: { scores, comment }, version, intent });

    expect(save([90, null, null, null, null], 0, "draft")).toMatchObject({ ok: true, version: 1, state: "draft" });
    expect(save([90, 10, null, null, null], 0, "draft")).toMatchObject({ ok: false, status: 409 });
    expect(save([90, 10, null, null, null], 1, "submit")).toMatchObject({ ok: false, status: 422 });
    expect(save([90, 10, 20, 0, 55], 1, "submit", "Option wording is ambiguous")).toMatchObject({
      ok: true,
      version: 2,
      state: "submitted",
    });
    expect(save([90, 10, 20, 0, 56], 2, "draft")).toMatchObject({ ok: false, status: 409 });
    expect(save([90, 10, 20, 0, 60], 2, "submit")).toMatchObject({ ok: true, version: 3, state: "submitted" });

    const row = db
      .select()
      .from(mentatRatings)
      .where(and(eq(mentatRatings.questionId, q.questionId), eq(mentatRatings.raterId, ann.id)))
      .get()!;
    const order = row.optionOrder as number[];
    const stored = row.scores as number[];
    // Shown position i is original option order[i].
    [90, 10, 20, 0, 60].forEach((s, i) => expect(stored[order[i]!]).toBe(s));
    expect(getRaterQuestion(db, { userId: ann.id, questionId: q.questionId })!.scores).toEqual([90, 10, 20, 0, 60]);
    expect(view.question.options).toEqual(
      order.map(
        (i) =>
          JSON.parse(
            db.$client.prepare("select options from mentat_questions where id = ?").pluck().get(q.questionId) as string,
          )[i],
      ),
    );

    const audit = eventsOf("mentat_rating").map((e) => [e.action, e.changes]);
    expect(audit.map((a) => a[0])).toEqual(["draft", "submit", "revise"]);
    expect(audit[0]![1]).toMatchObject({ optionOrder: [null, order] });
    expect(JSON.stringify(audit)).not.toContain("ambiguous");
    expect((audit[1]![1] as Record<string, unknown>).comment).toEqual(["(text)", "(changed)"]);
  });

  it("refuses another expert's question id with 404 and writes nothing", () => {
    const bankId = importBank();
    addBankRaters(db, { bankId, raterIds: [ann.id], actorId: boss.id });
    const q = listRaterQuestions(db, ann.id)[0]!;
    expect(
      saveOptionRating(db, {
        userId: ben.id,
        questionId: q.questionId,
        values: { scores: [1, 2, 3, 4, 5], comment: "" },
        version: 0,
        intent: "submit",
      }),
    ).toMatchObject({
      ok: false,
      status: 404,
    });
    expect(db.select().from(mentatRatings).all()).toEqual([]);
  });
});

describe("variant sets, fit and export", () => {
  function rateAll() {
    const bankId = importBank();
    addBankRaters(db, { bankId, raterIds: [ann.id, ben.id, cat.id], actorId: boss.id });
    // Each expert prefers a different first option, in the original a–e order; mapped to what they saw.
    const prefs: Record<string, number[]> = {
      ann: [95, 30, 20, 5, 0],
      ben: [80, 60, 10, 10, 0],
      cat: [70, 75, 20, 0, 5],
    };
    for (const u of [ann, ben, cat])
      for (const q of listRaterQuestions(db, u.id)) {
        const view = getRaterQuestion(db, { userId: u.id, questionId: q.questionId })!;
        const original = JSON.parse(
          db.$client.prepare("select options from mentat_questions where id = ?").pluck().get(q.questionId) as string,
        ) as string[];
        const shownScores = view.question.options.map((text) => prefs[u.username]![original.indexOf(text)]!);
        expect(
          saveOptionRating(db, {
            userId: u.id,
            questionId: q.questionId,
            values: { scores: shownScores, comment: "" },
            version: 0,
            intent: "submit",
          }).ok,
        ).toBe(true);
      }
    return bankId;
  }

  it("expands reproducible sets and replaces them only when they change", () => {
    const bankId = importBank();
    const first = expandBank(db, { bankId, dimension: "gender", actorId: boss.id });
    expect(first).toMatchObject({ count: 12, replaced: false, unchanged: false });
    const again = expandBank(db, { bankId, dimension: "gender", actorId: boss.id });
    expect(again).toMatchObject({ count: 12, unchanged: true, contentHash: first.contentHash });
    const ages = expandBank(db, { bankId, dimension: "age", params: { ages: [30, 50] }, actorId: boss.id });
    expect(ages.count).toBe(3 * 2 + 3);
    expect(expandBank(db, { bankId, dimension: "age", actorId: boss.id })).toMatchObject({
      replaced: true,
      count: 3 * 5 + 3,
    });
    expect(listDatasets(db, bankId).map((d) => d.dimension)).toEqual(["gender", "age"]);
    expect(() => expandBank(db, { bankId, dimension: "age", params: { ages: [30, 30] }, actorId: boss.id })).toThrow(
      /listed twice/,
    );
  });

  it("fits labels from the submitted ratings and exports JSONL byte-identically", () => {
    const bankId = rateAll();
    expandBank(db, { bankId, dimension: "base", actorId: boss.id });
    expect(exportDataset(db, { bankId, dimension: "base" })).toMatchObject({ ok: false, status: 409 });
    const intended = exportDataset(db, { bankId, dimension: "base", allowIntended: true });
    expect(intended.ok && intended.warnings[0]).toMatch(/keep their intended answer/);

    const fit = runBankFit(db, { bankId, options: { bootstrap: 20, seed: 3 }, actorId: boss.id });
    expect(fit.result.nRows).toBe(12);
    expect(fit.result.labels.questions.map((q) => q.question)).toEqual(["d01", "d02", "t01", "t02"]);
    for (const q of fit.result.labels.questions) {
      expect(q.labels.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 12);
      expect(q.labels[0]).toBeGreaterThan(q.labels[2]!); // a beats c for everyone
      q.labels.forEach((p, i) => expect(q.lower[i]! <= p + 1e-9 && p <= q.upper[i]! + 1e-9).toBe(true));
    }
    expect(fit.result.agreement.every((a) => a.alpha !== null && a.nRaters === 3)).toBe(true);
    expect(getLatestFit(db, bankId)!.stale).toBe(false);

    const out = exportDataset(db, { bankId, dimension: "base" });
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    const records = out.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(records.map((r) => r.id)).toEqual(["t01.base", "t02.base", "d01.base", "d02.base", "x01.base", "x02.base"]);
    const t01 = records[0];
    expect(t01.label_source).toBe("preference");
    const fitted = fit.result.labels.questions.find((q) => q.question === "t01")!;
    t01.option_ids.forEach((letter: string, i: number) => {
      const k = "abcde".indexOf(letter);
      expect(t01.labels[i]).toBe(fitted.labels[k]);
      expect(t01.labels_lower[i]).toBe(fitted.lower[k]);
      expect(t01.labels_upper[i]).toBe(fitted.upper[k]);
    });
    expect(records[4]).toMatchObject({ id: "x01.base", domain: "diagnosis", label_source: "intended" });
    expect(records[5].domain).toBe("monitoring");
    expect(Object.keys(t01)).toEqual([
      "id",
      "question_id",
      "dataset",
      "domain",
      "demographics",
      "prompt",
      "question",
      "options",
      "option_ids",
      "labels",
      "labels_lower",
      "labels_upper",
      "label_source",
      "intended_answer",
    ]);
    const again = exportDataset(db, { bankId, dimension: "base" });
    expect(again.ok && again.text).toBe(out.text);

    // A revision makes the fit stale, and the export says so.
    const q = listRaterQuestions(db, ann.id)[0]!;
    const v = getRaterQuestion(db, { userId: ann.id, questionId: q.questionId })!;
    saveOptionRating(db, {
      userId: ann.id,
      questionId: q.questionId,
      values: { scores: [0, 0, 0, 0, 100], comment: "" },
      version: v.version,
      intent: "submit",
    });
    expect(getLatestFit(db, bankId)!.stale).toBe(true);
    const stale = exportDataset(db, { bankId, dimension: "base" });
    expect(stale.ok && stale.warnings).toContain(
      "Ratings changed after the latest fit; run the fit again for current labels.",
    );
  });

  it("refuses to fit without submitted ratings", () => {
    const bankId = importBank();
    expect(() => runBankFit(db, { bankId, actorId: boss.id })).toThrow(/No submitted ratings/);
  });
});

describe("generated-case review", () => {
  function setUp() {
    const r = importReviewSet(db, { setName: "MentalBench sample", text: CASES, actorId: boss.id });
    expect(r.ok).toBe(true);
    const setId = r.ok ? r.setId! : 0;
    addReviewRaters(db, { setId, raterIds: [ann.id, ben.id], actorId: boss.id });
    return setId;
  }
  const values = (v: Partial<ReviewValues>): ReviewValues => ({
    naturalness: null,
    validity: null,
    realism: null,
    decision: null,
    reason: "",
    comment: "",
    ...v,
  });

  it("requires a reason to reject a seed and all three scores for a case", () => {
    setUp();
    const [s01, , c01] = listRaterItems(db, ann.id);
    expect(
      saveReview(db, {
        userId: ann.id,
        itemId: s01!.itemId,
        values: values({ decision: "reject" }),
        version: 0,
        intent: "submit",
      }),
    ).toMatchObject({
      ok: false,
      status: 422,
      errors: { reason: "Say why the seed is rejected." },
    });
    expect(
      saveReview(db, {
        userId: ann.id,
        itemId: c01!.itemId,
        values: values({ naturalness: 5, validity: 4 }),
        version: 0,
        intent: "submit",
      }),
    ).toMatchObject({
      ok: false,
      errors: { realism: "Choose a score from 1 to 5." },
    });
    expect(
      saveReview(db, {
        userId: ann.id,
        itemId: c01!.itemId,
        values: values({ naturalness: 5, validity: 4, realism: 5, decision: "accept" }),
        version: 0,
        intent: "submit",
      }),
    ).toMatchObject({
      ok: true,
    });
    // A case's review keeps no decision.
    expect(getRaterItem(db, { userId: ann.id, itemId: c01!.itemId })!.values.decision).toBeNull();
    expect(getRaterItem(db, { userId: cat.id, itemId: c01!.itemId })).toBeNull();
  });

  it("reports scores, agreement and the accepted seeds from submitted reviews only", () => {
    const setId = setUp();
    const items = listRaterItems(db, ann.id);
    const id = (ext: string) => items.find((i) => i.externalId === ext)!.itemId;
    const submit = (u: UserView, ext: string, v: Partial<ReviewValues>) =>
      expect(
        saveReview(db, { userId: u.id, itemId: id(ext), values: values(v), version: 0, intent: "submit" }).ok,
      ).toBe(true);
    submit(ann, "s01", { decision: "accept" });
    submit(ben, "s01", { decision: "accept" });
    submit(ann, "s02", { decision: "reject", reason: "No duration is given for the elevated mood." });
    submit(ben, "s02", { decision: "accept" });
    submit(ann, "c01", { naturalness: 5, validity: 5, realism: 5 });
    submit(ben, "c01", { naturalness: 5, validity: 4, realism: 5 });
    submit(ann, "c02", { naturalness: 4, validity: 4, realism: 5 });
    submit(ben, "c02", { naturalness: 5, validity: 4, realism: 4 });
    // A draft does not count.
    expect(
      saveReview(db, {
        userId: ann.id,
        itemId: id("c03"),
        values: values({ naturalness: 1 }),
        version: 0,
        intent: "draft",
      }).ok,
    ).toBe(true);
    const r = getReviewReport(db, setId);
    expect(r.nReviews).toBe(8);
    const nat = r.dimensions[0]!;
    expect([nat.n, nat.mean, nat.distribution]).toEqual([4, 4.75, [0, 0, 0, 1, 3]]);
    expect(r.acceptedSeeds).toEqual(["s01"]);
    expect(r.seeds[1]).toMatchObject({
      id: "s02",
      status: "rejected",
      reasons: [{ rater: "ann", reason: "No duration is given for the elevated mood." }],
    });
    expect(eventsOf("review_judgement").map((e) => e.action)).toEqual([
      "submit",
      "submit",
      "submit",
      "submit",
      "submit",
      "submit",
      "submit",
      "submit",
      "draft",
    ]);
    expect(JSON.stringify(eventsOf("review_judgement"))).not.toContain("elevated mood");
  });
});
