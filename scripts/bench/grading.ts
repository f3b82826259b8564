/**
 * Rubric grading at scale (docs/rubric-grading.md, "Scale"): 20,000 judge calls against a local endpoint that
 * answers each after 50 ms, at concurrency 64. Ideal wall time = calls × 50 ms / 64; target ≤ 1.15 × that. Also
 * reported: the grading process's own CPU per call (the endpoint runs in another process), and its peak memory at
 * 2,000 and 20,000 calls, each in a fresh process — the work is read page by page, so the peak must stay flat
 * (target: the 20k peak live heap, measured after full collections, ≤ 1.25 × the 2k one; peak RSS is printed too).
 */
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { Benchmark, Figures } from "./types";

const LATENCY_MS = 50;
const CONCURRENCY = 64;
const CRITERIA = 10;
const SELF = fileURLToPath(import.meta.url);

interface Measured {
  calls: number;
  wallMs: number;
  cpuMs: number;
  peakRssMb: number;
  /** The largest heap after a full collection during the run. */
  peakHeapMb: number;
}

function child<T>(args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const c = fork(SELF, args, {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      execArgv: [...process.execArgv, "--expose-gc"],
    });
    c.once("message", (m) => resolve(m as T));
    c.once("exit", (code) =>
      code === 0 ? undefined : reject(new Error(`the benchmark child ${args[0]} exited (${code})`)),
    );
  });
}

