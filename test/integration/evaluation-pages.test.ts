/**
 * The evaluation pages (docs/evaluation.md, "Runs in the app", "A case, step by step"): the numbers the page shows
 * are those `concord metrics` prints, the failure filters pick exactly the trajectories whose records show the
 * failure, every list is a window, the page's import refuses paths outside the runs folder and changes nothing, and
 * only admins reach any of it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { LoaderFunctionArgs } from "@remix-run/node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { loader as listLoader, action as listAction } from "../../app/routes/admin.evaluations._index";
import { loader as evalLoader } from "../../app/routes/admin.evaluations.$evaluationId._index";
import { loader as casesLoader } from "../../app/routes/admin.evaluations.$evaluationId.cases._index";
import { loader as caseLoader } from "../../app/routes/admin.evaluations.$evaluationId.cases.$sampleId";
import { loader as fileLoader } from "../../app/routes/admin.evaluations.$evaluationId.files.$file";
import { freshDb, makeUser } from "../support/db";
import { signedIn } from "../support/route-calls";
import { writeEvalRuns } from "../support/eval-runs";
import { cli, tempDirs } from "../support/cli-run";
import { formatMetric } from "../../app/evaluation/domain/metrics-report";

const tempDir = tempDirs("concord-evalpages-");

const STRATEGIES = [
  "sequential_info_neutral_prompting",
  "sequential_info_abstention_aware",
  "full_info_abstention_aware",
];

let db: Db;
let cleanup: () => void;
let root: string;
let goldPath: string;
let runsDir: string;
let evaluationId: number;
beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  await makeUser(db, "admin", ["admin"]);
  await makeUser(db, "ann", ["annotator"]);
  await makeUser(db, "rat", ["rater", "adjudicator"]);
  root = tempDir();
  ({ goldPath, runsDir } = writeEvalRuns(root, {
    cases: 120,
    models: ["alpha", "beta"],
    strategies: STRATEGIES,
    seeds: [1, 2, 3],
  }));
  const r = await cli(["eval-import", "--evaluation", "E", "--gold", goldPath, "--runs", runsDir]);
  expect(r.code, r.err).toBe(0);
  evaluationId = db.$client.prepare("select id from evaluations where name = 'E'").pluck().get() as number;
  process.env.CONCORD_RUNS_DIR = root;
});
afterEach(() => {
  delete process.env.CONCORD_RUNS_DIR;
  cleanup();
});

async function get<T>(
  username: string,
  loader: (a: LoaderFunctionArgs) => Promise<T>,
  path: string,
  params: Record<string, string> = {},
) {
  const who = await signedIn(db, username);
  const request = new Request(`http://concord.test${path}`, { headers: who.post(path, {}).headers });
  return loader({ request, params, context: {} });
}

describe("the evaluation page", () => {
  it("shows the numbers `metrics` prints, in paper and compat mode", async () => {
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
      const doc = JSON.parse(printed.out);
      const page = await get(
        "admin",
        evalLoader,
        `/admin/evaluations/${evaluationId}${mode === "reference" ? "?mode=reference" : ""}`,
        {
          evaluationId: String(evaluationId),
        },
      );
      expect(page.mode).toBe(mode);
      const byKey = new Map(
        doc.results.map((r: { model: string; strategy: string }) => [`${r.model} ${r.strategy}`, r]),
      );
      const abstention = page.tables.find((t) => t.id === "abstention")!;
      const accuracy = page.tables.find((t) => t.id === "accuracy")!;
      const timing = page.tables.find((t) => t.id === "timing")!;
      const clar = page.tables.find((t) => t.id === "clarification")!;
      expect(abstention.rows).toHaveLength(6);
      expect(timing.rows).toHaveLength(4); // sequential strategies only
      for (const row of abstention.rows) {
        const r = byKey.get(`${row.model} ${row.strategy}`) as {
          n_seeds: number;
          metrics: Record<string, never>;
        } & Record<string, never>;
        expect(row.cells).toEqual([r.metrics.under_abstention, r.metrics.over_abstention]);
        expect(row.texts[0]).toBe(formatMetric(r.metrics.under_abstention, mode));
      }
      for (const row of accuracy.rows) {
        const r = byKey.get(`${row.model} ${row.strategy}`) as { metrics: { accuracy: Record<string, unknown> } };
        expect(row.cells).toEqual([
          r.metrics.accuracy.diagnosis,
          r.metrics.accuracy.category,
          r.metrics.accuracy.group,
        ]);
      }
      for (const row of timing.rows) {
        const r = byKey.get(`${row.model} ${row.strategy}`) as { metrics: { timing: Record<string, unknown> } };
        expect(row.cells).toEqual([
          r.metrics.timing.premature,
          r.metrics.timing.on_time,
          r.metrics.timing.late,
          r.metrics.timing.never,
        ]);
      }
      for (const row of clar.rows) {
        const r = byKey.get(`${row.model} ${row.strategy}`) as { metrics: { stage1_clarification_rate: unknown } };
        expect(row.cells).toEqual([r.metrics.stage1_clarification_rate]);
      }
      if (mode === "paper") {
        // Intervals over the three seeds, as the paper's tables give them.
        expect(abstention.rows[0]!.cells[0]!.n).toBe(3);
        expect(abstention.rows[0]!.cells[0]!.ci95).not.toBeNull();
        expect(abstention.rows[0]!.texts[0]).toMatch(/% ± .* \[.*–.*\]$/);
      }
    }
  });

  it("serves each table as formula-safe CSV and its chart as SVG, through the shared download", async () => {
    const res = (await get("admin", fileLoader, "/x", {
      evaluationId: String(evaluationId),
      file: "abstention-paper.csv",
    })) as Response;
    expect(res.headers.get("Content-Disposition")).toBe('attachment; filename="abstention-paper.csv"');
    const csv = await res.text();
    const lines = csv.trim().split("\r\n");
    expect(lines[0]).toBe(
      "model,strategy,seeds,under_abstention_mean,under_abstention_sd,under_abstention_ci95_low,under_abstention_ci95_high,under_abstention_n,over_abstention_mean,over_abstention_sd,over_abstention_ci95_low,over_abstention_ci95_high,over_abstention_n",
    );
    expect(lines).toHaveLength(7);
    // A negative interval bound is a number a spreadsheet would read as a formula: written safe, not bare.
    expect(csv).not.toMatch(/(^|,)[=+@-]\d/m);
    const svg = (await get("admin", fileLoader, "/x", {
      evaluationId: String(evaluationId),
      file: "timing-reference.svg",
    })) as Response;
    expect(svg.headers.get("Content-Type")).toBe("image/svg+xml");
    expect(await svg.text()).toMatch(/^<svg/);
    await expect(
      get("admin", fileLoader, "/x", { evaluationId: String(evaluationId), file: "../etc.csv" }),
    ).rejects.toMatchObject({ status: 404 });
  });

  it("lists runs in windows of 50 with their status, calls, failures and time", async () => {
    const page = await get("admin", evalLoader, `/admin/evaluations/${evaluationId}`, {
      evaluationId: String(evaluationId),
    });
    expect(page.runs.total).toBe(18);
    expect(page.runs.rows[0]).toMatchObject({ model: "alpha", status: "complete", trajectories: 120 });
    expect(page.runs.rows[0]!.seconds).toBeCloseTo(12.5 + page.runs.rows[0]!.seed! / 100, 9);
    expect(page.runs.rows[0]!.calls).toBeGreaterThanOrEqual(120);
  });
});

describe("cases and failures", () => {
  /** Every trajectory of the run folders, as the records say. */
  function records() {
    const out: {
      model: string;
      strategy: string;
      seed: number;
      id: string;
      steps: { judge_action: string | null; model_output_raw: string }[];
    }[] = [];
    for (const m of ["alpha", "beta"])
      for (const s of STRATEGIES)
        for (const seed of [1, 2, 3]) {
          const file = join(runsDir, `${m}_${s}_judge-j_seed-${seed}_20260101_000000`, "trajectories.jsonl");
          for (const line of readFileSync(file, "utf8").trim().split("\n")) {
            const r = JSON.parse(line);
            out.push({ model: m, strategy: s, seed, id: r.sample_id, steps: r.trajectory });
          }
        }
    return out;
  }
  async function all(query: string) {
    const rows: { sampleId: string; model: string; strategy: string; seed: number | null }[] = [];
    let url = `/admin/evaluations/${evaluationId}/cases?${query}`;
    for (;;) {
      const page = await get("admin", casesLoader, url, { evaluationId: String(evaluationId) });
      expect(page.cases.rows.length).toBeLessThanOrEqual(50);
      rows.push(...page.cases.rows);
      if (!page.cases.next) return { rows, total: page.cases.total };
      url = `/admin/evaluations/${evaluationId}/cases?${query}&c_after=${page.cases.next}`;
    }
  }
  const key = (r: { sampleId?: string; id?: string; model: string; strategy: string; seed: number | null }) =>
    `${r.sampleId ?? r.id} ${r.model} ${r.strategy} ${r.seed}`;

  it("pages through every trajectory, and a filter keeps exactly the failures of that kind", async () => {
    const everything = await all("");
    expect(everything.total).toBe(120 * 18);
    expect(everything.rows).toHaveLength(120 * 18);
    const gold = new Map<
      string,
      { diagnosis_sufficiency: string; earliest_sufficient_section: string; num_sections_in_input: number }
    >(JSON.parse(readFileSync(goldPath, "utf8")).map((g: { id: string }) => [g.id, g]));
    const counted = (steps: { judge_action: string | null; model_output_raw: string }[]) =>
      steps.every((s) => s.model_output_raw !== "" && s.judge_action !== null && s.judge_action !== "");
    const firstDiagnosis = (steps: { judge_action: string | null }[]) =>
      steps.findIndex((s) => s.judge_action === "Diagnose") + 1 || null;
    const expected = {
      over_abstention: records().filter(
        (r) => counted(r.steps) && gold.get(r.id)!.diagnosis_sufficiency === "1" && firstDiagnosis(r.steps) === null,
      ),
      premature_diagnosis: records().filter((r) => {
        const g = gold.get(r.id)!;
        const tau = g.diagnosis_sufficiency === "1" ? Number(g.earliest_sufficient_section) : g.num_sections_in_input;
        const d = firstDiagnosis(r.steps);
        return counted(r.steps) && d !== null && d < tau;
      }),
    };
    for (const [filter, want] of Object.entries(expected)) {
      const got = await all(`c_failure=${filter}`);
      expect(want.length, filter).toBeGreaterThan(10);
      expect(got.total, filter).toBe(want.length);
      expect(new Set(got.rows.map(key)), filter).toEqual(new Set(want.map((r) => key({ ...r, seed: r.seed }))));
    }
    const beta = await all("c_failure=wrong_code&c_model=beta&c_strategy=full_info_abstention_aware");
    expect(beta.rows.length).toBeGreaterThan(0);
    expect(beta.rows.every((r) => r.model === "beta" && r.strategy === "full_info_abstention_aware")).toBe(true);
    const disagreement = await all("c_failure=seed_disagreement");
    expect(disagreement.total).toBeGreaterThan(0);
    // Each listed trajectory has another seed of its model and strategy that ended the case otherwise.
    const outcomes = new Map<string, Set<string>>();
    for (const r of db.$client
      .prepare("select sample_id, model, strategy, outcome from evaluation_trajectories where excluded is null")
      .all() as { sample_id: string; model: string; strategy: string; outcome: string }[]) {
      const k = `${r.sample_id} ${r.model} ${r.strategy}`;
      outcomes.set(k, (outcomes.get(k) ?? new Set()).add(r.outcome));
    }
    for (const r of disagreement.rows)
      expect(outcomes.get(`${r.sampleId} ${r.model} ${r.strategy}`)!.size).toBeGreaterThan(1);
  });

  it("shows one case step by step: expert actions, gold, and the steps of the runs side by side", async () => {
    const path = `/admin/evaluations/${evaluationId}/cases/case-0002`;
    const page = await get("admin", caseLoader, path, { evaluationId: String(evaluationId), sampleId: "case-0002" });
    const gold = JSON.parse(readFileSync(goldPath, "utf8"))[1];
    expect(page.view.gold.sections).toBe(gold.num_sections_in_input);
    expect(page.view.expertActions).toHaveLength(gold.num_sections_in_input);
    expect(page.view.expertActions.at(-1)).toBe(gold.diagnosis_sufficiency === "1" ? "Diagnose" : "Abstain");
    expect(page.view.strategy).toBe("sequential_info_abstention_aware");
    expect(page.view.shown.map((t) => t.model)).toEqual(["alpha", "beta"]);
    expect(page.view.available).toHaveLength(6); // 2 models × 3 seeds of this strategy
    const record = records().find(
      (r) =>
        r.id === "case-0002" && r.model === "beta" && r.strategy === "sequential_info_abstention_aware" && r.seed === 1,
    )!;
    const beta = page.view.shown[1]!;
    expect(beta.steps.map((s) => s.answer)).toEqual(record.steps.map((s) => s.model_output_raw));
    expect(beta.steps.map((s) => s.action)).toEqual(record.steps.map((s) => s.judge_action ?? ""));
    // Three seeds of one model side by side, by trajectory id.
    const ids = page.view.available.filter((a) => a.model === "alpha").map((a) => a.id);
    const seeds = await get("admin", caseLoader, `${path}?${ids.map((i) => `t=${i}`).join("&")}`, {
      evaluationId: String(evaluationId),
      sampleId: "case-0002",
    });
    expect(seeds.view.shown.map((t) => [t.model, t.seed])).toEqual([
      ["alpha", 1],
      ["alpha", 2],
      ["alpha", 3],
    ]);
    await expect(
      get("admin", caseLoader, path, { evaluationId: String(evaluationId), sampleId: "nope" }),
    ).rejects.toMatchObject({ status: 404 });
  });
});

