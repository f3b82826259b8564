/**
 * Target (docs/evaluation.md): the runner against a local OpenAI-compatible endpoint that answers every call (model and judge)
 * after a fixed 50 ms, on 1,048 synthetic cases with T in 3..5, sequential strategy, at concurrency 8, 32 and 128.
 * Measured as a user runs it: the compiled command line (`node build/cli/concord.js run …`, built by `npm run
 * bench`) as its own process, start-up, reading the cases and writing the run folder included.
 *
 * Ideal wall time: each case is a chain of dependent calls (model, judge, model, judge, …; an empty answer skips its
 * judge call), so with 32 slots no schedule beats 50 ms × max(longest chain, ⌈total calls / 32⌉). Targets: the
 * process's wall time from spawn to exit ≤ 1.25 × that at 32 and ≤ 1.10 × at 128, and its CPU time (user + system,
 * GNU time) ≤ 0.3 ms per call at 128. The endpoint runs in another process, so its CPU is not counted.
 */
import { fork, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { RunnerCase } from "../../app/evaluation/domain/runner-protocol";
import { fromRoot } from "../../app/platform/paths.server";
import type { Benchmark, Figures } from "./types";

const CASES = 1048;
/** Wall ÷ ideal is reported at each; the target applies at 32 (≤ 1.25) and at 128 (≤ 1.10). */
const CONCURRENCIES = [8, 32, 128];
const LATENCY_MS = 50;
const JUDGE = "bench-judge";
const MODEL = "bench-model";
const SELF = fileURLToPath(import.meta.url);
const CLI = fromRoot("build", "cli", "concord.js");
const TIME = "/usr/bin/time";

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

/** Runs `concord run` as its own process; wall time from spawn to exit, CPU time (user + system) from GNU time. */
function runCommand(
  args: string[],
): Promise<{ wallMs: number; cpuMs: number | null; code: number | null; stderr: string }> {
  const withTime = existsSync(TIME);
  const argv = [CLI, ...args];
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(
      withTime ? TIME : process.execPath,
      withTime ? ["-f", "CPU %U %S", process.execPath, ...argv] : argv,
      {
        cwd: fromRoot(),
        env: { ...process.env, CONCORD_API_KEY: "bench", CONCORD_JUDGE_API_KEY: "bench", CONCORD_DEMO: "0" },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += String(d)));
    child.on("error", reject);
    child.on("exit", (code) => {
      const wallMs = performance.now() - start;
      const m = /CPU ([\d.]+) ([\d.]+)/.exec(stderr);
      resolve({ wallMs, cpuMs: m ? (Number(m[1]) + Number(m[2])) * 1000 : null, code, stderr });
    });
  });
}

async function runAt(ctx: { log: (line: string) => void }, baseURL: string, concurrency: number): Promise<Figures> {
  const out = mkdtempSync(join(tmpdir(), "concord-bench-runner-"));
  try {
    const samples = join(out, "samples.json");
    writeFileSync(
      samples,
      JSON.stringify(
        syntheticCases().map((c) => ({
          sample_id: c.sampleId,
          sections: c.sections.map((content, k) => ({ order: k + 1, content })),
        })),
      ),
    );
    const runs = join(out, "runs");
    const r = await runCommand([
      "run",
      "--samples",
      samples,
      "--strategy",
      "sequential_info_abstention_aware",
      "--model",
      MODEL,
      "--base-url",
      baseURL,
      "--judge-model",
      JUDGE,
      "--seeds",
      "123",
      "--concurrency",
      String(concurrency),
      "--max-retries",
      "0",
      "--out",
      runs,
    ]);
    if (r.code !== 0) throw new Error(`concord run exited ${r.code}: ${r.stderr.trim().split("\n").at(-1)}`);
    // Chains from the records: one model call per step, one judge call per non-empty answer.
    const folder = join(runs, readdirSync(runs)[0]!);
    const chains = readFileSync(join(folder, "trajectories.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const steps = JSON.parse(line).trajectory as { model_output_raw: string }[];
        return steps.length + steps.filter((s) => s.model_output_raw !== "").length;
      });
    if (chains.length !== CASES) throw new Error(`the run wrote ${chains.length} trajectories, not ${CASES}`);
    const calls = chains.reduce((a, b) => a + b, 0);
    const longest = Math.max(...chains);
    const idealMs = LATENCY_MS * Math.max(longest, Math.ceil(calls / concurrency));
    const wallMs = r.wallMs;
    const ratio = wallMs / idealMs;
    const cpuPerCallMs = r.cpuMs === null ? -1 : r.cpuMs / calls;
    ctx.log(
      `  concurrency ${concurrency}: ${CASES} cases (T 3..5), ${calls} calls, longest chain ${longest} calls; ideal = ${LATENCY_MS} ms × ` +
        `max(${longest}, ⌈${calls}/${concurrency}⌉) = ${(idealMs / 1000).toFixed(2)} s; \`concord run\` process ${(
          wallMs / 1000
        ).toFixed(2)} s from spawn to exit (${ratio.toFixed(3)}×); its CPU ${
          r.cpuMs === null
            ? "not measured (no GNU time)"
            : `${(r.cpuMs / 1000).toFixed(2)} s = ${cpuPerCallMs.toFixed(3)} ms/call`
        }`,
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
        target: concurrency === 128 ? "<= 0.3" : null,
        pass: concurrency === 128 ? r.cpuMs !== null && cpuPerCallMs <= 0.3 : null,
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
