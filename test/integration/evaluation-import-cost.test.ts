/**
 * What an import of run folders reads (docs/evaluation.md, "Scale"): the same statements and the same number of rows
 * whether the evaluation already holds few runs or many, and no statement that walks the evaluation's runs,
 * trajectories or steps; so the import's cost follows the runs it imports, never the evaluation's earlier runs. The
 * metrics, which read every run, are not computed by the import (they are computed once per version when read).
 *
 * Counts, not times: rows and plans are deterministic where a time on a shared machine is not (the bench measures the
 * time: `npm run bench -- --only evaluation-pages`).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { evaluationMetricsOf, importRunFolders } from "../../app/evaluation/evaluations.server";
import { freshDb } from "../support/db";
import { writeEvalRuns } from "../support/eval-runs";
import { tempDirs } from "../support/cli-run";

const tempDir = tempDirs("concord-evalimportcost-");
const STRATEGIES = ["sequential_info_neutral_prompting", "full_info_abstention_aware"];

let db: Db;
let cleanup: () => void;
beforeEach(() => {
  ({ db, cleanup } = freshDb());
});
afterEach(() => cleanup());

function runsOf(models: string[], seeds: number[]) {
  return writeEvalRuns(tempDir(), { cases: 30, models, strategies: STRATEGIES, seeds });
}

function importInto(evaluation: string, files: { goldPath: string; runsDir: string }, create: boolean) {
  const r = importRunFolders(db, {
    evaluation,
    create: create ? { goldFile: files.goldPath, studyId: null } : undefined,
    dirs: [files.runsDir],
  });
  expect(r.problems).toEqual([]);
  return r;
}

/** Every statement run while `work` runs, the rows it handed back, and its query plan. */
function readsOf(work: () => void) {
  const client = db.$client;
  const runs: { sql: string; args: unknown[]; rows: number }[] = [];
  const prepare = client.prepare;
  client.prepare = ((source: string) => {
    const st = prepare.call(client, source);
    for (const m of ["all", "get", "run", "iterate"] as const) {
      const call = (st[m] as (...a: unknown[]) => unknown).bind(st);
      (st as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
        const entry = { sql: source.replace(/\s+/g, " "), args, rows: 0 };
        runs.push(entry);
        const out = call(...args);
        if (m === "all") entry.rows = (out as unknown[]).length;
        else if (m === "get") entry.rows = out === undefined ? 0 : 1;
        else if (m === "iterate")
          return (function* () {
            for (const row of out as Iterable<unknown>) {
              entry.rows++;
              yield row;
            }
          })();
        return out;
      };
    }
    return st;
  }) as typeof client.prepare;
  try {
    work();
  } finally {
    client.prepare = prepare;
  }
  return runs.map((r) => ({
    ...r,
    plan: /^\s*(select|with|update|delete|insert)/i.test(r.sql)
      ? (client.prepare(`EXPLAIN QUERY PLAN ${r.sql}`).all(...r.args) as { detail: string }[]).map((p) => p.detail)
      : [],
  }));
}

describe("an import of run folders into an evaluation", () => {
  it("reads the same rows whether the evaluation holds few runs or many, and walks none of them", () => {
    const added = runsOf(["omega"], [1, 2]);
    // A small evaluation: one model's run; a large one: four models' runs of three seeds (12 times the runs).
    const small = runsOf(["alpha"], [1]);
    importInto("Small", small, true);
    const large = runsOf(["alpha", "beta", "gamma", "delta"], [1, 2, 3]);
    importInto("Large", large, true);
    // The metrics are kept for both before the import, as a page that showed them leaves them.
    for (const name of ["Small", "Large"]) {
      const id = db.$client.prepare("select id from evaluations where name = ?").pluck().get(name) as number;
      evaluationMetricsOf(db, id, "paper");
    }
    const intoSmall = readsOf(() => importInto("Small", added, false));
    const intoLarge = readsOf(() => importInto("Large", added, false));
    const rows = (rs: typeof intoSmall) => rs.reduce((n, r) => n + r.rows, 0);
    expect(intoSmall.length).toBeGreaterThan(10);
    expect(intoLarge.length).toBe(intoSmall.length);
    expect(rows(intoLarge)).toBe(rows(intoSmall));
    const walks = intoLarge.flatMap((r) =>
      r.plan
        .filter((p) => /^SCAN "?(evaluation_runs|evaluation_trajectories|evaluation_steps|t|u|r|s)"?\b/.test(p))
        .filter((p) => !/USING (COVERING )?INDEX|USING INTEGER PRIMARY KEY/.test(p))
        .map((p) => `${p} ← ${r.sql}`),
    );
    expect(walks).toEqual([]);
    // The metrics read after the import are the evaluation's with the imported runs.
    const largeId = db.$client.prepare("select id from evaluations where name = 'Large'").pluck().get() as number;
    const metrics = JSON.stringify(evaluationMetricsOf(db, largeId, "paper").results);
    expect(metrics).toContain("omega");
    expect(metrics).toContain("delta");
  });
});
