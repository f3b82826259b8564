/**
 * Target (docs/evaluation.md): the runner against a local OpenAI-compatible endpoint that answers every call (model and judge)
 * after a fixed 50 ms, on 1,048 synthetic cases with T in 3..5, sequential strategy, at concurrency 8, 32 and 128.
 *
 * Ideal wall time: each case is a chain of dependent calls (model, judge, model, judge, …; an empty answer skips its
 * judge call), so with 32 slots no schedule beats 50 ms × max(longest chain, ⌈total calls / 32⌉). Target: the
 * measured wall time ≤ 1.25 × that. Also reported: the runner's own CPU time per call (this process only: the
 * endpoint runs in a child process).
 */
import { fork } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { RunnerCase } from "../../app/evaluation/domain/runner-protocol";
import { createOpenAiEndpoint } from "../../app/model-calls/client";
import { loadPrompts, promptHashesOf } from "../../app/evaluation/prompts";
import { DEFAULT_RETRY_POLICY, realRetryDeps } from "../../app/model-calls/retry";
import { runEvaluation } from "../../app/evaluation/runner";
import type { Benchmark, Figures } from "./types";

const CASES = 1048;
/** Wall ÷ ideal is reported at each; the target applies at 32 (≤ 1.25) and at 128 (≤ 1.10). */
const CONCURRENCIES = [8, 32, 128];
const LATENCY_MS = 50;
const JUDGE = "bench-judge";
const MODEL = "bench-model";
const SELF = fileURLToPath(import.meta.url);

/** mulberry32: reproducible synthetic cases. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Sections scripted for the stub (test/support/openai-stub.ts): mostly clarification requests, so chains vary. */
function syntheticCases(): RunnerCase[] {
  const random = prng(7);
  return Array.from({ length: CASES }, (_, i) => {
    const T = 3 + Math.floor(random() * 3);
    const sections = Array.from({ length: T }, (_, k) => {
      const r = random();
      const tag = r < 0.62 ? "clarify" : r < 0.9 ? "diagnose:F32.1" : r < 0.97 ? "abstain" : "empty";
      return `case-b${i} s${k + 1}: synthetic finding ${"lorem ipsum ".repeat(20)}[[${tag}]]`;
    });
    return { sampleId: `b${i}`, sections };
  });
}

async function startEndpoint(): Promise<{ baseURL: string; stop: () => void }> {
  const child = fork(SELF, ["--stub-server"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (m) => resolve((m as { port: number }).port));
    child.once("exit", (code) => reject(new Error(`the benchmark endpoint exited (${code})`)));
  });
  return { baseURL: `http://127.0.0.1:${port}/v1`, stop: () => child.kill() };
}

async function run(ctx: { log: (line: string) => void }): Promise<Figures> {
  const endpoint = await startEndpoint();
  const figures: Figures = {};
  try {
    for (const concurrency of CONCURRENCIES) Object.assign(figures, await runAt(ctx, endpoint.baseURL, concurrency));
  } finally {
    endpoint.stop();
  }
  return figures;
}

