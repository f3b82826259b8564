/**
 * Large evaluations stay fast (docs/evaluation.md, "Scale"): run folders of 1,048 cases × 4 strategies × 5 seeds × 9
 * models (180 runs, 188,640 trajectories) with records of a real run's size (each step's prompt with its section of
 * the note, a paragraph of answer, the conversation's history: test/support/eval-runs.ts, `realistic`), imported by
 * `importRunFolders` as `eval-import` imports them — first one model's 20 runs, then the other eight models' 160 —
 * and after each import the evaluation page, its runs list (filtered, second window), the case list (every
 * trajectory; a failure and a strategy, third window; a model and the seed-disagreement filter; a case-id prefix) and
 * one case page requested from the production build: the HTML's bytes and the server's CPU per request (as
 * scripts/bench/pages.ts measures them).
 *
 * Targets: every page ≤ 100 ms of CPU per request at 180 runs; the case list and the case page at 180 runs within 1.5×
 * of their CPU at 20 runs (their cost does not grow with the runs; a page under 2 ms is compared with 2 ms). The
 * evaluation page's growth is reported, not targeted: its tables have a row per model and strategy (4 at 20 runs, 36
 * at 180) and its runs window fills from 20 rows to 50. The import's time (both modes' metrics included) and the
 * files' size are reported, not targeted.
 * `npm run bench -- --only evaluation-pages`; EVAL_BENCH_CASES=… runs a smaller case count (the shape stays).
 */
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createUser } from "../../app/accounts/users.server";
import { STRATEGIES } from "../../app/evaluation/domain/runner-protocol";
import { casesWindow, runsWindow } from "../../app/evaluation/evaluation-pages.server";
import { importRunFolders } from "../../app/evaluation/evaluations.server";
import { openDatabase } from "../../app/platform/db.server";
import { writeEvalRuns } from "../../test/support/eval-runs";
import { startApp, tempDbPath } from "../../test/support/server";
import { cookieOf, measure, PASSWORD, type PageFigure } from "./pages";
import type { Benchmark, Figures } from "./types";

const CASES = Number(process.env.EVAL_BENCH_CASES ?? 1048);
const MODELS = [
  "llama-3.1-8b",
  "llama-3.1-70b",
  "qwen2.5-7b",
  "qwen2.5-72b",
  "mistral-7b",
  "gemma-2-9b",
  "gemma-2-27b",
  "gpt-4o-mini",
  "gpt-4o",
];
const SEEDS = [1, 2, 3, 4, 5];
const CPU_LIMIT_MS = 100;
const GROWTH_LIMIT = 1.5;

/** The pages whose whole content is bounded by a window (the case list) or one case: their cost must not grow. */
const FLAT: readonly Page[] = [
  "cases_all",
  "cases_failure_paged",
  "cases_model_disagreement",
  "cases_prefix",
  "case_page",
];

const PAGES = [
  "evaluation",
  "runs_list",
  "cases_all",
  "cases_failure_paged",
  "cases_model_disagreement",
  "cases_prefix",
  "case_page",
] as const;
type Page = (typeof PAGES)[number];

function folderBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? folderBytes(p) : statSync(p).size;
  }
  return n;
}

/** The pages' addresses, their cursors read from the windows as the page's links carry them. */
function pageUrls(db: ReturnType<typeof openDatabase>, id: number): Record<Page, string> {
  const base = `/admin/evaluations/${id}`;
  const runs = runsWindow(db, id, new URLSearchParams({ r_q: "" }));
  let params = new URLSearchParams({ c_failure: "wrong_code", c_strategy: "sequential_info_abstention_aware" });
  for (let i = 0; i < 2; i++) {
    const next = casesWindow(db, id, params).next;
    if (next) params = new URLSearchParams({ ...Object.fromEntries(params), c_after: next });
  }
  const caseId = `case-${String(Math.ceil(CASES / 2)).padStart(4, "0")}`;
  return {
    evaluation: base,
    runs_list: runs.next ? `${base}?r_q=${MODELS[0]!.slice(0, 5)}&r_after=${runs.next}` : `${base}?r_q=llama`,
    cases_all: `${base}/cases`,
    cases_failure_paged: `${base}/cases?${params.toString()}`,
    cases_model_disagreement: `${base}/cases?c_model=${MODELS[0]}&c_failure=seed_disagreement`,
    cases_prefix: `${base}/cases?c_q=case-05`,
    case_page: `${base}/cases/${caseId}`,
  };
}