async function startEndpoint(): Promise<{ baseURL: string; stop: () => void }> {
  const c = fork(SELF, ["--stub-server"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const port = await new Promise<number>((resolve, reject) => {
    c.once("message", (m) => resolve((m as { port: number }).port));
    c.once("exit", (code) => reject(new Error(`the benchmark endpoint exited (${code})`)));
  });
  return { baseURL: `http://127.0.0.1:${port}/v1`, stop: () => c.kill() };
}

async function run(ctx: { log: (line: string) => void }): Promise<Figures> {
  const endpoint = await startEndpoint();
  try {
    const small = await child<Measured>(["--grade", "2000", endpoint.baseURL]);
    const large = await child<Measured>(["--grade", "20000", endpoint.baseURL]);
    const figures: Figures = {};
    const r3 = (x: number) => Math.round(x * 1000) / 1000;
    for (const m of [small, large]) {
      const ideal = (m.calls * LATENCY_MS) / CONCURRENCY;
      const ratio = m.wallMs / ideal;
      const k = `${m.calls / 1000}k`;
      ctx.log(
        `  ${m.calls} judge calls at concurrency ${CONCURRENCY}, ${LATENCY_MS} ms each: ideal ${(ideal / 1000).toFixed(2)} s, ` +
          `measured ${(m.wallMs / 1000).toFixed(2)} s (${ratio.toFixed(3)}×); CPU ${(m.cpuMs / m.calls).toFixed(3)} ms/call; ` +
          `peak live heap ${m.peakHeapMb.toFixed(1)} MB, peak RSS ${m.peakRssMb.toFixed(1)} MB`,
      );
      figures[`grading wall time / ideal (${k} calls)`] =
        m.calls === 20000
          ? { value: r3(ratio), unit: "×", target: "<= 1.15", pass: ratio <= 1.15 }
          : { value: r3(ratio), unit: "×", target: null, pass: null };
      figures[`grading CPU per call (${k} calls)`] = {
        value: r3(m.cpuMs / m.calls),
        unit: "ms",
        target: null,
        pass: null,
      };
      figures[`grading peak live heap (${k} calls)`] = {
        value: r3(m.peakHeapMb),
        unit: "MB",
        target: null,
        pass: null,
      };
      figures[`grading peak RSS (${k} calls)`] = { value: r3(m.peakRssMb), unit: "MB", target: null, pass: null };
    }
    const growth = large.peakHeapMb / small.peakHeapMb;
    figures["grading peak live heap 20k / 2k"] = {
      value: r3(growth),
      unit: "×",
      target: "<= 1.25",
      pass: growth <= 1.25,
    };
    return figures;
  } finally {
    endpoint.stop();
  }
}

export const benchmarks: Benchmark[] = [{ name: "grading", run }];

/** One grading run in this (fresh) process: a set of calls/10 conversations × 10 criteria, one stored response each. */
async function gradeChild(calls: number, baseURL: string): Promise<Measured> {
  const { openDatabase, setDb } = await import("../../app/platform/db.server");
  const { importEvalSet, ensureModel, requireGradingSet } = await import("../../app/rubric-grading/sets.server");
  const { gradeSync } = await import("../../app/rubric-grading/grade.server");
  const { loadGraderText } = await import("../../app/rubric-grading/grader-text.server");
  const { createOpenAiResultEndpoint } = await import("../../app/model-calls/client");
  const { createKeepAliveFetch } = await import("../../app/model-calls/keep-alive-fetch.server");
  const { DEFAULT_RETRY_POLICY, realRetryDeps } = await import("../../app/model-calls/retry");
  const { silentProgress } = await import("../../app/model-calls/progress");
  const dir = mkdtempSync(join(tmpdir(), "concord-bench-grading-"));
  try {
    const db = openDatabase(join(dir, "bench.db"));
    setDb(db);
    const conversations = calls / CRITERIA;
    const lines = Array.from({ length: conversations }, (_, k) =>
      JSON.stringify({
        prompt_id: `b${k}`,
        prompt: [{ role: "user", content: `synthetic question ${k} ${"lorem ipsum ".repeat(40)}` }],
        rubrics: Array.from({ length: CRITERIA }, (_, i) => ({
          criterion: `${i % 3 ? "[met] " : ""}criterion ${i} ${"dolor ".repeat(10)}`,
          points: i === 9 ? -4 : 5,
          tags: ["axis:accuracy"],
        })),
        example_tags: ["theme:bench"],
      }),
    );
    importEvalSet(db, { name: "bench", text: lines.join("\n") });
    const set = requireGradingSet(db, "bench");
    const candidate = ensureModel(db, {
      set,
      role: "candidate",
      name: "cand",
      model: "cand",
      baseUrl: baseURL,
      temperature: 0,
      maxTokens: 8192,
      maxTokensParam: "max_tokens",
    });
    const insert = db.$client.prepare(
      "INSERT INTO grading_responses (candidate_id, conversation_id, text, refusal, created_at) VALUES (?, ?, ?, 0, 0)",
    );
    db.$client.transaction(() => {
      for (const row of db.$client.prepare("SELECT id FROM grading_conversations WHERE set_id = ?").all(set.id) as {
        id: number;
      }[])
        insert.run(candidate.id, row.id, `synthetic answer ${"consectetur ".repeat(60)}`);
    })();
    const judge = ensureModel(db, {
      set,
      role: "judge",
      name: "judge",
      model: "judge-bench",
      baseUrl: baseURL,
      temperature: 0,
      maxTokens: 2048,
      maxTokensParam: "max_tokens",
    });
    const endpoint = createOpenAiResultEndpoint({
      baseURL,
      apiKey: "bench",
      model: judge.model,
      timeoutMs: 30_000,
      maxTokensParam: "max_tokens",
      label: "judge",
      fetch: createKeepAliveFetch(),
    });
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    // Live memory: the heap right after a full collection, sampled every second during the run. What the run holds
    // shows here; garbage not yet collected (which V8 lets grow with the allocation rate) does not.
    let peakHeap = 0;
    const sampler = setInterval(() => {
      gc?.();
      peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    }, 1000);
    const cpu = process.cpuUsage();
    const start = performance.now();
    const r = await gradeSync(
      db,
      {
        setId: set.id,
        judge,
        scope: { candidateIds: null, subsetId: null },
        concurrency: CONCURRENCY,
        retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 },
        limit: null,
        retryFailed: false,
      },
      { endpoint, grader: loadGraderText(), retry: realRetryDeps, progress: silentProgress, now: Date.now },
    );
    const wallMs = performance.now() - start;
    const used = process.cpuUsage(cpu);
    clearInterval(sampler);
    if (r.done !== calls) throw new Error(`graded ${r.done} of ${calls} (${r.failures} failures)`);
    db.$client.close();
    return {
      calls,
      wallMs,
      cpuMs: (used.user + used.system) / 1000,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      peakHeapMb: peakHeap / 2 ** 20,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === SELF && process.argv.includes("--stub-server")) {
  const { startGradingStub, scriptedJudge } = await import("../../test/support/rubric-grading-stub");
  const stub = await startGradingStub((call) => ({ ...scriptedJudge(call), delayMs: LATENCY_MS }));
  // The endpoint keeps no call log in the benchmark: 20,000 recorded bodies would be its memory, not the runner's.
  setInterval(() => (stub.calls.length = 0), 1000);
  process.send?.({ port: Number(new URL(stub.baseURL).port) });
  process.on("disconnect", () => void stub.close().then(() => process.exit(0)));
}
if (process.argv[1] === SELF && process.argv.includes("--grade")) {
  const i = process.argv.indexOf("--grade");
  const m = await gradeChild(Number(process.argv[i + 1]), process.argv[i + 2]);
  process.send?.(m);
  process.disconnect?.();
}