async function runAt(ctx: { log: (line: string) => void }, baseURL: string, concurrency: number): Promise<Figures> {
  const cases = syntheticCases();
  const endpoint = { baseURL };
  const out = mkdtempSync(join(tmpdir(), "concord-bench-runner-"));
  const loaded = loadPrompts();
  const endpointOf = (model: string, label: string) =>
    createOpenAiEndpoint({
      baseURL: endpoint.baseURL,
      apiKey: "bench",
      model,
      timeoutMs: 30_000,
      maxTokensParam: "max_tokens",
      label,
    });
  try {
    const cpu = process.cpuUsage();
    const start = performance.now();
    const result = await runEvaluation(
      {
        cases,
        strategies: ["sequential_info_abstention_aware"],
        seeds: [123],
        model: { name: MODEL, key: MODEL, base_url: endpoint.baseURL },
        judge: { name: JUDGE, key: JUDGE, base_url: endpoint.baseURL },
        temperature: 0.7,
        topP: 0.95,
        maxTokens: 512,
        maxTokensParam: "max_tokens",
        concurrency,
        outDir: out,
        limit: null,
        retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 },
        timeoutMs: 30_000,
        inputs: { samples: { path: "synthetic", sha256: "synthetic" }, gold: null },
      },
      {
        modelEndpoint: endpointOf(MODEL, "model"),
        judgeEndpoint: endpointOf(JUDGE, "judge"),
        prompts: loaded.prompts,
        promptHashes: (s) => promptHashesOf(loaded, s),
        version: "bench",
        now: () => performance.now(),
        wallClock: () => new Date(),
        retry: realRetryDeps,
      },
    );
    const wallMs = performance.now() - start;
    const used = process.cpuUsage(cpu);
    if (result.status !== "complete") throw new Error(`the benchmark run did not complete: ${result.message}`);
    // Chains from the records: one model call per step, one judge call per non-empty answer.
    const folder = join(out, readdirSync(out)[0]);
    const chains = readFileSync(join(folder, "trajectories.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const steps = JSON.parse(line).trajectory as { model_output_raw: string }[];
        return steps.length + steps.filter((s) => s.model_output_raw !== "").length;
      });
    const calls = chains.reduce((a, b) => a + b, 0);
    if (calls !== result.calls)
      throw new Error(`counted ${calls} calls in the records but the runner made ${result.calls}`);
    const longest = Math.max(...chains);
    const idealMs = LATENCY_MS * Math.max(longest, Math.ceil(calls / concurrency));
    const ratio = wallMs / idealMs;
    const cpuPerCallMs = (used.user + used.system) / 1000 / calls;
    ctx.log(
      `  concurrency ${concurrency}: ${CASES} cases (T 3..5), ${calls} calls, longest chain ${longest} calls; ideal = ${LATENCY_MS} ms × ` +
        `max(${longest}, ⌈${calls}/${concurrency}⌉) = ${(idealMs / 1000).toFixed(2)} s; measured ${(
          wallMs / 1000
        ).toFixed(2)} s ` +
        `(${ratio.toFixed(3)}×); runner CPU ${((used.user + used.system) / 1e6).toFixed(2)} s = ${cpuPerCallMs.toFixed(
          3,
        )} ms/call`,
    );
    const r3 = (x: number) => Math.round(x * 1000) / 1000;
    const target = concurrency === 128 ? 1.1 : concurrency === 32 ? 1.25 : null;
    const suffix = concurrency === 32 ? "" : ` at concurrency ${concurrency}`;
    return {
      [`runner wall time / ideal${suffix}`]: {
        value: r3(ratio),
        unit: "×",
        target: target === null ? null : `<= ${target}`,
        pass: target === null ? null : ratio <= target,
      },
      [`runner wall time (1,048 cases, concurrency ${concurrency})`]: {
        value: r3(wallMs / 1000),
        unit: "s",
        target: null,
        pass: null,
      },
      [`runner ideal time${suffix}`]: { value: r3(idealMs / 1000), unit: "s", target: null, pass: null },
      [`runner CPU time per call${suffix}`]: {
        value: r3(cpuPerCallMs),
        unit: "ms",
        target: concurrency === 128 ? "<= 0.5" : null,
        pass: concurrency === 128 ? cpuPerCallMs <= 0.5 : null,
      },
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

export const benchmarks: Benchmark[] = [{ name: "runner", run }];

// The endpoint: this file run as a child process answers after LATENCY_MS, so its CPU is not the runner's.
if (process.argv[1] === SELF && process.argv.includes("--stub-server")) {
  const { startOpenAiStub, scriptedHandler } = await import("../../test/support/openai-stub");
  const stub = await startOpenAiStub(scriptedHandler(JUDGE, LATENCY_MS));
  process.send?.({ port: stub.port });
  process.on("disconnect", () => void stub.close().then(() => process.exit(0)));
}
