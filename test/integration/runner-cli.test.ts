/**
 * `concord run` and `concord metrics` end to end against a local OpenAI-compatible server (test/support/openai-stub):
 * the exact requests, the records, retries, a dead endpoint, resuming after an error and after a kill.
 */
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import { pySplitLines, pyStrip } from "../../app/python-compat/text";
import { buildJudgeMessages, buildUserPrompt, type Strategy } from "../../app/evaluation/domain/runner-protocol";
import { createOpenAiEndpoint } from "../../app/model-calls/client";
import { loadPrompts, promptHashesOf } from "../../app/evaluation/prompts";
import { DEFAULT_RETRY_POLICY, realRetryDeps } from "../../app/model-calls/retry";
import { runEvaluation, type RunnerConfig, type RunnerDeps } from "../../app/evaluation/runner";
import { caseMarker, scriptedHandler, startOpenAiStub, type OpenAiStub, type StubCall } from "../support/openai-stub";
import { expectFullDiskRefusal } from "../support/output-faults";

const ROOT = new URL("../..", import.meta.url).pathname;
const loaded = loadPrompts();
const { prompts } = loaded;
const JUDGE = "test-judge";
const MODEL = "test-model";

const dirs: string[] = [];
const stubs: OpenAiStub[] = [];
afterEach(async () => {
  while (stubs.length) await stubs.pop()!.close();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "concord-runner-"));
  dirs.push(d);
  return d;
}

async function stub(handler = scriptedHandler(JUDGE)): Promise<OpenAiStub> {
  const s = await startOpenAiStub(handler);
  stubs.push(s);
  return s;
}

interface Case {
  id: string;
  tags: string[];
}

/** Section k of case `id` reads `case-<id> s<k>: … [[tag]]`, so the stub can script it and tests can find it. */
const sectionsOf = (c: Case) =>
  c.tags.map((tag, i) => `case-${c.id} s${i + 1}: finding ${i + 1}${tag ? ` [[${tag}]]` : ""}`);

const CASES: Case[] = [
  { id: "a", tags: ["clarify", "diagnose:F32.1", "abstain"] },
  { id: "b", tags: ["abstain", "clarify", "clarify", "diagnose:F20.0"] },
  { id: "c", tags: ["clarify", "empty", "judge-fail", "clarify", "clarify"] },
];

function writeInputs(dir: string, cases: Case[] = CASES) {
  const samples = cases.map((c) => ({
    sample_id: c.id,
    sections: sectionsOf(c).map((content, i) => ({ order: i + 1, content })),
  }));
  const gold = cases.map((c, i) => ({
    id: c.id,
    age_group: "28-37",
    sex: "F",
    diagnosis_sufficiency: i === 1 ? "0" : "1",
    diagnosis_sufficiency_agreement: "1",
    diagnosis: i === 1 ? "" : "F32.1",
    diagnosis_agreement: "1",
    earliest_sufficient_section: i === 1 ? "" : "2",
    num_sections_in_input: c.tags.length,
    last_section_order: c.tags.length,
  }));
  const samplesPath = join(dir, "samples.json");
  const goldPath = join(dir, "data_gt.json");
  writeFileSync(samplesPath, JSON.stringify(samples, null, 2));
  writeFileSync(goldPath, JSON.stringify(gold, null, 2));
  return { samplesPath, goldPath };
}

async function cli(argv: string[], isTTY = false) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => void (out += t), err: (t) => void (err += t), readStdin: async () => "", isTTY };
  const code = await runCli(argv, io);
  return { code, out, err };
}

function runArgs(s: OpenAiStub, paths: { samplesPath: string; goldPath: string }, out: string, ...extra: string[]) {
  return [
    "run",
    "--samples",
    paths.samplesPath,
    "--gold",
    paths.goldPath,
    "--model",
    MODEL,
    "--judge-model",
    JUDGE,
    "--base-url",
    s.baseURL,
    "--out",
    out,
    "--retry-delay",
    "0.001",
    "--max-retries",
    "2",
    ...extra,
  ];
}

