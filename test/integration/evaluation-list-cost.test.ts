/**
 * What the evaluation's list pages and case page read (docs/evaluation.md, "Scale"): no statement of theirs counts,
 * groups or walks the evaluation's trajectories or steps, so their cost does not grow with the runs. The case list's
 * count comes from the counts kept at import (`evaluation_case_counts`), or, with a case-id prefix, from at most
 * CASE_COUNT_CAP rows; the kept counts equal a count over the visible trajectories after every import.
 *
 * Plans, not times: a query plan is deterministic where a time on a shared machine is not (the bench measures the
 * time: `npm run bench -- --only evaluation-pages`).
 */
import type { LoaderFunctionArgs } from "@remix-run/node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { loader as evalLoader } from "../../app/routes/admin.evaluations.$evaluationId._index";
import { loader as casesLoader } from "../../app/routes/admin.evaluations.$evaluationId.cases._index";
import { loader as caseLoader } from "../../app/routes/admin.evaluations.$evaluationId.cases.$sampleId";
import { casesWindow, CASE_COUNT_CAP } from "../../app/evaluation/evaluation-pages.server";
import { importRunFolders } from "../../app/evaluation/evaluations.server";
import { FAILURE_FILTERS } from "../../app/evaluation/domain/failures";
import { freshDb, makeUser } from "../support/db";
import { signedIn } from "../support/route-calls";
import { writeEvalRuns } from "../support/eval-runs";
import { tempDirs } from "../support/cli-run";

const tempDir = tempDirs("concord-evalcost-");
const STRATEGIES = ["sequential_info_neutral_prompting", "full_info_abstention_aware"];

let db: Db;
let cleanup: () => void;
beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  await makeUser(db, "admin", ["admin"]);
});
afterEach(() => cleanup());

/** Every statement run while `load` runs, with its query plan (as test/integration/list-windows.test.ts does). */
async function plansOf(load: () => Promise<unknown>) {
  const client = db.$client;
  const runs: { sql: string; args: unknown[] }[] = [];
  const prepare = client.prepare;
  client.prepare = ((source: string) => {
    const st = prepare.call(client, source);
    for (const m of ["all", "get", "run", "iterate"] as const) {
      const call = (st[m] as (...a: unknown[]) => unknown).bind(st);
      (st as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
        runs.push({ sql: source, args });
        return call(...args);
      };
    }
    return st;
  }) as typeof client.prepare;
  try {
    await load();
  } finally {
    client.prepare = prepare;
  }
  return runs.map((r) => ({
    sql: r.sql.replace(/\s+/g, " "),
    plan: (client.prepare(`EXPLAIN QUERY PLAN ${r.sql}`).all(...r.args) as { detail: string }[]).map((p) => p.detail),
  }));
}

/**
 * The statements that grow with the runs: a scan of the trajectories or steps, or a count, sum or grouping over
 * them that no limit bounds (a window reads its 51 rows by index; a capped count reads at most its cap).
 */