async function measurePages(dbPath: string, urls: Record<Page, string>, cookie: string, log: (l: string) => void) {
  const app = await startApp({ dbPath });
  try {
    const out = {} as Record<Page, PageFigure>;
    for (const p of PAGES) {
      out[p] = await measure(`${app.url}${urls[p]}`, cookie, app.pid);
      log(`    ${p.padEnd(24)} ${out[p].status}  ${(out[p].bytes / 1024).toFixed(1)} KB  ${out[p].cpuMs} ms CPU`);
    }
    return out;
  } finally {
    await app.stop();
  }
}

async function run({ log }: { log: (line: string) => void }): Promise<Figures> {
  const { dir, dbPath } = tempDbPath();
  try {
    let t0 = performance.now();
    const { goldPath, runsDir } = writeEvalRuns(join(dir, "files"), {
      cases: CASES,
      models: MODELS,
      strategies: [...STRATEGIES],
      seeds: SEEDS,
      realistic: true,
    });
    const bytes = folderBytes(runsDir);
    log(
      `  ${MODELS.length * STRATEGIES.length * SEEDS.length} run folders of ${CASES} cases written in ` +
        `${((performance.now() - t0) / 1000).toFixed(1)} s (${(bytes / 2 ** 20).toFixed(0)} MB)`,
    );
    const folders = readdirSync(runsDir).sort();
    const of = (models: string[]) =>
      folders.filter((f) => models.some((m) => f.startsWith(`${m}_`))).map((f) => join(runsDir, f));
    const db = openDatabase(dbPath);
    await createUser(db, { username: "benchadmin", password: PASSWORD, roles: ["admin"], actorId: null });
    const cookie = await cookieOf(db, "benchadmin", "127.0.0.1");
    const importSeconds: number[] = [];
    const byStage: Record<Page, PageFigure>[] = [];
    let id = 0;
    for (const [stage, models] of [
      ["20 runs", MODELS.slice(0, 1)],
      ["180 runs", MODELS.slice(1)],
    ] as const) {
      t0 = performance.now();
      const r = importRunFolders(db, {
        evaluation: "Bench",
        create: id === 0 ? { goldFile: goldPath, studyId: null } : undefined,
        dirs: of([...models]),
      });
      if (r.problems.length > 0) throw new Error(`import refused: ${r.problems.slice(0, 3).join("; ")}`);
      id = r.evaluationId!;
      importSeconds.push((performance.now() - t0) / 1000);
      log(
        `  ${stage}: imported ${r.runs.length} runs, ${r.trajectories} trajectories in ${importSeconds.at(-1)!.toFixed(1)} s`,
      );
      const urls = pageUrls(db, id);
      byStage.push(await measurePages(dbPath, urls, cookie, log));
    }
    db.$client.close();
    const [small, large] = byStage as [Record<Page, PageFigure>, Record<Page, PageFigure>];
    const r1 = (x: number) => Math.round(x * 10) / 10;
    const figures: Figures = {
      "evaluation_pages.import_20_runs_s": { value: r1(importSeconds[0]!), unit: "s", target: null, pass: null },
      "evaluation_pages.import_160_more_runs_s": { value: r1(importSeconds[1]!), unit: "s", target: null, pass: null },
      "evaluation_pages.import_total_s": {
        value: r1(importSeconds[0]! + importSeconds[1]!),
        unit: "s",
        target: null,
        pass: null,
      },
      "evaluation_pages.run_files_mb": { value: Math.round(bytes / 2 ** 20), unit: "MB", target: null, pass: null },
    };
    for (const p of PAGES) {
      const big = large[p];
      figures[`evaluation_pages.${p}_kb`] = {
        value: r1(big.bytes / 1024),
        unit: "KB",
        target: null,
        pass: big.status === 200 ? null : false,
      };
      figures[`evaluation_pages.${p}_cpu_ms`] = {
        value: big.cpuMs ?? NaN,
        unit: "ms",
        target: `<= ${CPU_LIMIT_MS}`,
        pass: big.cpuMs === null ? null : big.status === 200 && big.cpuMs <= CPU_LIMIT_MS,
      };
      const cs = small[p].cpuMs;
      const cl = big.cpuMs;
      const growth = cs === null || cl === null ? null : Math.max(cl, 2) / Math.max(cs, 2);
      figures[`evaluation_pages.${p}_cpu_180_to_20_runs`] = {
        value: growth === null ? NaN : Math.round(growth * 100) / 100,
        unit: "x",
        target: FLAT.includes(p) ? `<= ${GROWTH_LIMIT}` : null,
        pass: growth === null || !FLAT.includes(p) ? null : growth <= GROWTH_LIMIT,
      };
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmarks: Benchmark[] = [{ name: "evaluation-pages", run }];
