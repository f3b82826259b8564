/**
 * The judge-validation commands (docs/judge-validation.md) through runCli with a capturing io, against the process-wide database
 * freshDb() sets: judge-import (a runs/ folder, errors with FILE:LINE and exit 2, --dry-run), judge-sample (the bucket
 * table, the reference's selection, re-draw refused after judge-assign), judge-import-outputs, judge-export and
 * judge-report (--labels FILE, --json, --set).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import type { Db } from "../../app/platform/db.server";
import { submitRating } from "../../app/judge-validation/judge-ratings.server";
import { getJudgeSetByName } from "../../app/judge-validation/judge-sets.server";
import { sampledRows } from "../../app/judge-validation/judge-set-export.server";
import { judgeItems, judgeRatings } from "../../db/schema";
import { freshDb, makeUser } from "../support/db";
import { expectFullDiskRefusal } from "../support/output-faults";

let db: Db;
let dir: string;
let cleanup: () => void;
beforeEach(() => {
  let path: string;
  ({ db, path, cleanup } = freshDb());
  dir = dirname(path);
});
afterEach(() => cleanup());

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return { code, out, err };
}

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return path;
}

const FIXTURE = new URL("../fixtures/validation-set/", import.meta.url);

function trajectory(id: string, outputs: string[], extra: Record<string, unknown> = {}) {
  return JSON.stringify({
    sample_id: id,
    num_sections_total: outputs.length,
    num_steps_executed: outputs.length,
    stopping_reason: "Finished",
    trajectory: outputs.map((o, i) => ({
      step_index: i + 1,
      section_order: i + 1,
      revealed_section_orders: [i + 1],
      user_prompt: "u",
      conversation_state: [],
      model_output_raw: o,
      judge_output_raw: "",
      judge_action: "",
      is_last_section: i === outputs.length - 1,
      structured_action_raw: null,
    })),
    model_evaluated: "m",
    judge_model: "j",
    judge_seed: 123,
    strategy: "full_info_no_abstention",
    seed: 123,
    ...extra,
  });
}

describe("judge commands", () => {
  it("are listed and have help", async () => {
    const help = await run(["--help"]);
    for (const name of [
      "judge-assign",
      "judge-export",
      "judge-import",
      "judge-import-outputs",
      "judge-report",
      "judge-sample",
    ])
      expect(help.out).toMatch(new RegExp(`^  ${name} `, "m"));
    const r = await run(["judge-report", "--help"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: npm run concord -- judge-report/);
    for (const key of [
      "majority",
      "ties",
      "humans",
      "human_macro_f1_mean",
      "human_fleiss_kappa",
      "judges",
      "best_judge",
      "fleiss_kappa_with_judge",
      "n_fleiss",
    ])
      expect(r.out).toContain(key);
  });

  it("judge-import reads a runs/ folder in sorted order, flattening each trajectories.jsonl", async () => {
    file("runs/b_run/trajectories.jsonl", trajectory("c2", ["b one"]) + "\n");
    file("runs/a_run/trajectories.jsonl", trajectory("c1", ["a one", "a two"]) + "\n");
    file("runs/a_run/timing.json", "{}");
    const r = await run(["judge-import", "--set", "runs", join(dir, "runs")]);
    expect(r.err).toMatch(/warning: .*no first-parse features/);
    expect(r).toMatchObject({ code: 0, out: 'Imported 3 responses (trajectories) into set "runs".\n' });
    const set = getJudgeSetByName(db, "runs")!;
    expect(set.responses).toBe(3);
    const rows = db.$client
      .prepare("select source_run, sample_id, step_index, record from judge_responses order by position")
      .all() as { source_run: string; sample_id: string; step_index: number; record: string }[];
    expect(rows.map((x) => [x.source_run, x.sample_id, x.step_index])).toEqual([
      ["a_run", "c1", 1],
      ["a_run", "c1", 2],
      ["b_run", "c2", 1],
    ]);
    expect(JSON.parse(rows[0]!.record)).toMatchObject({
      source_run_dir: "runs/a_run",
      source_file: "runs/a_run/trajectories.jsonl",
    });
  });

  it("judge-import reports FILE:LINE errors, exits 2 and writes nothing", async () => {
    const path = file("bad.jsonl", ['{"id": "a", "response": "x"}', '{"id": "b"}', "nope"].join("\n"));
    const r = await run(["judge-import", "--set", "bad", path]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${path}:2: response is missing`);
    expect(r.err).toContain(`${path}:3: not valid JSON`);
    expect(r.err).toMatch(/2 errors; nothing was imported\.\n$/);
    expect(getJudgeSetByName(db, "bad")).toBeNull();
    expect((await run(["judge-import", "--set", "x", join(dir, "missing.jsonl")])).err).toMatch(/no such file/);
    expect((await run(["judge-import", "--set", "x", "--format", "csv", path])).code).toBe(2);
  });

  it("judge-import --dry-run validates without writing", async () => {
    const path = file("ok.jsonl", '{"id": "a", "response": "x"}\n');
    const r = await run(["judge-import", "--set", "dry", "--dry-run", path]);
    expect(r).toMatchObject({
      code: 0,
      out: 'Dry run for set "dry": 1 responses would be imported. Nothing was written.\n',
    });
    expect(getJudgeSetByName(db, "dry")).toBeNull();
  });

  it("judge-sample draws the reference's selection, judge-assign freezes it, and a re-draw is refused", async () => {
    const input = readFileSync(new URL("input.jsonl", FIXTURE));
    expect((await run(["judge-import", "--set", "v", file("input.jsonl", input)])).code).toBe(0);
    const drawn = await run([
      "judge-sample",
      "--set",
      "v",
      "--seed",
      "2024",
      "--target",
      "clear_diagnose_no_hedging=4,clear_clarify_specific=4",
      "--target",
      "clear_abstain_differential=4",
      ...[
        "clear_abstain_decline",
        "committed_specific_generic_hedging",
        "committed_unspecified",
        "committed_specific_explicit_conditional",
        "committed_specific_refinement_only_specific_info",
        "differential_with_or_without_specific_asks",
      ].flatMap((b) => ["--target", `${b}=4`]),
    ]);
    expect(drawn.code).toBe(0);
    expect(drawn.out).toMatch(/^Drew 32 responses for set "v" \(seed 2024\)\.\n/);
    expect(drawn.out).toMatch(/ {2}committed_unspecified +4 +19 +4\n/);
    const set = getJudgeSetByName(db, "v")!;
    const expected = readFileSync(new URL("expected/seed-2024-small/selected.jsonl", FIXTURE), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(sampledRows(db, set.id)).toEqual(expected);

    const json = await run(["judge-sample", "--set", "v", "--json"]);
    expect(JSON.parse(json.out)).toMatchObject({
      seed: 2024,
      items: 32,
      summary: { committed_unspecified: { target: 4, available: 19, selected: 4 } },
    });

    for (const n of ["r1", "r2", "r3"]) await makeUser(db, n, ["rater"]);
    expect((await run(["judge-assign", "--set", "v", "--raters", "r1,r2"])).err).toMatch(/at least 3 raters/);
    expect((await run(["judge-assign", "--set", "v", "--raters", "r1,r2,nobody"])).err).toMatch(/not raters: nobody/);
    const assigned = await run(["judge-assign", "--set", "v", "--raters", "r1,r2,r3", "--seed", "3"]);
    expect(assigned).toMatchObject({ code: 0 });
    expect(assigned.out).toContain('Assigned 32 responses of "v" to three raters each (96 ratings, seed 3).');

    const refused = await run(["judge-sample", "--set", "v", "--seed", "9"]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(
      /^concord judge-sample: Rating has started on this set: the sample can no longer be re-drawn/,
    );
    expect(sampledRows(db, set.id)).toEqual(expected);
  });

  it("judge-import-outputs, judge-export and judge-report --set run on the app's labels", async () => {
    file(
      "r.jsonl",
      [
        '{"id": "a", "response": "F32.1 moderate depressive episode.", "features": {"primary_answer": "committed", "info_request": "none", "icd_codes": ["F32.1"], "diagnosis_names": ["x"]}}',
        '{"id": "b", "response": "Duration of symptoms?", "features": {"primary_answer": "none", "info_request": "specific"}}',
      ].join("\n"),
    );
    await run(["judge-import", "--set", "s", join(dir, "r.jsonl")]);
    await run(["judge-sample", "--set", "s"]);
    const users = [];
    for (const n of ["r1", "r2", "r3"]) users.push(await makeUser(db, n, ["rater"]));
    await run(["judge-assign", "--set", "s", "--raters", "r1,r2,r3"]);
    const rows = sampledRows(db, getJudgeSetByName(db, "s")!.id);
    const idOf = (sample: string) => rows.find((r) => r.sample_id === sample)!.annotation_id as string;
    for (const item of db.select().from(judgeItems).all())
      for (const u of users) {
        const rating = db
          .select()
          .from(judgeRatings)
          .all()
          .find((r) => r.itemId === item.id && r.raterId === u.id)!;
        const committed = item.annotationId === idOf("a");
        submitRating(db, {
          raterId: u.id,
          itemId: item.id,
          values: {
            primaryAnswer: committed ? "committed" : "none",
            infoRequest: committed ? "none" : "specific",
            icdCodes: "",
            diagnosisNames: "",
            notes: "",
          },
          version: rating.version,
        });
      }

    const outputs = file(
      "judge.jsonl",
      [
        `{"annotation_id": "${idOf(
          "a",
        )}", "new_judge_output": {"primary_answer": "committed", "info_request": "none", "action": "Diagnose"}}`,
        `{"annotation_id": "${idOf(
          "b",
        )}", "judge_output_raw": "PRIMARY_ANSWER: none\\nINFO_REQUEST: none\\nICD_CODES:\\nDIAGNOSIS_NAMES:"}`,
      ].join("\n"),
    );
    const badOutputs = file("bad-judge.jsonl", `{"annotation_id": "ann_0042", "new_judge_output": {}}\n`);
    const bad = await run(["judge-import-outputs", "--set", "s", "--judge", "gemma", badOutputs]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(`${badOutputs}:1: annotation_id ann_0042 is not a response of this set's sample`);
    const ok = await run(["judge-import-outputs", "--set", "s", "--judge", "gemma", outputs]);
    expect(ok).toMatchObject({ code: 0, out: 'Imported 2 outputs of judge "gemma" into set "s".\n' });

    const out = join(dir, "export");
    expect((await run(["judge-export", "--set", "s", "--out", out])).code).toBe(0);
    for (const f of ["annotator-sheet.csv", "key.csv", "selected.jsonl", "summary.json", "labels.csv"])
      expect(existsSync(join(out, f))).toBe(true);
    expect(readFileSync(join(out, "annotator-sheet.csv"), "utf8")).not.toContain("full_info");
    // A full disk: exit 2 naming it, nothing written (docs/reliability.md, "Atomic files").
    await expectFullDiskRefusal(run, "judge-export", (o) => ["judge-export", "--set", "s", "--out", o], dir, "export");

    const fromSet = JSON.parse((await run(["judge-report", "--set", "s", "--json"])).out);
    const fromFile = JSON.parse((await run(["judge-report", "--labels", join(out, "labels.csv"), "--json"])).out);
    expect(fromFile).toEqual(fromSet);
    expect(fromSet.majority).toEqual({ [idOf("a")]: "DIAGNOSE", [idOf("b")]: "CLARIFY" });
    // gemma: a DIAGNOSE (right), b ABSTAIN (majority CLARIFY): F1 DIAGNOSE 1, CLARIFY 0, ABSTAIN 0 → 1/3.
    expect(fromSet.judges.gemma.macro_f1).toBeCloseTo(1 / 3, 12);
    expect(fromSet.best_judge).toBe("gemma");
  });

  it("judge-report --labels prints the report, or FILE:LINE errors with exit 2", async () => {
    const labels = file(
      "labels.csv",
      [
        "response_id,rater,primary_answer,info_request",
        "r1,a,committed,none",
        "r1,b,committed,none",
        "r1,c,none,specific",
        "r1,judge:j,committed,none",
      ].join("\n"),
    );
    const text = await run(["judge-report", "--labels", labels]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(
      /^Judge validation: 1 responses, 1 with a human majority action, 0 ties \(split votes, no majority\)\./,
    );
    expect(text.out).toContain("Best judge (action macro-F1): j");
    const json = JSON.parse((await run(["judge-report", "--labels", labels, "--json"])).out);
    expect(Object.keys(json)).toEqual([
      "n_responses",
      "majority",
      "ties",
      "too_few_votes",
      "humans",
      "human_macro_f1_mean",
      "human_fleiss_kappa",
      "human_fleiss_n",
      "judges",
      "best_judge",
      "warnings",
    ]);
    expect(Object.keys(json.judges.j)).toEqual([
      "macro_f1",
      "fleiss_kappa_with_judge",
      "n",
      "precision",
      "recall",
      "confusion",
      "tasks",
    ]);
    expect(Object.keys(json.judges.j.tasks.action)).toEqual([
      "n",
      "accuracy",
      "balanced_accuracy",
      "macro_f1",
      "weighted_f1",
      "cohen_kappa",
      "fleiss_kappa_consensus_judge",
      "fleiss_kappa_humans_plus_judge",
      "n_fleiss",
    ]);

    const bad = file("bad.csv", "response_id,rater,primary_answer,info_request\nr1,a,committed,maybe\n");
    const r = await run(["judge-report", "--labels", bad, "--json"]);
    expect(r).toMatchObject({ code: 2, out: "" });
    expect(r.err).toContain(`${bad}:2: info_request "maybe" is not one of specific, generic_only, none`);
    expect((await run(["judge-report"])).err).toMatch(/give either --labels FILE or --set NAME/);
  });
  it("judge-report --labels reports on 200,000 distinct responses (no spread of a data-sized list overflows the stack)", async () => {
    // Before maxOf (app/stats/extremes.ts), `Math.max(0, ...responses)` threw RangeError: Maximum call stack size
    // exceeded on this file.
    const rows = ["response_id,rater,primary_answer,info_request,action"];
    for (let i = 0; i < 200_000; i++) {
      rows.push(`r${i},alice,committed,none,`, `r${i},bruno,${i % 3 ? "committed" : "none"},none,`);
      rows.push(`r${i},judge:gemma,committed,none,diagnose`);
    }
    const path = file("big-labels.csv", rows.join("\n") + "\n");
    const r = await run(["judge-report", "--labels", path]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ {2}alice +/m);
    expect(r.out).toMatch(/^ {2}gemma +/m);
  }, 120_000);
});