describe("the page's import and the role guard", () => {
  it("previews and refuses on the page as on the command line; a path outside the runs folder changes nothing", async () => {
    const second = writeEvalRuns(join(root, "second"), {
      cases: 120,
      models: ["gamma"],
      strategies: ["full_info_abstention_aware"],
      seeds: [1],
    });
    void second;
    const admin = await signedIn(db, "admin");
    const count = () => db.$client.prepare("select count(*) from evaluation_trajectories").pluck().get() as number;
    const before = count();
    const preview = (await listAction({
      request: admin.post("/admin/evaluations", {
        intent: "preview",
        name: "F",
        gold: "data_gt.json",
        study: "",
        runs: "second/runs",
      }),
      params: {},
      context: {},
    })) as { problems: string[]; runs: unknown[]; dryRun: boolean };
    expect(preview.problems).toEqual([]);
    expect(preview.runs).toHaveLength(1);
    expect(count()).toBe(before);
    const outside = (await listAction({
      request: admin.post("/admin/evaluations", {
        intent: "import",
        name: "F",
        gold: "data_gt.json",
        study: "",
        runs: "../",
      }),
      params: {},
      context: {},
    })) as { error: string };
    expect(outside.error).toMatch(/not under the runs folder/);
    const refused = (await listAction({
      request: admin.post("/admin/evaluations", {
        intent: "import",
        name: "F",
        gold: "runs/alpha_full_info_abstention_aware_judge-j_seed-1_20260101_000000/trajectories.jsonl",
        study: "",
        runs: "second/runs",
      }),
      params: {},
      context: {},
    })) as { problems: string[] };
    expect(refused.problems[0]).toMatch(/trajectories\.jsonl: not valid JSON/);
    expect(count()).toBe(before);
    const done = (await listAction({
      request: admin.post("/admin/evaluations", {
        intent: "import",
        name: "F",
        gold: "data_gt.json",
        study: "",
        runs: "second/runs",
      }),
      params: {},
      context: {},
    })) as Response;
    expect(done.status).toBe(302);
    expect(count()).toBe(before + 120);
  });

  it("answers 403 to annotators, raters and adjudicators on every page, file and action", async () => {
    const p = { evaluationId: String(evaluationId), sampleId: "case-0001", file: "abstention-paper.csv" };
    for (const who of ["ann", "rat"]) {
      for (const [loader, path] of [
        [listLoader, "/admin/evaluations"],
        [evalLoader, `/admin/evaluations/${evaluationId}`],
        [casesLoader, `/admin/evaluations/${evaluationId}/cases`],
        [caseLoader, `/admin/evaluations/${evaluationId}/cases/case-0001`],
        [fileLoader, `/admin/evaluations/${evaluationId}/files/abstention-paper.csv`],
      ] as const) {
        await expect(
          get(who, loader as (a: LoaderFunctionArgs) => Promise<unknown>, path, p),
          `${who} ${path}`,
        ).rejects.toMatchObject({ status: 403 });
      }
      const s = await signedIn(db, who);
      await expect(
        listAction({
          request: s.post("/admin/evaluations", {
            intent: "import",
            name: "X",
            gold: "data_gt.json",
            study: "",
            runs: "runs",
          }),
          params: {},
          context: {},
        }),
      ).rejects.toMatchObject({ status: 403 });
    }
  });
});
