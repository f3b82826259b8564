/**
 * Safe-Psych runs in the app (docs/evaluation.md, "Runs in the app"): `eval-import` and `importRunFolders` follow the
 * import contract (all or nothing, FILE:LINE refusals, exit 2), and the evaluation's kept metrics are the numbers
 * `concord metrics --json` prints for the same folders and gold file, in paper mode and in compat mode.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { evaluationMetricsOf, importRunFolders } from "../../app/evaluation/evaluations.server";
import type { Db } from "../../app/platform/db.server";
import { freshDb } from "../support/db";
import { writeEvalRuns } from "../support/eval-runs";
import { cli, tempDirs } from "../support/cli-run";

const tempDir = tempDirs("concord-evalruns-");

const SPEC = {
  cases: 24,
  models: ["alpha", "beta"],
  strategies: ["sequential_info_neutral_prompting", "sequential_info_abstention_aware", "full_info_abstention_aware"],
  seeds: [1, 2, 3],
};

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

/** Every row count of the evaluation tables: what "nothing changed" means here. */
function tableCounts(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of [
    "evaluations",
    "evaluation_imports",
    "evaluation_runs",
    "evaluation_trajectories",
    "evaluation_steps",
    "evaluation_metrics",
    "import_runs",
  ])
    out[t] = db.$client.prepare(`select count(*) from ${t}`).pluck().get() as number;
  return out;
}

describe("eval-import", () => {
  it("imports a folder of run folders and keeps the metrics `metrics --json` prints, in both modes", async () => {
    const dir = tempDir();
    const { goldPath, runsDir } = writeEvalRuns(dir, SPEC);
    const imported = await cli(["eval-import", "--evaluation", "E1", "--gold", goldPath, "--runs", runsDir]);
    expect(imported.err).toBe("");
    expect(imported.code).toBe(0);
    expect(imported.out).toMatch(/18 runs, 432 trajectories\. Imported into "E1"\./);
    const id = db.$client.prepare("select id from evaluations where name = 'E1'").pluck().get() as number;
    for (const mode of ["paper", "reference"] as const) {
      const printed = await cli([
        "metrics",
        "--gold",
        goldPath,
        "--runs",
        runsDir,
        "--json",
        ...(mode === "reference" ? ["--compat", "reference"] : []),
      ]);
      expect(printed.code).toBe(0);
      const cliDoc = JSON.parse(printed.out);
      const kept = evaluationMetricsOf(db, id, mode);
      expect(kept.mode).toBe(mode);
      expect(kept.results).toEqual(cliDoc.results);
      expect(kept.gold).toEqual(cliDoc.gold);
      expect(kept.expert_curve).toEqual(cliDoc.expert_curve);
      if (mode === "reference") expect(kept.reference_scripts).toEqual(cliDoc.reference_scripts);
      // Not a trivially empty report: every model × strategy, with intervals over the three seeds.
      expect(kept.results).toHaveLength(6);
      expect(kept.results[0]!.n_seeds).toBe(mode === "paper" ? 3 : 3);
    }
    const paper = evaluationMetricsOf(db, id, "paper");
    expect(
      paper.results.find((r) => r.strategy === "full_info_abstention_aware")!.metrics.under_abstention!.ci95,
    ).not.toBeNull();
  });

  it("adds runs to an existing evaluation, and refuses the same run twice and nothing changes", async () => {
    const dir = tempDir();
    const { goldPath, runsDir } = writeEvalRuns(dir, { ...SPEC, models: ["alpha"], seeds: [1] });
    const other = writeEvalRuns(tempDir(), { ...SPEC, models: ["beta"], seeds: [1] });
    expect((await cli(["eval-import", "--evaluation", "E", "--gold", goldPath, "--runs", runsDir])).code).toBe(0);
    expect((await cli(["eval-import", "--evaluation", "E", "--runs", other.runsDir])).code).toBe(0);
    const before = tableCounts();
    expect(before.evaluation_runs).toBe(6);
    const again = await cli(["eval-import", "--evaluation", "E", "--runs", runsDir]);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/trajectories\.jsonl: already imported into "E"/);
    expect(again.err).toMatch(/nothing was imported/);
    expect(tableCounts()).toEqual(before);
  });

  it("refuses bad records as FILE:LINE: reason, exit 2, and writes nothing (not even the new evaluation)", async () => {
    const dir = tempDir();
    const { goldPath, runsDir } = writeEvalRuns(dir, { ...SPEC, models: ["alpha"], seeds: [1] });
    const file = join(
      runsDir,
      "alpha_sequential_info_neutral_prompting_judge-j_seed-1_20260101_000000",
      "trajectories.jsonl",
    );
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    const unknown = JSON.parse(lines[1]!);
    unknown.sample_id = "not-a-gold-case";
    writeFileSync(
      file,
      [lines[0], JSON.stringify(unknown), "{not json", lines[0], ...lines.slice(2)].join("\n") + "\n",
    );
    const before = tableCounts();
    const r = await cli(["eval-import", "--evaluation", "E", "--gold", goldPath, "--runs", runsDir]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${file}:2: case "not-a-gold-case" is not in the evaluation's gold labels`);
    expect(r.err).toMatch(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3: not valid JSON`));
    expect(r.err).toContain(`${file}:4: case "case-0001" again (first on line 1)`);
    expect(r.err).not.toMatch(/at .*\.ts:\d+/); // no stack trace
    expect(tableCounts()).toEqual(before);
  });

  it("refuses invalid UTF-8 with its line, and a gold file that is not data_gt.json", async () => {
    const dir = tempDir();
    const { goldPath, runsDir } = writeEvalRuns(dir, {
      ...SPEC,
      models: ["alpha"],
      seeds: [1],
      strategies: ["full_info_abstention_aware"],
    });
    const file = join(runsDir, "alpha_full_info_abstention_aware_judge-j_seed-1_20260101_000000", "trajectories.jsonl");
    appendFileSync(file, Buffer.from([0x7b, 0xff, 0x7d, 0x0a]));
    const r = await cli(["eval-import", "--evaluation", "E", "--gold", goldPath, "--runs", runsDir]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:25: .*UTF-8`));
    const badGold = join(dir, "bad.json");
    writeFileSync(badGold, '{"id": 1}');
    const g = await cli(["eval-import", "--evaluation", "E", "--gold", badGold, "--runs", runsDir]);
    expect(g.code).toBe(2);
    expect(g.err).toContain(`${badGold}: must be one JSON array (data_gt.json)`);
    expect(tableCounts().evaluations).toBe(0);
  });

  it("previews without writing (dry run), as the page does", () => {
    const dir = tempDir();
    const { goldPath, runsDir } = writeEvalRuns(dir, { ...SPEC, models: ["alpha"], seeds: [1, 2] });
    const before = tableCounts();
    const r = importRunFolders(db, {
      evaluation: "E",
      create: { goldFile: goldPath, studyId: null },
      dirs: [runsDir],
      dryRun: true,
    });
    expect(r.problems).toEqual([]);
    expect(r.runs.map((x) => [x.model, x.strategy, x.seed, x.trajectories, x.status])).toContainEqual([
      "alpha",
      "sequential_info_neutral_prompting",
      2,
      24,
      "complete",
    ]);
    expect(tableCounts()).toEqual(before);
  });
});
