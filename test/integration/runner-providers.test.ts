/**
 * `run --provider`: each preset sends exactly what the Safe-Psych reference sends to that kind of model and records
 * what it records (docs/safe-psych.md, "Runner providers"); `--strategy all` gives each timing.json the strategy's
 * own elapsed time ("Runner timing").
 *
 * Expected requests and records: test/fixtures/runner/provider_requests.py → provider-requests.json, replaying the
 * reference's provider code paths (OpenAIModel, VLLMModel, ClaudeModel, GeminiModel.generate; inference.py's record)
 * with capturing stand-in clients.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import { PROVIDERS } from "../../app/evaluation/providers";
import { scriptedHandler, startOpenAiStub, type OpenAiStub } from "../support/openai-stub";

const expected = JSON.parse(
  readFileSync(new URL("../fixtures/runner/provider-requests.json", import.meta.url), "utf8"),
);
const MODEL = "test-model";
const JUDGE = "test-judge";

const dirs: string[] = [];
const stubs: OpenAiStub[] = [];
afterEach(async () => {
  while (stubs.length) await stubs.pop()!.close();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function setup(delayMs = 0) {
  const dir = mkdtempSync(join(tmpdir(), "concord-providers-"));
  dirs.push(dir);
  const s = await startOpenAiStub(scriptedHandler(JUDGE, delayMs));
  stubs.push(s);
  const samples = ["a", "b"].map((id) => ({
    sample_id: id,
    sections: [1, 2, 3].map((k) => ({
      order: k,
      content: `case-${id} s${k}: finding ${k}${k === 3 ? " [[diagnose:F32.1]]" : " [[clarify]]"}`,
    })),
  }));
  const samplesPath = join(dir, "samples.json");
  writeFileSync(samplesPath, JSON.stringify(samples));
  return { dir, s, samplesPath };
}

async function cli(argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    readStdin: async () => "",
    isTTY: false,
  };
  return { code: await runCli(argv, io), out, err };
}

const args = (s: OpenAiStub, samplesPath: string, out: string, ...extra: string[]) => [
  "run",
  "--samples",
  samplesPath,
  "--model",
  MODEL,
  "--judge-model",
  JUDGE,
  "--base-url",
  s.baseURL,
  "--out",
  out,
  ...extra,
];

describe("run --provider", () => {
  for (const provider of PROVIDERS) {
    it(`${provider}: sends what the reference's ${provider} provider sends and records 0.7 / 0.95`, async () => {
      const { dir, s, samplesPath } = await setup();
      const out = join(dir, "runs");
      const r = await cli(
        args(
          s,
          samplesPath,
          out,
          "--strategy",
          "full_info_no_abstention",
          "--seeds",
          String(expected.seed),
          "--provider",
          provider,
        ),
      );
      expect(r.code).toBe(0);
      const modelCalls = s.calls.filter((c) => c.model === MODEL);
      expect(modelCalls).toHaveLength(2);
      for (const c of modelCalls) {
        const { model, messages, ...rest } = c.body;
        expect(model).toBe(MODEL);
        expect(Array.isArray(messages)).toBe(true);
        expect(rest).toEqual(expected.requests[provider]);
      }
      // The judge's request is the protocol's, whatever the evaluated model's provider.
      for (const c of s.calls.filter((c) => c.model === JUDGE))
        expect(c.body).toMatchObject({ temperature: 0, top_p: 1, max_tokens: 128, seed: 123 });
      const [folder] = readdirSync(out);
      const records = readFileSync(join(out, folder!, "trajectories.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      for (const rec of records) expect(rec).toMatchObject(expected.recorded);
      const runJson = JSON.parse(readFileSync(join(out, folder!, "run.json"), "utf8"));
      expect(runJson.provider).toEqual({
        name: provider,
        sends: ["model", "messages", ...Object.keys(expected.requests[provider])],
        records: { model_temperature: 0.7, model_top_p: 0.95 },
      });
    });
  }

  it("refuses a preset together with the parameters it fixes, and names the empty-answer retry in --help", async () => {
    const { dir, s, samplesPath } = await setup();
    const r = await cli(
      args(s, samplesPath, join(dir, "runs"), "--strategy", "all", "--provider", "openai", "--temperature", "0.2"),
    );
    expect(r).toMatchObject({
      code: 2,
      err: "concord run: --provider openai fixes what is sent: leave out --temperature\n",
    });
    expect(
      (await cli(args(s, samplesPath, join(dir, "runs"), "--strategy", "all", "--provider", "azure"))).err,
    ).toMatch(/--provider is one of openai, vllm, anthropic, gemini/);
    const help = (await cli(["run", "--help"])).out;
    expect(help).toContain("An empty answer (no text) is retried");
    expect(help).toContain("--provider P");
    expect(s.calls).toHaveLength(0);
  });
});

describe("run --strategy all timing", () => {
  it("gives each run folder its own elapsed time, not the shared wall time", async () => {
    const { dir, s, samplesPath } = await setup(15);
    const out = join(dir, "runs");
    const started = performance.now();
    const r = await cli(args(s, samplesPath, out, "--strategy", "all", "--concurrency", "1"));
    const wall = (performance.now() - started) / 1000;
    expect(r.code).toBe(0);
    const timings = readdirSync(out).map((f) => JSON.parse(readFileSync(join(out, f, "timing.json"), "utf8")));
    expect(timings).toHaveLength(4);
    const total = timings.reduce((sum, t) => sum + t.total_time_seconds, 0);
    // One after another: the four own times add up to about the wall time (shared, each would be the whole of it).
    expect(total).toBeLessThanOrEqual(wall);
    for (const t of timings) {
      expect(t.total_time_seconds).toBeGreaterThan(0);
      expect(t.total_time_seconds).toBeLessThan(0.75 * wall);
      for (const st of t.sample_times) expect(st.seconds).toBeLessThanOrEqual(t.total_time_seconds + 1e-9);
    }
  });
});
