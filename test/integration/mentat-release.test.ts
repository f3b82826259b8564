/**
 * `mentat-import-ratings --layout mentat-release`: MENTAT's released annotation files as MENTAT's own pipeline
 * reads them — every row kept (several per rater and question, one per wording), the creator as the pseudo-rater
 * `crtr` — and `mentat-fit` then gives MENTAT's pipeline labels (docs/mentat.md, "MENTAT's released annotations").
 *
 * Fixture: test/fixtures/mentat-release/mentat_pipeline.py make-fixture writes synthetic files in MENTAT's released
 * layout and questions.csv, and runs MENTAT's own code on them (helper_functions.import_raw_annotations and
 * process_raw_data_annotations, the notebook's creator rows, preferece_HBT.main as MENTAT publishes it) →
 * expected.json.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mentatRatings, mentatReleaseRatings } from "../../db/schema";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import type { Db } from "../../app/platform/db.server";
import { freshDb, makeUser } from "../support/db";

const FIXTURES = new URL("../fixtures/mentat-release/", import.meta.url).pathname;
const DATA = join(FIXTURES, "annotated_data");
const expected: {
  rows_read: number;
  rows: { question: string; rater: string; wording: string; scores: number[] }[];
  labels: Record<string, number[]>;
  raters: Record<string, { slope: number; offset: number }>;
} = JSON.parse(readFileSync(join(FIXTURES, "expected.json"), "utf8"));

let db: Db;
let cleanup: () => void;

beforeEach(() => {
  ({ db, cleanup } = freshDb());
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

const top = (p: readonly number[]) => p.indexOf(Math.max(...p));
const key = (r: { question: string; rater: string; scores: readonly number[] }) =>
  `${r.question}|${r.rater}|${r.scores.join(",")}`;

describe("mentat-import-ratings --layout mentat-release", () => {
  it("keeps every row, adds the creator, and mentat-fit gives MENTAT's pipeline labels", async () => {
    await bank();
    const imported = await run(["mentat-import-ratings", "--layout", "mentat-release", "--bank", "MENTAT", DATA]);
    expect(imported.code, imported.err).toBe(0);
    const creatorRows = expected.rows.length - expected.rows_read;
    expect(imported.out).toContain(`${expected.rows_read} ratings from 8 file(s) of 6 questions (all kept;`);
    expect(imported.out).toContain(`${creatorRows} creator rows`);

    // The rows are MENTAT's, one for one (as a multiset): several per rater and question, and 'crtr' but on 92.
    const stored = db.select().from(mentatReleaseRatings).all();
    expect(stored.length).toBe(expected.rows.length);
    const ids = new Map(
      (
        db.$client.prepare("select id, external_id as externalId from mentat_questions").all() as {
          id: number;
          externalId: string;
        }[]
      ).map((q) => [q.id, q.externalId]),
    );
    expect(
      stored.map((r) => key({ question: ids.get(r.questionId)!, rater: r.rater, scores: r.scores })).sort(),
    ).toEqual(expected.rows.map(key).sort());
    expect(
      stored
        .filter((r) => r.rater === "crtr")
        .map((r) => ids.get(r.questionId))
        .sort(),
    ).toEqual(["127", "170", "186", "32", "74"]);
    const perRaterQuestion = new Map<string, number>();
    for (const r of stored)
      perRaterQuestion.set(`${r.rater}|${r.questionId}`, (perRaterQuestion.get(`${r.rater}|${r.questionId}`) ?? 0) + 1);
    expect(Math.max(...perRaterQuestion.values())).toBeGreaterThan(1);
    // Not anyone's workspace ratings.
    expect(db.select().from(mentatRatings).all()).toEqual([]);

    const fit = JSON.parse((await run(["mentat-fit", "--bank", "MENTAT", "--bootstrap", "0", "--json"])).out);
    expect(fit.labels.options).toMatchObject({ fitVersion: "2025-01-24", penalty: 5, slopeBounds: [0.5, 2] });
    let maxDiff = 0;
    for (const q of fit.labels.questions as { question: string; labels: number[]; separated: boolean }[]) {
      const ref = expected.labels[q.question]!;
      expect(q.separated).toBe(false);
      expect(top(q.labels)).toBe(top(ref));
      q.labels.forEach((p, i) => (maxDiff = Math.max(maxDiff, Math.abs(p - ref[i]!))));
    }
    expect(Object.keys(expected.labels).sort()).toEqual(
      (fit.labels.questions as { question: string }[]).map((q) => q.question).sort(),
    );
    expect(maxDiff).toBeLessThan(1e-3);
    for (const r of fit.labels.raters as { rater: string; slope: number; offset: number }[]) {
      const ref = expected.raters[r.rater.replace(/^mentat:/, "")]!;
      expect(r.slope).toBeCloseTo(ref.slope, 2);
      expect(r.offset).toBeCloseTo(ref.offset, 2);
    }

    // A second import replaces the release; --no-creator leaves the creator out.
    const again = await run([
      "mentat-import-ratings",
      "--layout",
      "mentat-release",
      "--bank",
      "MENTAT",
      "--no-creator",
      DATA,
    ]);
    expect(again.code).toBe(0);
    expect(again.out).toContain(`replaces the previous release (${expected.rows.length} rows)`);
    expect(db.select().from(mentatReleaseRatings).all().length).toBe(expected.rows_read);
  });

  it("the default layout refuses the repeated ratings and points to --layout mentat-release", async () => {
    await bank();
    for (const r of ["x0", "x1", "x2", "x3", "x4"]) await makeUser(db, r, ["rater"]);
    const refused = await run(["mentat-import-ratings", "--bank", "MENTAT", DATA]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/already rated q_no \d+ at .*x\d_annotation_data_\d\.csv:\d+/);
    expect(refused.err).toContain("--layout mentat-release imports them as MENTAT's pipeline reads them");
    expect(db.select().from(mentatRatings).all()).toEqual([]);
  });

  it("refuses a question the bank lacks as FILE:LINE, writing nothing, and options of the other layout", async () => {
    await bank();
    const bad = await run([
      "mentat-import-ratings",
      "--layout",
      "mentat-release",
      "--bank",
      "MENTAT",
      "--ids",
      "q{q_no}",
      DATA,
    ]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/x0_annotation_data_0\.csv:\d+: bank "MENTAT" has no question "q\d+"/);
    expect(db.select().from(mentatReleaseRatings).all()).toEqual([]);
    const wrong = await run([
      "mentat-import-ratings",
      "--layout",
      "mentat-release",
      "--bank",
      "MENTAT",
      "--replace",
      DATA,
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/do not apply to --layout mentat-release/);
    expect((await run(["mentat-import-ratings", "--layout", "other", "--bank", "MENTAT", DATA])).err).toMatch(
      /--layout other: use ratings or mentat-release/,
    );
  });
});