function growing(plans: { sql: string; plan: string[] }[]) {
  const out: string[] = [];
  for (const { sql, plan } of plans) {
    const big = /\b(evaluation_trajectories|evaluation_steps)\b/.test(sql);
    if (!big) continue;
    for (const step of plan)
      if (/^SCAN "?(evaluation_trajectories|evaluation_steps|t|u)"?\b/.test(step) && !/COVERING INDEX/.test(step))
        out.push(`${step} ← ${sql}`);
    const aggregates = /\b(count|sum)\(|group by/i.test(sql);
    if (aggregates && !/\blimit\b/i.test(sql)) out.push(`unbounded count ← ${sql}`);
  }
  return out;
}

async function get<T>(loader: (a: LoaderFunctionArgs) => Promise<T>, path: string, params: Record<string, string>) {
  const who = await signedIn(db, "admin");
  const request = new Request(`http://concord.test${path}`, { headers: who.post(path, {}).headers });
  return loader({ request, params, context: {} });
}

function importRuns(models: string[], seeds: number[], create: boolean) {
  const root = tempDir();
  const { goldPath, runsDir } = writeEvalRuns(root, { cases: 40, models, strategies: STRATEGIES, seeds });
  const r = importRunFolders(db, {
    evaluation: "E",
    create: create ? { goldFile: goldPath, studyId: null } : undefined,
    dirs: [runsDir],
  });
  expect(r.problems).toEqual([]);
  return r.evaluationId!;
}

/** The count over the visible trajectories that the kept counts replace, for a check of their values. */
function countedTotal(evaluationId: number, where: string, args: unknown[]): number {
  return db.$client
    .prepare(
      `select count(*) from evaluation_trajectories t join visible_evaluation_runs r on r.id = t.run_id
       where t.evaluation_id = ? ${where}`,
    )
    .pluck()
    .get(evaluationId, ...args) as number;
}

describe("the evaluation's list pages", () => {
  it("read no count, sum or scan over the trajectories: the case list's count is kept at import", async () => {
    const evaluationId = importRuns(["alpha", "beta"], [1, 2, 3], true);
    const id = String(evaluationId);
    const base = `/admin/evaluations/${id}`;
    const plans = await plansOf(async () => {
      await get(evalLoader, base, { evaluationId: id });
      for (const failure of ["", ...FAILURE_FILTERS])
        await get(casesLoader, `${base}/cases?c_failure=${failure}&c_model=alpha&c_strategy=${STRATEGIES[0]}`, {
          evaluationId: id,
        });
      await get(casesLoader, `${base}/cases?c_failure=wrong_code`, { evaluationId: id });
      await get(casesLoader, `${base}/cases?c_q=case-00`, { evaluationId: id });
      await get(caseLoader, `${base}/cases/case-0007`, { evaluationId: id, sampleId: "case-0007" });
    });
    expect(plans.length).toBeGreaterThan(10);
    expect(growing(plans)).toEqual([]);
    expect(plans.some((p) => p.sql.includes("evaluation_case_counts"))).toBe(true);
  });

  it("keeps counts equal to a count over the visible trajectories, after a first and a later import", async () => {
    const evaluationId = importRuns(["alpha"], [1, 2], true);
    importRuns(["alpha"], [3], false); // a third seed: the disagreement flags of alpha's trajectories change
    importRuns(["beta"], [1, 2], false);
    const flags: Record<string, string> = {
      premature_diagnosis: "and t.premature_diagnosis = 1",
      premature_abstention: "and t.premature_abstention = 1",
      over_abstention: "and t.over_abstention = 1",
      wrong_code: "and t.wrong_code = 1",
      seed_disagreement: `and t.excluded is null and exists (select 1 from evaluation_trajectories u
        where u.evaluation_id = t.evaluation_id and u.sample_id = t.sample_id and u.model = t.model
        and u.strategy = t.strategy and u.excluded is null and u.outcome <> t.outcome)`,
    };
    let nonZero = 0;
    for (const failure of ["", ...FAILURE_FILTERS])
      for (const model of ["", "alpha", "beta"])
        for (const strategy of ["", ...STRATEGIES]) {
          const params = new URLSearchParams({ c_failure: failure, c_model: model, c_strategy: strategy });
          const w = casesWindow(db, evaluationId, params);
          const expected = countedTotal(
            evaluationId,
            `${flags[failure] ?? ""} ${model ? "and t.model = ?" : ""} ${strategy ? "and t.strategy = ?" : ""}`,
            [model, strategy].filter(Boolean),
          );
          expect({ failure, model, strategy, total: w.total }).toEqual({ failure, model, strategy, total: expected });
          if (expected > 0) nonZero++;
          // The window's rows carry the flag they were filtered by.
          if (failure === "seed_disagreement") for (const r of w.rows) expect(r.seedDisagreement).toBe(1);
        }
    expect(nonZero).toBeGreaterThan(40);
  });

  it("counts a case-id prefix up to its cap and says when more match", () => {
    const evaluationId = importRuns(["alpha", "beta", "gamma"], [1, 2, 3, 4, 5], true);
    const all = casesWindow(db, evaluationId, new URLSearchParams({ c_q: "case-" }));
    expect(countedTotal(evaluationId, "", [])).toBeGreaterThan(CASE_COUNT_CAP);
    expect(all.total).toBe(CASE_COUNT_CAP);
    expect(all.totalCapped).toBe(true);
    const one = casesWindow(db, evaluationId, new URLSearchParams({ c_q: "case-0007" }));
    expect(one.total).toBe(3 * 2 * 5);
    expect(one.totalCapped).toBeUndefined();
  });
});