const runFolders = (out: string) => readdirSync(out).sort();
const records = (folder: string) =>
  readFileSync(join(folder, "trajectories.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

/** Model calls of a case, by the `case-<id> s<k>` marker of their last message. */
const modelCallsOf = (s: OpenAiStub, id: string) =>
  s.calls.filter((c) => c.model === MODEL && caseMarker(c.last).startsWith(`case-${id} `));

describe("concord run", () => {
  it("sends the exact multi-turn conversation and judge request at each step", async () => {
    const dir = tempDir();
    const s = await stub();
    const paths = writeInputs(dir);
    const out = join(dir, "runs");
    const strategy: Strategy = "sequential_info_neutral_prompting";
    const r = await cli(runArgs(s, paths, out, "--strategy", strategy, "--concurrency", "1"));
    expect(r.code).toBe(0);

    const sections = sectionsOf(CASES[0]);
    const u = (t: number) => buildUserPrompt(prompts, strategy, sections, t);
    const reply = (t: number, action: string) =>
      pyStrip(`  Answer about case-a s${t}: ACTION=${action} $& $1 \u2028 \u0085 end `);
    const system = { role: "system", content: prompts.system };
    const calls = s.calls.filter((c) => c.model === MODEL && c.messages[1]?.content.includes("case-a s1"));
    expect(calls.map((c) => c.messages)).toEqual([
      [system, { role: "user", content: u(1) }],
      [
        system,
        { role: "user", content: u(1) },
        { role: "assistant", content: reply(1, "clarify") },
        { role: "user", content: u(2) },
      ],
    ]);
    for (const c of calls) {
      expect(c.body).toMatchObject({ model: MODEL, temperature: 0.7, top_p: 0.95, max_tokens: 512, seed: 123 });
      expect(c.authorization).toMatch(/^Bearer /);
    }
    const judged = s.calls.filter((c) => c.model === JUDGE && c.last.includes("case-a s"));
    expect(judged.map((c) => c.messages)).toEqual([
      buildJudgeMessages(prompts, reply(1, "clarify")),
      buildJudgeMessages(prompts, reply(2, "diagnose CODE=F32.1")),
    ]);
    for (const c of judged) {
      expect(c.body).toMatchObject({ model: JUDGE, temperature: 0, top_p: 1, max_tokens: 128, seed: 123 });
      expect(Object.keys(c.body)).not.toContain("system");
    }
    // Case c reaches its last section: that message ends with the final notice.
    const cSteps = s.calls.filter((c) => c.model === MODEL && c.messages[1]?.content.includes("case-c s1"));
    const lastUser = cSteps[cSteps.length - 1].last;
    expect(
      lastUser.endsWith(
        "\n\nNo further patient information is available.\n\nTask: Provide a psychiatric diagnosis and the corresponding ICD-10 code based on all the information provided.",
      ),
    ).toBe(true);
  });

  it("runs every strategy and writes records the reference's scripts accept", async () => {
    const dir = tempDir();
    const s = await stub();
    const paths = writeInputs(dir);
    const out = join(dir, "runs");
    const r = await cli(runArgs(s, paths, out, "--strategy", "all", "--seeds", "123,42"));
    expect(r.err).not.toMatch(/case-|finding/); // never the note text
    expect(r.code).toBe(0);
    const folders = runFolders(out);
    expect(folders).toHaveLength(8);
    for (const f of folders) {
      expect(f).toMatch(
        /^test-model_(full_info_no_abstention|full_info_abstention_aware|sequential_info_neutral_prompting|sequential_info_abstention_aware)_judge-test-judge_seed-(123|42)_\d{8}_\d{6}$/,
      );
      expect(readdirSync(join(out, f)).sort()).toEqual(["_tmp", "run.json", "timing.json", "trajectories.jsonl"]);
    }
    const seq = join(
      out,
      folders.find((f) => f.includes("sequential_info_abstention_aware") && f.includes("seed-123"))!,
    );
    const byId = Object.fromEntries(records(seq).map((rec) => [rec.sample_id, rec]));
    expect(byId.a.stopping_reason).toBe("Diagnose");
    expect(byId.a.num_steps_executed).toBe(2);
    expect(byId.b.stopping_reason).toBe("Abstain");
    expect(byId.b.num_steps_executed).toBe(1);
    expect(byId.c.stopping_reason).toBe("Abstain");
    expect(byId.c.trajectory.map((st: { judge_action: unknown }) => st.judge_action)).toEqual([
      "Clarify",
      "",
      null,
      "Clarify",
      "Abstain",
    ]);
    expect(byId.c.trajectory[1].model_output_raw).toBe("");
    expect(byId.c.trajectory[2].judge_output_raw).toBe("");
    // The empty answer was retried twice (--max-retries 2) before being recorded.
    const emptyCalls = modelCallsOf(s, "c").filter((c) => caseMarker(c.last) === "case-c s2" && c.body.seed === 123);
    expect(emptyCalls.filter((c) => c.messages.length === 4)).toHaveLength(3 * 2);

    const full = join(
      out,
      folders.find((f) => f.includes("full_info_no_abstention") && f.includes("seed-42"))!,
    );
    const fullById = Object.fromEntries(records(full).map((rec) => [rec.sample_id, rec]));
    expect(fullById.a.stopping_reason).toBe("Abstain");
    expect(fullById.b.stopping_reason).toBe("Diagnose");
    expect(fullById.c.stopping_reason).toBe("Abstain"); // Clarify on the (always last) full-information step
    expect(fullById.b.seed).toBe(42);

    const timing = JSON.parse(readFileSync(join(seq, "timing.json"), "utf8"));
    expect(Object.keys(timing)).toEqual([
      "total_time_seconds",
      "num_samples",
      "avg_time_per_sample_seconds",
      "sample_times",
    ]);
    expect(timing.num_samples).toBe(3);
    expect(timing.sample_times.map((t: { sample_id: string }) => t.sample_id).sort()).toEqual(["a", "b", "c"]);
    const secs = timing.sample_times.map((t: { seconds: number }) => t.seconds);
    expect([...secs].sort((x, y) => x - y)).toEqual(secs); // stopping order
    expect(timing.total_time_seconds).toBeGreaterThanOrEqual(secs[secs.length - 1]);

    const runJson = JSON.parse(readFileSync(join(seq, "run.json"), "utf8"));
    expect(runJson).toMatchObject({
      software: { name: "concord", version: "0.1.0" },
      model: { name: MODEL, key: MODEL },
      judge: { name: JUDGE, key: JUDGE },
      strategy: "sequential_info_abstention_aware",
      seed: 123,
      decoding: { temperature: 0.7, top_p: 0.95, max_tokens: 512 },
      judge_decoding: { temperature: 0, top_p: 1, max_tokens: 128, seed: 123 },
      status: "complete",
      finished_trajectories: 3,
    });
    expect(runJson.prompts["sequential_info_abstention_aware/final_step_abstention_notice.txt"]).toBe(
      "ab340903e57c79a163afde513bc624fc9442c20dc24d56ba323b63f7b212b2be",
    );
    expect(runJson.sessions).toHaveLength(1);
    expect(runJson.sessions[0]).toMatchObject({ status: "complete", finished_trajectories: 3 });

    // What the reference's scripts rely on (docs/formats.md#trajectoriesjsonl, docs/evaluation.md#compat-mode-the-reference-scripts): each record on one line for str.splitlines(), the
    // fields in order with their types, the model before _<strategy> in the folder name, the seed after _seed-.
    for (const f of folders) {
      const text = readFileSync(join(out, f, "trajectories.jsonl"), "utf8");
      const lines = pySplitLines(text.trim());
      expect(lines).toHaveLength(3);
      for (const line of lines) {
        const rec = JSON.parse(line);
        expect(typeof rec.sample_id).toBe("string");
        expect(Number.isInteger(rec.num_sections_total) && Number.isInteger(rec.num_steps_executed)).toBe(true);
        expect(["Diagnose", "Abstain", "Finished", ""]).toContain(rec.stopping_reason);
        expect(f.split(`_${rec.strategy}`)[0]).toBe(rec.model_evaluated);
        expect(Number(/_seed-(\d+)(?:_|$)/.exec(f)![1])).toBe(rec.seed);
        for (const st of rec.trajectory) {
          expect(st.structured_action_raw === null || st.structured_action_raw.action === st.judge_action).toBe(true);
        }
      }
    }
    const python = spawnSync("python3", ["-c", PYTHON_CHECK, out], { encoding: "utf8" });
    if (python.error === undefined) {
      expect(python.stderr).toBe("");
      expect(python.stdout.trim()).toBe("24 records ok");
    }
  });

  it("retries rate limits, server errors, time-outs, empty, malformed answers and dropped connections", async () => {
    const dir = tempDir();
    const scripted = scriptedHandler(JUDGE);
    const faults = [
      { status: 429, headers: { "retry-after": "0" } },
      { status: 500 },
      { status: 503 },
      { content: "x", delayMs: 1500 }, // slower than --timeout 0.5
      { content: "" },
      { raw: "<html>gateway</html>", contentType: "text/html" },
      { raw: "{not json" },
      { raw: '{"object": "error"}' },
      { hangUp: true as const },
    ];
    let faulty = 0;
    const s = await stub((call: StubCall) =>
      faulty < faults.length && call.index % 2 === 0 ? faults[faulty++] : scripted(call),
    );
    const paths = writeInputs(dir);
    const out = join(dir, "runs");
    const r = await cli(
      runArgs(
        s,
        paths,
        out,
        "--strategy",
        "sequential_info_abstention_aware",
        "--concurrency",
        "1",
        "--timeout",
        "0.5",
        "--max-retries",
        "3",
      ),
    );
    expect(r.code).toBe(0);
    expect(faulty).toBe(faults.length);
    const byId = Object.fromEntries(records(join(out, runFolders(out)[0])).map((rec) => [rec.sample_id, rec]));
    expect(byId.a.stopping_reason).toBe("Diagnose");
    expect(byId.b.stopping_reason).toBe("Abstain");
    expect(byId.c.trajectory.map((st: { judge_action: unknown }) => st.judge_action)).toEqual([
      "Clarify",
      "",
      null,
      "Clarify",
      "Abstain",
    ]);
    expect(r.out).toMatch(/retries/);
  });

  it("stops with a clear message when the endpoint is dead, keeping the run resumable", async () => {
    const dir = tempDir();
    const s = await stub();
    const port = s.port;
    await stubs.pop()!.close(); // nothing listens there now
    const paths = writeInputs(dir);
    const out = join(dir, "runs");
    const args = runArgs(
      { baseURL: `http://127.0.0.1:${port}/v1` } as OpenAiStub,
      paths,
      out,
      "--strategy",
      "full_info_no_abstention",
    );
    const r = await cli(args);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /stopped: model: cannot connect \(ECONNREFUSED\)\. Finished trajectories are kept; rerun the same command to resume\./,
    );
    const folder = join(out, runFolders(out)[0]);
    const runJson = JSON.parse(readFileSync(join(folder, "run.json"), "utf8"));
    expect(runJson.status).toBe("incomplete");
    expect(runJson.sessions[0]).toMatchObject({ status: "stopped", message: "model: cannot connect (ECONNREFUSED)" });
    expect(existsSync(join(folder, "timing.json"))).toBe(false);
    expect(readFileSync(join(folder, "trajectories.jsonl"), "utf8")).toBe("");
  });

  it("stops when retries are used up, and a rerun resumes without re-querying finished trajectories", async () => {
    const dir = tempDir();
    const scripted = scriptedHandler(JUDGE);
    // Jobs run longest first: c takes 11 calls (its empty answer 3, its failed judge call 1), b 2, a then stops.
    let healthy = 15;
    const s = await stub((call) => (healthy-- > 0 ? scripted(call) : { status: 503 }));
    const paths = writeInputs(dir);
    const out = join(dir, "runs");
    const args = runArgs(s, paths, out, "--strategy", "sequential_info_abstention_aware", "--concurrency", "1");
    const first = await cli(args);
    expect(first.code).toBe(1);
    expect(first.err).toMatch(/stopped: (model|judge): HTTP 503 \(stub_error\) \(gave up after 3 attempts\)/);
    const folder = join(out, runFolders(out)[0]);
    const finishedBefore = records(folder).map((rec) => rec.sample_id);
    expect(finishedBefore).toEqual(["c", "b"]);
    const stepLog = readFileSync(join(folder, "_tmp", "concord-steps.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));

    s.setHandler(scripted);
    const before = s.calls.length;
    const second = await cli(args);
    expect(second.code).toBe(0);
    const rerun = s.calls.slice(before);
    for (const id of finishedBefore)
      expect(rerun.filter((c) => caseMarker(c.last).startsWith(`case-${id} `))).toEqual([]);
    // Calls answered before the stop are replayed from the step log, not sent again.
    for (const e of stepLog.filter((ev) => !finishedBefore.includes(ev.sample_id) && ev.call === "model")) {
      const again = rerun.filter((c) => c.model === MODEL && caseMarker(c.last) === `case-${e.sample_id} s${e.step}`);
      expect(again).toEqual([]);
    }
    const all = records(folder).map((rec) => rec.sample_id);
    expect([...all].sort()).toEqual(["a", "b", "c"]);
    const runJson = JSON.parse(readFileSync(join(folder, "run.json"), "utf8"));
    expect(runJson.sessions.map((x: { status: string }) => x.status)).toEqual(["stopped", "complete"]);
    expect(runJson.status).toBe("complete");
    expect(JSON.parse(readFileSync(join(folder, "timing.json"), "utf8")).num_samples).toBe(3);

    // A third run finds nothing to do.
    const third = await cli(args);
    expect(third.code).toBe(0);
    expect(third.out).toMatch(/3\/3 trajectories \(already complete\)/);
    expect(s.calls.length).toBe(before + rerun.length);
  });

  it("repairs a last line torn by a kill and refuses to resume with other parameters", async () => {
    const dir = tempDir();
    const scripted = scriptedHandler(JUDGE);
    let healthy = 2;
    const s = await stub((call) => (healthy-- > 0 ? scripted(call) : { status: 401 }));
    const paths = writeInputs(dir);
    const out = join(dir, "runs");
    const args = runArgs(s, paths, out, "--strategy", "full_info_abstention_aware", "--concurrency", "1");
    expect((await cli(args)).code).toBe(1);
    const folder = join(out, runFolders(out)[0]);
    appendFileSync(join(folder, "trajectories.jsonl"), '{"sample_id": "b", "num_sect');
    appendFileSync(join(folder, "_tmp", "concord-steps.jsonl"), '{"sample_id": "b", "st');

    const other = await cli([...args, "--temperature", "0.5"]);
    expect(other.code).toBe(2);
    expect(other.err).toMatch(
      /made with other parameters \(decoding: .*"temperature":0\.7.*then, .*"temperature":0\.5.* now\)/,
    );

    s.setHandler(scripted);
    const r = await cli(args);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/removed an incomplete last line/);
    expect(
      records(folder)
        .map((rec) => rec.sample_id)
        .sort(),
    ).toEqual(["a", "b", "c"]);
  });

  it("loses at most the calls in flight when the process is killed, and resumes where it stopped", async () => {
    const dir = tempDir();
    const s = await stub(scriptedHandler(JUDGE, 40));
    const many: Case[] = Array.from({ length: 12 }, (_, i) => ({
      id: `k${i}`,
      tags: ["clarify", "clarify", i % 3 === 0 ? "diagnose" : "clarify", "clarify"],
    }));
    const paths = writeInputs(dir, many);
    const out = join(dir, "runs");
    const args = runArgs(s, paths, out, "--strategy", "sequential_info_neutral_prompting", "--concurrency", "4");
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/concord.ts", ...args], {
      cwd: ROOT,
      stdio: "ignore",
    });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    const deadline = Date.now() + 20_000;
    while (s.calls.length < 30 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    child.kill("SIGKILL");
    await exited;
    expect(s.calls.length).toBeGreaterThanOrEqual(30);
    const callsBeforeKill = s.calls.length;

    const folder = join(out, runFolders(out)[0]);
    const finishedBefore = records(folder).map((rec) => rec.sample_id);
    const logged = readFileSync(join(folder, "_tmp", "concord-steps.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.endsWith("}"));
    expect(logged.length).toBeGreaterThan(0);
    const midway = new Set(logged.map((l) => JSON.parse(l).sample_id).filter((id) => !finishedBefore.includes(id)));

    const r = await cli(args);
    expect(r.code).toBe(0);
    const resumed = Number(/resuming (\d+) trajectories where the step log left them/.exec(r.err)?.[1] ?? 0);
    const replayed = Number(/wrote (\d+) trajectories completed in the step log/.exec(r.err)?.[1] ?? 0);
    expect(resumed + replayed).toBe(midway.size);
    const rerun = s.calls.slice(callsBeforeKill);
    for (const id of finishedBefore)
      expect(rerun.filter((c) => caseMarker(c.last).startsWith(`case-${id} `))).toEqual([]);
    // Every model call is made once, except those in flight at the kill (at most --concurrency of them).
    const modelCalls = s.calls.filter((c) => c.model === MODEL).map((c) => caseMarker(c.last));
    const repeats = modelCalls.length - new Set(modelCalls).size;
    expect(repeats).toBeLessThanOrEqual(4);
    const recs = records(folder);
    expect(recs.map((rec) => rec.sample_id).sort()).toEqual(many.map((c) => c.id).sort());
    for (const rec of recs) {
      const i = Number(rec.sample_id.slice(1));
      expect(rec.stopping_reason).toBe(i % 3 === 0 ? "Diagnose" : "Abstain");
    }
    const runJson = JSON.parse(readFileSync(join(folder, "run.json"), "utf8"));
    expect(runJson.sessions.map((x: { status: string }) => x.status)).toEqual(["interrupted", "complete"]);
  }, 60_000);

  it("an interrupt (Ctrl-C) stops taking new calls, keeps answered ones, and a rerun finishes the rest", async () => {
    const dir = tempDir();
    const s = await stub(scriptedHandler(JUDGE, 5));
    const many: Case[] = Array.from({ length: 10 }, (_, i) => ({
      id: `i${i}`,
      tags: ["clarify", "clarify", "diagnose"],
    }));
    const cases = many.map((c) => ({ sampleId: c.id, sections: sectionsOf(c) }));
    const interrupt = new AbortController();
    const endpoint = (model: string) =>
      createOpenAiEndpoint({
        baseURL: s.baseURL,
        apiKey: "k",
        model,
        timeoutMs: 5000,
        maxTokensParam: "max_tokens",
        label: model,
      });
    const config: RunnerConfig = {
      cases,
      strategies: ["sequential_info_neutral_prompting"],
      seeds: [123],
      model: { name: MODEL, key: MODEL, base_url: s.baseURL },
      judge: { name: JUDGE, key: JUDGE, base_url: s.baseURL },
      temperature: 0.7,
      topP: 0.95,
      maxTokens: 512,
      maxTokensParam: "max_tokens",
      concurrency: 3,
      outDir: join(dir, "runs"),
      limit: null,
      retry: DEFAULT_RETRY_POLICY,
      timeoutMs: 5000,
      inputs: { samples: { path: "samples.json", sha256: "x" }, gold: null },
    };
    const deps: RunnerDeps = {
      modelEndpoint: endpoint(MODEL),
      judgeEndpoint: endpoint(JUDGE),
      prompts,
      promptHashes: (st) => promptHashesOf(loaded, st),
      version: "test",
      now: () => performance.now(),
      wallClock: () => new Date(),
      retry: realRetryDeps,
      signal: interrupt.signal,
      progress: { start() {}, finish() {}, update: (st) => void (st.calls >= 20 && interrupt.abort()) },
    };
    const first = await runEvaluation(config, deps);
    expect(first.status).toBe("interrupted");
    expect(first.folders[0].complete).toBe(false);
    const folder = first.folders[0].dir;
    const finished = records(folder).map((r) => r.sample_id);
    expect(finished.length).toBeLessThan(10);
    expect(JSON.parse(readFileSync(join(folder, "run.json"), "utf8")).sessions[0]).toMatchObject({
      status: "interrupted",
      message: "interrupted",
    });
    const before = s.calls.length;
    const second = await runEvaluation(config, { ...deps, signal: undefined, progress: undefined });
    expect(second.status).toBe("complete");
    for (const id of finished)
      expect(s.calls.slice(before).filter((c) => caseMarker(c.last).startsWith(`case-${id} `))).toEqual([]);
    expect(
      records(folder)
        .map((r) => r.sample_id)
        .sort(),
    ).toEqual(many.map((c) => c.id).sort());
    // 10 cases × 3 steps × 2 calls, each made once but for those cut short in flight (at most the concurrency).
    expect(s.calls.length - 60).toBeLessThanOrEqual(3);
    expect(s.calls.length).toBeGreaterThanOrEqual(60);
  });

  it("draws a progress bar with rate and ETA on a terminal", async () => {
    const dir = tempDir();
    const s = await stub();
    const paths = writeInputs(dir);
    const r = await cli(runArgs(s, paths, join(dir, "runs"), "--strategy", "full_info_no_abstention"), true);
    expect(r.code).toBe(0);
    // eslint-disable-next-line no-control-regex -- the progress line starts with the terminal's erase-line escape
    expect(r.err).toMatch(/\r\x1b\[2K\[█+\] 3\/3 trajectories 100% · [\d.]+ calls\/s · ETA 0s/);
  });

  it("checks its inputs", async () => {
    const dir = tempDir();
    const s = await stub();
    const paths = writeInputs(dir);
    const base = runArgs(s, paths, join(dir, "runs"));
    expect((await cli([...base, "--strategy", "sequential"])).err).toMatch(/unknown strategy "sequential"/);
    expect((await cli([...base, "--strategy", "all", "--model-key", "m_full_info_no_abstention"])).err).toMatch(
      /strategy name/,
    );
    expect((await cli([...base, "--strategy", "all", "--seeds", "1,x"])).err).toMatch(/--seeds/);
    const gold = JSON.parse(readFileSync(paths.goldPath, "utf8"));
    gold[0].num_sections_in_input = 5;
    writeFileSync(paths.goldPath, JSON.stringify(gold));
    const mismatch = await cli([...base, "--strategy", "all"]);
    expect(mismatch.code).toBe(2);
    expect(mismatch.err).toMatch(/case a has 3 sections in the samples but num_sections_in_input 5/);
    expect(s.calls).toHaveLength(0);
    const help = await cli(["run", "--help"]);
    expect(help.out).toMatch(/Resuming: rerun the same command/);
  });
});

describe("concord metrics on the runner's records", () => {
  it("reads the run folders in both modes", async () => {
    const dir = tempDir();
    const s = await stub();
    const paths = writeInputs(dir);
    const out = join(dir, "runs");
    expect((await cli(runArgs(s, paths, out, "--strategy", "all"))).code).toBe(0);
    const paper = await cli(["metrics", "--gold", paths.goldPath, "--runs", out, "--json"]);
    expect(paper.code).toBe(0);
    const doc = JSON.parse(paper.out);
    expect(doc.mode).toBe("paper");
    expect(doc.results).toHaveLength(4);
    const seq = doc.results.find((r: { strategy: string }) => r.strategy === "sequential_info_abstention_aware");
    expect(Object.keys(seq.metrics)).toEqual([
      "under_abstention",
      "over_abstention",
      "stage1_clarification_rate",
      "timing",
      "accuracy",
    ]);
    // Case c has an empty output and a judge failure: excluded. Left: a (sufficient, diagnosed at τ = 2) and b
    // (insufficient, abstained): under 0/1, over 0/1, stage 1: a and b are Clarify cases, a clarified → 1/2.
    expect(seq.qc).toMatchObject({ trajectories: 3, excluded_empty_output: 1, scored: 2 });
    expect(seq.metrics.under_abstention).toEqual({ mean: 0, sd: null, ci95: null, n: 1 });
    expect(seq.metrics.over_abstention.mean).toBe(0);
    expect(seq.metrics.stage1_clarification_rate.mean).toBe(0.5);
    expect(seq.metrics.timing.on_time.mean).toBe(1);
    expect(seq.metrics.accuracy.diagnosis.mean).toBe(1);

    const reference = await cli([
      "metrics",
      "--gold",
      paths.goldPath,
      "--runs",
      out,
      "--json",
      "--compat",
      "reference",
      "--out",
      join(dir, "report"),
    ]);
    expect(reference.code).toBe(0);
    const ref = JSON.parse(reference.out);
    expect(ref.mode).toBe("reference");
    expect(Object.keys(ref.reference_scripts)).toEqual([
      "abstention_rate/process.py",
      "clarification_seeking/process.py",
      "premature_diagnoses/process.py",
      "premature_diagnoses/figures_5_6.py",
      "diagnosis_accuracy/process.py",
      "multiple_seed_runs/process.py",
    ]);
    expect(readFileSync(join(dir, "report", "report.md"), "utf8")).toMatch(/\*\*Mode: reference\*\*/);
    // A full disk: exit 2 naming it, nothing written (docs/reliability.md, "Atomic files").
    await expectFullDiskRefusal(
      cli,
      "metrics",
      (o) => ["metrics", "--gold", paths.goldPath, "--runs", out, "--compat", "reference", "--out", o],
      tempDir(),
    );
    for (const f of ["abstention-tradeoff", "timing", "cumulative", "accuracy"]) {
      expect(readFileSync(join(dir, "report", "figures", `${f}.svg`), "utf8")).toMatch(/^<svg/);
      expect(
        readFileSync(join(dir, "report", "figures", `${f}.png`))
          .subarray(1, 4)
          .toString(),
      ).toBe("PNG");
    }
  });
});

/** Reads every trajectories.jsonl as the reference's scripts do and checks field order and Python types. */
const PYTHON_CHECK = String.raw`
import json, pathlib, re, sys
TOP = ["sample_id", "num_sections_total", "num_steps_executed", "stopping_reason", "trajectory", "model_evaluated",
       "judge_model", "judge_seed", "strategy", "seed", "model_do_sample", "model_temperature", "model_top_p",
       "model_max_tokens", "judge_do_sample", "judge_max_tokens"]
STEP = ["step_index", "section_order", "revealed_section_orders", "user_prompt", "conversation_state",
        "model_output_raw", "judge_output_raw", "judge_action", "is_last_section", "structured_action_raw"]
n = 0
for path in sorted(pathlib.Path(sys.argv[1]).glob("**/trajectories*.json*")):
    text = path.read_text(encoding="utf-8").strip()
    for line in text.splitlines():
        r = json.loads(line)
        assert list(r) == TOP, list(r)
        assert isinstance(r["num_sections_total"], int) and isinstance(r["seed"], int) and r["judge_seed"] == 123
        assert isinstance(r["model_temperature"], float) and isinstance(r["model_top_p"], float)
        assert r["model_do_sample"] is True and r["judge_do_sample"] is False
        for i, s in enumerate(r["trajectory"], start=1):
            assert list(s) == STEP, list(s)
            assert s["step_index"] == i and isinstance(s["step_index"], int)
            assert s["judge_action"] in ("Diagnose", "Clarify", "Abstain", "", None)
            assert isinstance(s["model_output_raw"], str) and isinstance(s["judge_output_raw"], str)
        folder = path.parent.name
        assert folder.split("_" + r["strategy"])[0] == r["model_evaluated"]
        assert int(re.search(r"_seed-(\d+)(?:_|$)", folder).group(1)) == r["seed"]
        n += 1
print(n, "records ok")
`;
