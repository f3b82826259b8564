/**
 * `judge-import` of a runs/ folder writes each response row exactly as the Safe-Psych reference's
 * collect_trajectories.py flattens it (docs/safe-psych.md, "Judge validation: flattened rows"): source_file the
 * run-relative path runs/<run>/trajectories.jsonl, and the step fields in the script's order.
 *
 * Expected rows: test/fixtures/judge/collect/make_fixture.py writes the runs/ folder and replays the script's
 * flattening on it → collected.jsonl. Concord keeps a step's other keys (a re-judge's new_judge_output) after the
 * reference's, which the script would drop.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import type { Db } from "../../app/platform/db.server";
import { freshDb } from "../support/db";

const FIXTURE = new URL("../fixtures/judge/collect/", import.meta.url).pathname;
const expected = readFileSync(join(FIXTURE, "collected.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l) as Record<string, unknown>);

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
  return { code: await runCli(argv, io), out, err };
}

const records = () =>
  (db.$client.prepare("select record from judge_responses order by position").all() as { record: string }[]).map(
    (r) => JSON.parse(r.record) as Record<string, unknown>,
  );

describe("judge-import of a runs/ folder", () => {
  it("gives collect_trajectories.py's rows: run-relative source_file, its key order, then a step's other keys", async () => {
    const r = await run(["judge-import", "--set", "collected", join(FIXTURE, "runs")]);
    expect(r.code).toBe(0);
    const rows = records();
    expect(rows).toHaveLength(expected.length);
    rows.forEach((row, i) => {
      const want = expected[i]!;
      const keys = Object.keys(row);
      expect(keys.slice(0, Object.keys(want).length)).toEqual(Object.keys(want));
      for (const [k, v] of Object.entries(want)) expect(row[k]).toEqual(v);
      expect(keys.slice(Object.keys(want).length)).toEqual(i === 0 ? ["new_judge_output"] : []);
    });
    expect(rows[0]!.source_file).toBe("runs/gemma-3-4b_full_info_no_abstention_seed42/trajectories.jsonl");
  });

  it("names a single file's run the same way, also with --run", async () => {
    const file = join(FIXTURE, "runs", "qwen3-8b_sequential_info_neutral_prompting_seed42", "trajectories.jsonl");
    expect((await run(["judge-import", "--set", "one", file])).code).toBe(0);
    expect(records()[0]).toMatchObject({
      source_run_dir: "runs/qwen3-8b_sequential_info_neutral_prompting_seed42",
      source_file: "runs/qwen3-8b_sequential_info_neutral_prompting_seed42/trajectories.jsonl",
    });
    expect((await run(["judge-import", "--set", "two", "--run", "renamed", file])).code).toBe(0);
    expect(records().at(-1)).toMatchObject({
      source_run_name: "renamed",
      source_run_dir: "runs/renamed",
      source_file: "runs/renamed/trajectories.jsonl",
    });
  });
});
