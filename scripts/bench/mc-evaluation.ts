/**
 * The multiple-choice engine at MentalBench's size: 25,000 items (and 2,500 for comparison) against a local
 * OpenAI-compatible endpoint that answers every call after 50 ms, at concurrency 64.
 *
 * Ideal wall time: one call per item, so no schedule beats 50 ms × ⌈items / 64⌉. Target: measured ≤ 1.15 × ideal.
 * Memory: answers are streamed to disk, so the engine's working memory must not grow with the number of items. The
 * figure is the live heap halfway through the run (after a full collection) above the live heap just before it
 * (items already loaded: they are the input, not the engine's state); target: the 25k run's at most 16 MB above the
 * 2.5k run's (keeping every record in memory would add about 3 KB × 11,250 ≈ 33 MB by halfway). Also reported:
 * peak RSS and the peak heap including uncollected garbage, sampled every 20 ms, which follow V8's collection
 * policy under a high allocation rate rather than what the engine holds.
 * The endpoint runs in a child process, so its CPU is not the engine's.
 */
import { fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { fileURLToPath } from "node:url";
import { PyRandom } from "../../app/python-compat/random";
import type { MentalBenchItem } from "../../app/mc-evaluation/domain/items";
import { loadMcPrompts, mcPromptHashesOf } from "../../app/mc-evaluation/prompt-files";
import { MC_RESPONSES, runMcEvaluation } from "../../app/mc-evaluation/run";
import { createOpenAiEndpoint } from "../../app/model-calls/client";
import { DEFAULT_RETRY_POLICY, realRetryDeps } from "../../app/model-calls/retry";
import type { Benchmark, Figures } from "./types";

const CONCURRENCY = 64;
const LATENCY_MS = 50;
const SIZES = [2_500, 25_000] as const;
const MODEL = "bench-mc-model";
const SELF = fileURLToPath(import.meta.url);
const TYPES = ["I", "II", "III", "IV"] as const;

function syntheticItems(n: number): MentalBenchItem[] {
  const rng = new PyRandom(17);
  const diseases = ["MDD", "BP2", "GAD", "PDD", "PTSD", "ADHD", "SCZ", "OCD"];
  const options = ["Major Depressive Disorder", "Bipolar II Disorder", "Generalized Anxiety Disorder", "PTSD"];
  return Array.from({ length: n }, (_, i) => {
    const type = TYPES[rng.randbelow(4)]!;
    return {
      kind: "mentalbench",
      id: `b${i}`,
      question: `Case ${i}: ${"I have felt low and restless for weeks, sleeping badly and losing interest. ".repeat(
        3,
      )}`,
      optionsText: options.map((o, k) => `${"ABCD"[k]}. ${o}`).join("\n"),
      options,
      answer: type === "III" ? ["A", "B"] : ["A"],
      answerText: "A. Major Depressive Disorder",
      type,
      disease: diseases[rng.randbelow(diseases.length)]!,
      cluster: null,
    };
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

interface Measured {
  wallMs: number;
  idealMs: number;
  heapGrowthMb: number;
  retainedMb: number;
  liveMidRunMb: number;
  peakRssMb: number;
  cpuPerItemMs: number;
}

/** A full garbage collection, so that heap figures count live objects rather than garbage awaiting collection. */
const collect: () => void = (() => {
  v8.setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
})();

async function measure(n: number, baseURL: string, log: (line: string) => void): Promise<Measured> {
  const items = syntheticItems(n);
  const out = mkdtempSync(join(tmpdir(), "concord-bench-mc-"));
  const prompts = loadMcPrompts();
  collect();
  const heapBefore = process.memoryUsage().heapUsed;
  const cpu = process.cpuUsage();
  let liveMidRun = 0;
  let sampled = false;
  // Halfway through, a full collection measures what the engine really holds while it runs (live objects only).
  const progress = {
    start() {},
    finish() {},
    update(state: { finished: number }) {
      if (!sampled && state.finished >= n / 2) {
        sampled = true;
        collect();
        liveMidRun = process.memoryUsage().heapUsed - heapBefore;
      }
    },
  };
  let peakHeap = heapBefore;
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakHeap = Math.max(peakHeap, m.heapUsed);
    peakRss = Math.max(peakRss, m.rss);
  }, 20);
  try {
    const start = performance.now();
    const result = await runMcEvaluation(
      {
        items,
        itemsFormat: "mentalbench",
        inputs: { path: "synthetic", sha256: `synthetic-${n}` },
        model: { name: MODEL, key: MODEL, base_url: baseURL },
        seed: 0,
        temperature: 0,
        topP: null,
        maxTokens: 300,
        maxTokensParam: "max_tokens",
        style: "paper",
        fewShot: 0,
        fewShotFraction: 0.1,
        concurrency: CONCURRENCY,
        outDir: out,
        retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 },
        timeoutMs: 30_000,
      },
      {
        endpoint: createOpenAiEndpoint({
          baseURL,
          apiKey: "bench",
          model: MODEL,
          timeoutMs: 30_000,
          maxTokensParam: "max_tokens",
          label: "model",
        }),
        texts: prompts.texts,
        promptHashes: mcPromptHashesOf(prompts, "mentalbench", "paper"),
        version: "bench",
        now: () => performance.now(),
        wallClock: () => new Date(),
        retry: realRetryDeps,
        progress,
      },
    );
    const wallMs = performance.now() - start;
    const used = process.cpuUsage(cpu);
    collect();
    const retained = process.memoryUsage().heapUsed - heapBefore;
    if (result.status !== "complete") throw new Error(`the benchmark run did not complete: ${result.message}`);
    const lines = readFileSync(join(result.dir, MC_RESPONSES), "utf8").split("\n").filter(Boolean).length;
    if (lines !== n) throw new Error(`${lines} records for ${n} items`);
    const idealMs = LATENCY_MS * Math.ceil(n / CONCURRENCY);
    const m: Measured = {
      wallMs,
      idealMs,
      heapGrowthMb: (peakHeap - heapBefore) / 2 ** 20,
      retainedMb: retained / 2 ** 20,
      liveMidRunMb: liveMidRun / 2 ** 20,
      peakRssMb: peakRss / 2 ** 20,
      cpuPerItemMs: (used.user + used.system) / 1000 / n,
    };
    log(
      `  ${n} items: ideal ${(idealMs / 1000).toFixed(2)} s, measured ${(wallMs / 1000).toFixed(2)} s ` +
        `(${(wallMs / idealMs).toFixed(3)}×); engine CPU ${m.cpuPerItemMs.toFixed(3)} ms/item; peak heap growth ` +
        `${m.heapGrowthMb.toFixed(1)} MB, live halfway ${m.liveMidRunMb.toFixed(
          1,
        )} MB, retained after the run ${m.retainedMb.toFixed(1)} MB, peak RSS ${m.peakRssMb.toFixed(0)} MB`,
    );
    return m;
  } finally {
    clearInterval(sampler);
    rmSync(out, { recursive: true, force: true });
  }
}

async function run(ctx: { log: (line: string) => void }): Promise<Figures> {
  const endpoint = await startEndpoint();
  try {
    const [small, large] = [
      await measure(SIZES[0], endpoint.baseURL, ctx.log),
      await measure(SIZES[1], endpoint.baseURL, ctx.log),
    ];
    const r3 = (x: number) => Math.round(x * 1000) / 1000;
    const r1 = (x: number) => Math.round(x * 10) / 10;
    const ratioSmall = small!.wallMs / small!.idealMs;
    const ratioLarge = large!.wallMs / large!.idealMs;
    const extra = large!.liveMidRunMb - small!.liveMidRunMb;
    return {
      "mc wall time / ideal (25,000 items, concurrency 64)": {
        value: r3(ratioLarge),
        unit: "×",
        target: "<= 1.15",
        pass: ratioLarge <= 1.15,
      },
      "mc wall time / ideal (2,500 items)": { value: r3(ratioSmall), unit: "×", target: null, pass: null },
      "mc wall time (25,000 items)": { value: r3(large!.wallMs / 1000), unit: "s", target: null, pass: null },
      "mc engine CPU per item": { value: r3(large!.cpuPerItemMs), unit: "ms", target: null, pass: null },
      "mc live heap halfway (2,500 items)": { value: r1(small!.liveMidRunMb), unit: "MB", target: null, pass: null },
      "mc live heap halfway (25,000 items)": { value: r1(large!.liveMidRunMb), unit: "MB", target: null, pass: null },
      "mc live heap, 25,000 over 2,500 items": { value: r1(extra), unit: "MB", target: "<= 16", pass: extra <= 16 },
      "mc heap retained after the run (25,000 items)": {
        value: r1(large!.retainedMb),
        unit: "MB",
        target: null,
        pass: null,
      },
      "mc peak heap incl. garbage (2,500 items)": {
        value: r1(small!.heapGrowthMb),
        unit: "MB",
        target: null,
        pass: null,
      },
      "mc peak heap incl. garbage (25,000 items)": {
        value: r1(large!.heapGrowthMb),
        unit: "MB",
        target: null,
        pass: null,
      },
      "mc peak RSS (2,500 items)": { value: r1(small!.peakRssMb), unit: "MB", target: null, pass: null },
      "mc peak RSS (25,000 items)": { value: r1(large!.peakRssMb), unit: "MB", target: null, pass: null },
    };
  } finally {
    endpoint.stop();
  }
}

export const benchmarks: Benchmark[] = [{ name: "mc-evaluation", run }];

// The endpoint: this file run as a child process answers "A." after LATENCY_MS.
if (process.argv[1] === SELF && process.argv.includes("--stub-server")) {
  const { startOpenAiStub } = await import("../../test/support/openai-stub");
  const stub = await startOpenAiStub(() => ({ content: "A.", delayMs: LATENCY_MS }));
  process.send?.({ port: stub.port });
  process.on("disconnect", () => void stub.close().then(() => process.exit(0)));
}
