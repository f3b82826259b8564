/**
 * The expert-rating commands through runCli (docs/mentat.md): mentat-import, expert-panel, mentat-expand, mentat-fit,
 * mentat-export, casereview-import, casereview-report — help texts, exit codes, line-numbered errors and outputs.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import type { Db } from "../../app/platform/db.server";
import { listRaterItems, saveReview } from "../../app/case-review/case-review.server";
import { getRaterQuestion, listRaterQuestions, saveOptionRating } from "../../app/mentat/ratings.server";
import type { UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";
import { expectFullDiskRefusal } from "../support/output-faults";

const FIXTURES = new URL("../fixtures/expert-ratings/", import.meta.url).pathname;
const BANK = join(FIXTURES, "questions.csv");
const CASES = join(FIXTURES, "cases.csv");

let db: Db;
let dir: string;
let cleanup: () => void;
let raters: UserView[];

beforeEach(async () => {
  let path: string;
  ({ db, path, cleanup } = freshDb());
  dir = dirname(path);
  raters = [await makeUser(db, "ann", ["rater"]), await makeUser(db, "ben", ["rater"])];
});
afterEach(() => cleanup());

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return { code, out, err };
}

describe("help", () => {
  it("lists the commands and prints each one's usage", async () => {
    const overview = await run(["--help"]);
    for (const name of [
      "casereview-import",
      "casereview-report",
      "expert-panel",
      "mentat-expand",
      "mentat-export",
      "mentat-fit",
      "mentat-import",
    ]) {
      expect(overview.out).toMatch(new RegExp(`^  ${name} `, "m"));
      const help = await run([name, "--help"]);
      expect(help.code).toBe(0);
      expect(help.out).toMatch(new RegExp(`^Usage: npm run concord -- ${name} `));
    }
  });
});

describe("MENTAT commands", () => {
  it("reports every bad line as FILE:LINE and imports nothing (exit 2)", async () => {
    const bad = join(dir, "bad.csv");
    writeFileSync(
      bad,
      readFileSync(BANK, "utf8").replace(",a,\n", ",z,\n").replace("d02,documentation", "d02,billing"),
    );
    const r = await run(["mentat-import", bad, "--bank", "Pilot"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${bad}:2: the answer "z" must be one of the letters a–e.`);
    expect(r.err).toContain(`${bad}:5: the domain "billing" is not one of`);
    expect(r.err).toMatch(/2 errors; nothing was imported\./);
    expect((await run(["mentat-fit", "--bank", "Pilot"])).err).toMatch(/No question bank named "Pilot"/);
  });

  it("imports, builds the panel, expands, fits and exports", async () => {
    const imported = await run(["mentat-import", BANK, "--bank", "Pilot", "--seed", "9"]);
    expect(imported).toMatchObject({
      code: 0,
      out: 'Imported 6 questions into bank "Pilot" (new): 6 new, 0 changed, 0 unchanged.\n',
    });
    expect(
      (await run(["mentat-import", BANK, "--bank", "Pilot", "--preference-domains", "triage,surgery"])).err,
    ).toMatch(/unknown domain surgery/);

    const panel = await run(["expert-panel", "--bank", "Pilot", "--add", "ann,ben"]);
    expect(panel.code).toBe(0);
    expect(panel.out).toContain("Added 2 experts");
    expect(panel.out).toMatch(/ann: 0 submitted, 0 draft/);
    expect((await run(["expert-panel", "--bank", "Pilot", "--add", "nobody"])).err).toMatch(
      /"nobody" is not a user with the rater role/,
    );

    const expanded = await run(["expert-panel", "--bank", "Pilot"]);
    expect(expanded.code).toBe(0);
    const ex = await run(["mentat-expand", "--bank", "Pilot", "--by", "all", "--ages", "30,50"]);
    expect(ex.code).toBe(0);
    expect(ex.out).toMatch(/^base\s+6 variants/m);
    expect(ex.out).toMatch(/^gender\s+12 variants/m);
    expect(ex.out).toMatch(/^age\s+9 variants/m);
    expect(ex.out).toMatch(/^race\s+16 variants/m);
    const again = await run(["mentat-expand", "--bank", "Pilot", "--by", "gender"]);
    expect(again.out).toMatch(/unchanged/);

    const refused = await run(["mentat-export", "--bank", "Pilot", "--set", "gender"]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/have no fitted preference label/);

    for (const [u, prefs] of [
      [raters[0]!, [90, 40, 10, 0, 20]],
      [raters[1]!, [70, 80, 10, 5, 0]],
    ] as const)
      for (const q of listRaterQuestions(db, u.id)) {
        const view = getRaterQuestion(db, { userId: u.id, questionId: q.questionId })!;
        const original = JSON.parse(
          db.$client.prepare("select options from mentat_questions where id = ?").pluck().get(q.questionId) as string,
        ) as string[];
        const scores = view.question.options.map((t) => prefs[original.indexOf(t)]!);
        expect(
          saveOptionRating(db, {
            userId: u.id,
            questionId: q.questionId,
            values: { scores, comment: "" },
            version: 0,
            intent: "submit",
          }).ok,
        ).toBe(true);
      }

    const fit = await run(["mentat-fit", "--bank", "Pilot", "--bootstrap", "10", "--seed", "4"]);
    expect(fit.code).toBe(0);
    expect(fit.out).toMatch(
      /^Fit 1 of bank "Pilot": 8 ratings, 4 questions, 2 experts; .* NOT CONVERGED; 10 bootstrap refits \(seed 4\), 10 not converged/,
    );
    // Two ratings per question leave options that never win: MENTAT's objective has no finite maximum there.
    expect(fit.out).toMatch(
      /^Separated \(no finite maximum; labels are where the optimiser stopped\): d01, d02, t01, t02\.$/m,
    );
    const ridged = await run(["mentat-fit", "--bank", "Pilot", "--bootstrap", "0", "--strength-penalty", "0.01"]);
    expect(ridged.out).toMatch(/ converged; /);
    expect(ridged.out).toContain("Ridge 0.01·Σβ² on the strengths (not in MENTAT's objective).\n");
    expect(fit.out).toMatch(/^t01\s+2\s+[-0-9.]+\s+a 0\.\d\d \[/m);
    expect(fit.out).toMatch(/^ann\s+4\s+[0-9.]+\s+[-0-9.]+$/m);
    const json = await run(["mentat-fit", "--bank", "Pilot", "--bootstrap", "0", "--rater-effects", "slope", "--json"]);
    const parsed = JSON.parse(json.out);
    expect(parsed).toMatchObject({
      bank: "Pilot",
      fit_id: 3,
      params: { raterEffects: "slope", bootstrap: 0 },
      nRows: 8,
    });
    expect(parsed.labels.raters.map((r: { offset: number }) => r.offset)).toEqual([0, 0]);
    expect((await run(["mentat-fit", "--bank", "Pilot", "--rater-effects", "both"])).err).toMatch(/--rater-effects/);

    const out = join(dir, "gender.jsonl");
    const exported = await run(["mentat-export", "--bank", "Pilot", "--set", "gender", "--out", out]);
    expect(exported).toMatchObject({ code: 0, out: `Wrote 12 records of the gender set of "Pilot" to ${out}.\n` });
    const lines = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id).slice(0, 3)).toEqual([
      "t01.gender.male",
      "t01.gender.female",
      "t01.gender.nonbinary",
    ]);
    expect(lines[0]).toMatchObject({
      domain: "triage",
      label_source: "preference",
      demographics: { gender: "male", age: null, race: null },
    });
    const stdout = await run(["mentat-export", "--bank", "Pilot", "--set", "gender"]);
    expect(stdout.out).toBe(readFileSync(out, "utf8"));
    // A full disk: exit 2 naming it, nothing written (docs/reliability.md, "Atomic files").
    await expectFullDiskRefusal(
      run,
      "mentat-export",
      (o) => ["mentat-export", "--bank", "Pilot", "--set", "gender", "--out", o],
      dir,
      "gender.jsonl",
    );
  });
});

describe("case-review commands", () => {
  it("imports, reviews and reports as text and JSON", async () => {
    const bad = join(dir, "bad.csv");
    writeFileSync(bad, "id,kind,text\nc1,case,\n");
    const refused = await run(["casereview-import", bad, "--set", "Sample"]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`${bad}:2: the text is empty.`);

    expect((await run(["casereview-import", CASES, "--set", "Sample"])).out).toBe(
      'Imported 5 items into review set "Sample": 5 new, 0 changed, 0 unchanged.\n',
    );
    expect((await run(["expert-panel", "--set", "Sample", "--add", "ann,ben"])).code).toBe(0);
    for (const u of raters)
      for (const item of listRaterItems(db, u.id)) {
        const values =
          item.kind === "seed"
            ? {
                naturalness: null,
                validity: null,
                realism: null,
                decision: (item.externalId === "s02" && u.username === "ben" ? "reject" : "accept") as
                  "accept" | "reject",
                reason: "Too vague.",
                comment: "",
              }
            : {
                naturalness: 5,
                validity: u.username === "ann" ? 4 : 5,
                realism: 4,
                decision: null,
                reason: "",
                comment: "",
              };
        expect(saveReview(db, { userId: u.id, itemId: item.itemId, values, version: 0, intent: "submit" }).ok).toBe(
          true,
        );
      }
    const text = await run(["casereview-report", "--set", "Sample"]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^Review set "Sample": 3 cases, 2 seeds, 10 submitted reviews by 2 experts\./);
    expect(text.out).toMatch(/^naturalness\s+6\s+5\.00\s+0\.00\s+0\/0\/0\/0\/6/m);
    expect(text.out).toMatch(/^validity\s+6\s+4\.50/m);
    expect(text.out).toMatch(/^Seeds: 1 accepted, 1 rejected, 0 pending/m);
    expect(text.out).toMatch(/^\s+ben: Too vague\.$/m);
    expect(text.out).toMatch(/^Accepted seeds: s01$/m);
    const json = JSON.parse((await run(["casereview-report", "--set", "Sample", "--json", "--weights", "linear"])).out);
    expect(json).toMatchObject({ set: "Sample", weights: "linear", acceptedSeeds: ["s01"], nCases: 3, nSeeds: 2 });
    expect(json.dimensions.map((d: { dimension: string }) => d.dimension)).toEqual([
      "naturalness",
      "validity",
      "realism",
    ]);
    expect((await run(["casereview-report", "--set", "Sample", "--weights", "cubic"])).err).toMatch(
      /--weights must be linear or quadratic/,
    );
  });
});
