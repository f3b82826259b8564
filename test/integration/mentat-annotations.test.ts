/**
 * `mentat-import-ratings`: MENTAT's own annotation files as option ratings of a bank, refitted by `mentat-fit`
 * (docs/mentat.md, "Importing MENTAT's annotation files").
 *
 * Fixture: test/fixtures/mentat-annotations/make_fixture.py writes synthetic files in MENTAT's annotated_data/
 * jsPsych format and expected.json — the rows as MENTAT's helper_functions.py reads them (rows [4:-1], rater of the
 * second row lower-cased, scores = [Q0..Q4][question_order]) and the labels of MENTAT's preferece_HBT.py objective
 * minimised with scipy.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mentatQuestions, mentatRatings, users } from "../../db/schema";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import type { Db } from "../../app/platform/db.server";
import { freshDb, makeUser } from "../support/db";

const FIXTURES = new URL("../fixtures/mentat-annotations/", import.meta.url).pathname;
const DATA = join(FIXTURES, "annotated_data");
const expected = JSON.parse(readFileSync(join(FIXTURES, "expected.json"), "utf8"));

let db: Db;
let dir: string;
let cleanup: () => void;

beforeEach(async () => {
  let path: string;
  ({ db, path, cleanup } = freshDb());
  dir = dirname(path);
  for (const r of ["x1", "x2", "x3", "x4", "x5", "x6"]) await makeUser(db, r, ["rater"]);
});
afterEach(() => cleanup());

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return { code, out, err };
}

async function bank() {
  expect((await run(["mentat-import", join(FIXTURES, "questions.csv"), "--bank", "MENTAT"])).code).toBe(0);
}

function storedRatings() {
  return db
    .select({
      question: mentatQuestions.externalId,
      rater: users.username,
      scores: mentatRatings.scores,
      optionOrder: mentatRatings.optionOrder,
      gender: mentatRatings.shownGender,
      comment: mentatRatings.comment,
      status: mentatRatings.status,
    })
    .from(mentatRatings)
    .innerJoin(mentatQuestions, eq(mentatQuestions.id, mentatRatings.questionId))
    .innerJoin(users, eq(users.id, mentatRatings.raterId))
    .all();
}

const GENDER: Record<string, string> = { q_male: "male", q_female: "female", q_they: "nonbinary" };

describe("mentat-import-ratings", () => {
  it("reads MENTAT's files as MENTAT's pipeline does, and mentat-fit gives scipy's labels for MENTAT's objective", async () => {
    await bank();
    const imported = await run(["mentat-import-ratings", "--bank", "MENTAT", DATA]);
    expect(imported).toMatchObject({ code: 0, err: "" });
    expect(imported.out).toMatch(
      /^Imported 30 ratings from 7 file\(s\) into bank "MENTAT": 30 new, 0 replaced, 0 unchanged\.\n/,
    );
    expect(imported.out).toContain("6 rating(s) are of questions outside the bank's preference domains");

    const stored = storedRatings();
    expect(stored).toHaveLength(expected.rows.length);
    for (const row of expected.rows as {
      q_no: number;
      rater_id: string;
      response: number[];
      q_key: string;
      comment: string;
    }[]) {
      const s = stored.find((r) => r.question === String(row.q_no) && r.rater === row.rater_id)!;
      expect(s.scores).toEqual(row.response);
      expect(s).toMatchObject({ gender: GENDER[row.q_key], comment: row.comment, status: "submitted" });
      // optionOrder[slot] = option: the inverse of MENTAT's question_order, a permutation of 0..4.
      expect([...s.optionOrder].sort()).toEqual([0, 1, 2, 3, 4]);
    }

    // make_fixture.py fits with the first version's penalty and bounds (docs/mentat.md, "Versions of MENTAT's fit").
    const fit = JSON.parse(
      (await run(["mentat-fit", "--bank", "MENTAT", "--fit-version", "2025-01-19", "--bootstrap", "0", "--json"])).out,
    );
    expect(fit.labels.options.strengthPenalty).toBe(0);
    expect(fit.labels.questions.map((q: { question: string }) => q.question)).toEqual(expected.questions);
    expect(fit.labels.raters.map((r: { rater: string }) => r.rater)).toEqual(expected.raters);
    expect(Math.abs(fit.labels.objective - expected.objective)).toBeLessThan(1e-8 * expected.objective);
    fit.labels.questions.forEach((q: { labels: number[]; separated: boolean }, qi: number) => {
      expect(q.separated).toBe(expected.separated[qi]);
      q.labels.forEach((p, i) => expect(p).toBeCloseTo(expected.labels[qi][i], 5));
    });

    // Importing the same files again changes nothing.
    const again = await run(["mentat-import-ratings", "--bank", "MENTAT", DATA]);
    expect(again.out).toMatch(/30 ratings .*: 0 new, 0 replaced, 30 unchanged\./);
  });

  it("reports every bad line as FILE:LINE, writes nothing and exits 2", async () => {
    await bank();
    const text = readFileSync(join(DATA, "x3_annotation_data_0.csv"), "utf8").split("\n");
    // Lines 16.. are the rating rows (the instructions span several physical lines each).
    const first = text.findIndex((l) => l.includes("survey-slider"));
    const bad = [...text];
    bad[first] = bad[first]!.replace('""Q4"":', '""Q9"":');
    bad[first + 1] = bad[first + 1]!.replace(/"\[[0-9,]+\]"/, '"[0,0,1,2,3]"');
    bad[first + 2] = bad[first + 2]!.replace(/,q_(male|female|they)$/, ",q_other");
    mkdirSync(join(dir, "bad"));
    const file = join(dir, "bad", "x3_annotation_data_0.csv");
    writeFileSync(file, bad.join("\n"));
    const r = await run(["mentat-import-ratings", "--bank", "MENTAT", file]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${file}:${first + 1}: response must be JSON`);
    expect(r.err).toContain(`${file}:${first + 2}: question_order must be a JSON permutation of 0..4`);
    expect(r.err).toContain(`${file}:${first + 3}: q_key "q_other" is not one of q_male, q_female, q_they.`);
    expect(r.err).toMatch(/nothing was written\.\n$/);
    expect(r.err).not.toMatch(/\n\s+at /);
    expect(storedRatings()).toHaveLength(0);
  });

  it("refuses unknown raters and questions, and a rater's second rating unless --duplicates last", async () => {
    await bank();
    const x4 = join(DATA, "x4_annotation_data_0.csv");
    const noUser = await run(["mentat-import-ratings", "--bank", "MENTAT", x4, "--rater", "x4=nobody"]);
    expect(noUser.code).toBe(2);
    expect(noUser.err).toMatch(/rater "x4" is not an active user with the rater role named "nobody"/);
    const noQuestion = await run(["mentat-import-ratings", "--bank", "MENTAT", x4, "--ids", "m{q_no}"]);
    expect(noQuestion.err).toMatch(/x4_annotation_data_0\.csv:\d+: bank "MENTAT" has no question "m12" \(q_no 12\)\./);
    const twice = await run(["mentat-import-ratings", "--bank", "MENTAT", x4, x4]);
    expect(twice.code).toBe(2);
    expect(twice.err).toMatch(/already rated q_no 12 at .*x4_annotation_data_0\.csv:\d+; Concord keeps one rating/);
    const last = await run(["mentat-import-ratings", "--bank", "MENTAT", x4, x4, "--duplicates", "last", "--dry-run"]);
    expect(last.out).toMatch(
      /^Dry run: would import 5 ratings from 2 file\(s\) .*, 5 earlier duplicate\(s\) dropped\./,
    );
    expect(storedRatings()).toHaveLength(0);
    expect((await run(["mentat-import-ratings", "--bank", "Nope", x4])).err).toMatch(/No .*bank/i);
    expect((await run(["mentat-import-ratings", "--bank", "MENTAT", x4, "--duplicates", "first"])).err).toBe(
      "concord mentat-import-ratings: --duplicates first: use refuse or last.\n",
    );
  });
});
