/**
 * Rubric grading end to end through the grade-* commands, against the stub of test/support/rubric-grading-stub.ts
 * on 127.0.0.1: import and subsets, candidate responses (verbatim conversation, refusals kept, empty answers
 * re-requested), synchronous grading with the byte-exact grader request, malformed-JSON recovery and excluded
 * verdicts, resuming without repeats, the Batch API with dropped and failed lines and the synchronous fallback, the
 * offline batch files, and the report. Expected scores are hand-computed from test/fixtures/rubric-grading/set.jsonl:
 * p1 (5 − 3)/10 = 0.2; p2 8/8 = 1 (one verdict recovered); p3 6/8 = 0.75; p4's [garbage] verdict is excluded,
 * 5/5 = 1. Mean 0.7375; with cand-b's refusal on p3 excluded, (0.2 + 1 + 1)/3.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import type { Db } from "../../app/platform/db.server";
import { conversationText, graderPrompt } from "../../app/rubric-grading/domain/grader";
import { loadGraderText } from "../../app/rubric-grading/grader-text.server";
import { getResultFile, getSetResults, ResultsQuerySchema } from "../../app/rubric-grading/results.server";
import { requireGradingSet } from "../../app/rubric-grading/sets.server";
import { freshDb } from "../support/db";
import { scriptedJudge, startGradingStub, type ChatCall, type GradingStub } from "../support/rubric-grading-stub";
import { expectFullDiskRefusal } from "../support/output-faults";

const FIX = "test/fixtures/rubric-grading";
let db: Db;
let cleanup: () => void;
const stubs: GradingStub[] = [];
const dirs: string[] = [];

beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(async () => {
  while (stubs.length) await stubs.pop()!.close();
  cleanup();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir() {
  const d = mkdtempSync(join(tmpdir(), "concord-grading-"));
  dirs.push(d);
  return d;
}

async function run(argv: string[], isTTY = false) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY };
  const code = await runCli(argv, io);
  return { code, out, err };
}

const isJudge = (c: ChatCall) => String(c.body.model).startsWith("judge");

/** Candidates answer with a fixed text; cand-b refuses p3 with an empty answer; cand-a's first p4 answer is empty. */
function handler() {
  let emptied = false;
  return (call: ChatCall) => {
    if (isJudge(call)) return scriptedJudge(call);
    const last = call.messages[call.messages.length - 1].content;
    if (call.body.model === "model-b" && last.includes("sertraline")) return { content: "", finishReason: "refusal" };
    if (call.body.model === "model-a" && last.includes("forgets") && !emptied) {
      emptied = true;
      return { content: "" };
    }
    return { content: `Answer from ${call.body.model}: $& please see a clinician.` };
  };
}

async function setUp() {
  const s = await startGradingStub(handler());
  stubs.push(s);
  expect((await run(["grade-import", "--set", "psych", `${FIX}/set.jsonl`])).code).toBe(0);
  for (const [name, model] of [
    ["cand-a", "model-a"],
    ["cand-b", "model-b"],
  ]) {
    const r = await run([
      "grade-respond",
      "--set",
      "psych",
      "--candidate",
      name,
      "--model",
      model,
      "--base-url",
      s.baseURL,
      "--retry-delay",
      "0",
    ]);
    expect(r.code, r.err).toBe(0);
  }
  return s;
}

const count = (sql: string) => (db.$client.prepare(sql).get() as { n: number }).n;

describe("grade-import and grade-subset", () => {
  it("imports, is idempotent, refuses changed content, and reports bad lines as FILE:LINE", async () => {
    const r = await run(["grade-import", "--set", "psych", `${FIX}/set.jsonl`]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^4 conversations; content sha256 [0-9a-f]{64}\. Imported as "psych"\./);
    expect((await run(["grade-import", "--set", "psych", `${FIX}/set.jsonl`])).out).toMatch(/Already imported/);
    const dir = tempDir();
    const changed = join(dir, "changed.jsonl");
    writeFileSync(changed, readFileSync(`${FIX}/set.jsonl`, "utf8").replace("Suggests sleep", "Suggests good sleep"));
    const refused = await run(["grade-import", "--set", "psych", changed]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/exists with different content/);
    const bad = join(dir, "bad.jsonl");
    const lines = readFileSync(`${FIX}/set.jsonl`, "utf8").split("\n");
    lines[1] = lines[1].replace('"points": 4', '"points": "four"');
    lines[2] = "{not json";
    writeFileSync(bad, lines.join("\n"));
    const b = await run(["grade-import", "--set", "other", bad]);
    expect(b.code).toBe(2);
    expect(b.err).toContain(`${bad}:2: rubrics.0.points: a rubric item's points must be a number`);
    expect(b.err).toContain(`${bad}:3: not valid JSON`);
    expect(b.err).not.toMatch(/\n\s+at /);
    expect(count("SELECT COUNT(*) AS n FROM grading_sets WHERE name = 'other'")).toBe(0);

    const sub = await run(["grade-subset", "--set", "psych", "--name", "Psych-Hard", `${FIX}/hard-ids.jsonl`]);
    expect(sub.code).toBe(0);
    expect(sub.out).toMatch(/subset "Psych-Hard": 2 conversations \(1 listed ids not in the set\)/);
  });
});

describe("responses and synchronous grading", () => {
  it("stores responses verbatim, keeps refusals, grades every criterion, recovers, excludes, resumes", async () => {
    const s = await setUp();
    const candidateCalls = s.calls.filter((c) => !isJudge(c));
    // 4 + 4 conversations, plus the re-request of cand-a's empty answer
    expect(candidateCalls.length).toBe(9);
    for (const c of candidateCalls) {
      expect(c.messages[0].role).toBe("user");
      expect(c.body.temperature).toBe(0);
      expect(c.body.max_tokens).toBe(8192);
    }
    const p2 = candidateCalls.find((c) => c.messages.length === 3)!;
    expect(p2.messages.map((m) => m.content)).toEqual([
      "Is it normal to cry a lot after giving birth?",
      "Can you tell me more?",
      "Every day for two weeks.",
    ]);
    expect(count("SELECT COUNT(*) AS n FROM grading_responses")).toBe(8);
    expect(count("SELECT COUNT(*) AS n FROM grading_responses WHERE refusal = 1 AND text = ''")).toBe(1);
    expect(count("SELECT COUNT(*) AS n FROM grading_responses WHERE text = '' AND refusal = 0")).toBe(0);

    const before = s.calls.length;
    const g = await run([
      "grade-run",
      "--set",
      "psych",
      "--judge",
      "j1",
      "--model",
      "judge-1",
      "--base-url",
      s.baseURL,
      "--max-retries",
      "2",
      "--retry-delay",
      "0",
    ]);
    expect(g.code, g.err).toBe(0);
    expect(g.out).toMatch(/j1: 16 verdicts \(2 recovered from malformed JSON\), 2 excluded after retries/);
    const judgeCalls = s.calls.slice(before);
    // 9 criteria × 2 responses = 18 first calls; each [garbage] criterion asked 3 times (2 retries)
    expect(judgeCalls.length).toBe(18 + 2 * 2);
    const grader = loadGraderText();
    const text = (model: string) => `Answer from ${model}: $& please see a clinician.`;
    const first = judgeCalls.find((c) => c.messages[1].content.includes("[met] Suggests sleep hygiene"))!;
    expect(first.body.temperature).toBe(0);
    expect(first.body.max_tokens).toBe(2048);
    expect(first.messages[0]).toEqual({ role: "system", content: "You are a helpful assistant." });
    const which = first.messages[1].content.includes("model-a") ? "model-a" : "model-b";
    expect(first.messages[1].content).toBe(
      graderPrompt(
        grader.template,
        conversationText([{ role: "user", content: "I feel anxious every night and can't sleep." }], text(which)),
        { criterion: "[met] Suggests sleep hygiene.", points: 5 },
      ),
    );
    expect(count("SELECT COUNT(*) AS n FROM grading_verdicts WHERE status = 'failed' AND criteria_met IS NULL")).toBe(
      2,
    );

    // A second run repeats nothing.
    const again = s.calls.length;
    const g2 = await run([
      "grade-run",
      "--set",
      "psych",
      "--judge",
      "j1",
      "--model",
      "judge-1",
      "--base-url",
      s.baseURL,
    ]);
    expect(g2.code).toBe(0);
    expect(s.calls.length).toBe(again);
    // Changing a judge's decoding once it has verdicts is refused.
    const t = await run([
      "grade-run",
      "--set",
      "psych",
      "--judge",
      "j1",
      "--model",
      "judge-1",
      "--base-url",
      s.baseURL,
      "--reference-temperature",
    ]);
    expect(t.code).toBe(2);
    expect(t.err).toMatch(/already has stored work/);

    const report = await run(["grade-report", "--set", "psych", "--json"]);
    expect(report.code).toBe(0);
    const json = JSON.parse(report.out);
    const row = (policy: string, c: string) => json[policy].table.find((r: { candidate: string }) => r.candidate === c);
    expect(row("as_returned", "cand-a").panel.mean).toBeCloseTo(0.7375, 12);
    expect(row("as_returned", "cand-a").judges.j1.mean).toBeCloseTo(0.7375, 12);
    expect(row("as_returned", "cand-b").panel.mean).toBeCloseTo(0.7375, 12);
    expect(row("exclude_refusals", "cand-b").panel.mean).toBeCloseTo(2.2 / 3, 12);
    expect(row("exclude_refusals", "cand-b").refusals).toBe(1);
    expect(json.manifest.grader.template_sha256).toBe(grader.templateSha256);
    expect(json.manifest.judges[0].verdicts).toEqual({ failed: 2, parsed: 14, recovered: 2 });
    expect(json.manifest.judges[0].failed.map((f: { prompt_id: string }) => f.prompt_id)).toEqual(["p4", "p4"]);
    expect(json.manifest.candidates[1].refusals).toBe(1);
    expect(JSON.stringify(json)).not.toContain("sertraline");

    // The subset report: p1 and p2 only.
    expect((await run(["grade-subset", "--set", "psych", "--name", "Psych-Hard", `${FIX}/hard-ids.jsonl`])).code).toBe(
      0,
    );
    const hard = JSON.parse((await run(["grade-report", "--set", "psych", "--subset", "Psych-Hard", "--json"])).out);
    expect(hard.as_returned.table[0].panel.mean).toBeCloseTo(0.6, 12);
    expect(hard.manifest.subset.name).toBe("Psych-Hard");
  });
});

describe("judge endpoint failures (through the keep-alive transport)", () => {
  it("retries rate limits and server errors, and stops at once on a dead endpoint", async () => {
    const s = await setUp();
    let failures = 0;
    s.setHandler((call) => {
      if (isJudge(call) && failures < 3) {
        failures++;
        return { status: failures === 1 ? 429 : 503 };
      }
      return isJudge(call) ? scriptedJudge(call) : { content: "x" };
    });
    const r = await run([
      "grade-run",
      "--set",
      "psych",
      "--judge",
      "j1",
      "--model",
      "judge-1",
      "--base-url",
      s.baseURL,
      "--retry-delay",
      "0",
      "--concurrency",
      "1",
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/j1: 16 verdicts .* 2 excluded after retries, \d+ retries/);
    expect(count("SELECT COUNT(*) AS n FROM grading_verdicts WHERE status != 'failed'")).toBe(16);
    s.setHandler((call) => (isJudge(call) ? { ...scriptedJudge(call), delayMs: 2000 } : { content: "x" }));
    const slow = await run([
      "grade-run",
      "--set",
      "psych",
      "--judge",
      "j8",
      "--model",
      "judge-8",
      "--base-url",
      s.baseURL,
      "--timeout",
      "0.2",
      "--max-retries",
      "0",
      "--limit",
      "1",
    ]);
    expect(slow.code, slow.err).toBe(0);
    expect(
      (
        db.$client
          .prepare(
            "SELECT v.error AS e FROM grading_verdicts v JOIN grading_models m ON m.id = v.judge_id WHERE m.name = 'j8'",
          )
          .get() as { e: string }
      ).e,
    ).toMatch(/^retryable: judge: timed out/);
    const dead = await run([
      "grade-run",
      "--set",
      "psych",
      "--judge",
      "j9",
      "--model",
      "judge-9",
      "--base-url",
      "http://127.0.0.1:9/v1",
    ]);
    expect(dead.code).toBe(1);
    expect(dead.err).toMatch(/stopped: judge: cannot connect \(ECONNREFUSED\)/);
    expect(
      count(
        "SELECT COUNT(*) AS n FROM grading_verdicts v JOIN grading_models m ON m.id = v.judge_id WHERE m.name = 'j9'",
      ),
    ).toBe(0);
  });
});

describe("a model whose API rejects the temperature", () => {
  it("runs at the provider's default, records it, and resumes without complaint", async () => {
    const s = await startGradingStub((call) =>
      "temperature" in call.body ? { status: 400, code: "unsupported_value" } : { content: "ok" },
    );
    stubs.push(s);
    expect((await run(["grade-import", "--set", "psych", `${FIX}/set.jsonl`])).code).toBe(0);
    const args = [
      "grade-respond",
      "--set",
      "psych",
      "--candidate",
      "reasoner",
      "--model",
      "o-model",
      "--base-url",
      s.baseURL,
      "--concurrency",
      "1",
      "--limit",
      "2",
    ];
    const r = await run(args);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/rejected the temperature; running at the provider's default/);
    expect(count("SELECT COUNT(*) AS n FROM grading_responses")).toBe(2);
    expect(s.calls.filter((c) => !("temperature" in c.body)).length).toBe(2);
    const again = await run(args.slice(0, -2));
    expect(again.code, again.err).toBe(0);
    expect(count("SELECT COUNT(*) AS n FROM grading_responses")).toBe(4);
    const manifest = JSON.parse((await run(["grade-report", "--set", "psych", "--json"])).out).manifest;
    expect(manifest.candidates[0]).toMatchObject({
      temperature: null,
      temperature_note: "not sent: the provider's default",
    });
    expect(manifest.candidates[0].note).toMatch(/rejected the temperature/);
  });
});

describe("a model whose API rejects the temperature, with calls in flight", () => {
  it("stores every response, logs no call error, and a judge switches the same way", async () => {
    // OpenAI's answer to a temperature a reasoning model does not take, after a delay so that all calls are in flight.
    const s = await startGradingStub((call) =>
      "temperature" in call.body
        ? { status: 400, code: "unsupported_value", param: "temperature", delayMs: 40 }
        : isJudge(call)
          ? scriptedJudge(call)
          : { content: "ok" },
    );
    stubs.push(s);
    const dir = tempDir();
    const file = join(dir, "set17.jsonl");
    writeFileSync(
      file,
      Array.from({ length: 17 }, (_, i) =>
        JSON.stringify({
          prompt_id: `q${i}`,
          prompt: [{ role: "user", content: `question ${i}` }],
          rubrics: [{ criterion: "[met] Answers.", points: 1, tags: [] }],
          example_tags: [],
        }),
      ).join("\n") + "\n",
    );
    expect((await run(["grade-import", "--set", "s17", file])).code).toBe(0);
    const base = ["--set", "s17", "--base-url", s.baseURL, "--concurrency", "17", "--retry-delay", "0"];
    const r = await run(["grade-respond", ...base, "--candidate", "reasoner", "--model", "o-model"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/reasoner: 17 responses stored \(0 refusals\), 0 failed calls/);
    expect(count("SELECT COUNT(*) AS n FROM grading_responses")).toBe(17);
    expect(count("SELECT COUNT(*) AS n FROM grading_call_errors")).toBe(0);
    const g = await run(["grade-run", ...base, "--judge", "j", "--model", "judge-o"]);
    expect(g.code, g.err).toBe(0);
    expect(g.err).toMatch(/j: the API rejected the temperature; running at the provider's default \(recorded\)/);
    expect(g.out).toMatch(/j: 17 verdicts .* 0 excluded after retries/);
    const manifest = JSON.parse((await run(["grade-report", "--set", "s17", "--json"])).out).manifest;
    expect(manifest.candidates[0]).toMatchObject({ temperature: null, call_errors: 0 });
    expect(manifest.candidates[0].note).toMatch(/rejected the temperature/);
    expect(manifest.judges[0]).toMatchObject({ temperature: null });
    expect(manifest.judges[0].note).toMatch(/rejected the temperature/);
  });
});

describe("batch mode", () => {
  it("submits to the Batch API, polls, ingests, and grades dropped and failed lines synchronously", async () => {
    const s = await setUp();
    s.setBatchBehaviour({
      pollsBeforeDone: 2,
      drop: (_, prompt) => prompt.includes("Suggests sleep hygiene"),
      fail: (_, prompt) => prompt.includes("Gives the usual starting dose"),
    });
    const dir = tempDir();
    const before = s.calls.length;
    const r = await run([
      "grade-run",
      "--set",
      "psych",
      "--judge",
      "j2",
      "--model",
      "judge-2",
      "--base-url",
      s.baseURL,
      "--mode",
      "batch",
      "--poll",
      "0.01",
      "--dir",
      dir,
      "--max-retries",
      "0",
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/j2: 18 pending calls in 1 batch file\./);
    // Every step shows its progress on stderr (line-based, not a terminal), never on stdout.
    expect(r.err).toContain("progress: 18/18 requests written 100%");
    expect(r.err).toContain("progress: 1/1 batch files submitted 100%");
    expect(r.err).toMatch(/progress: [1-9]\d*\/18 batch requests done \d+%/); // while the batch runs
    expect(r.err).toContain("progress: 16/18 batch requests done 89%"); // 2 lines left out of the output
    expect(r.err).toContain("progress: 14/14 results checked 100%");
    expect(r.err).toContain("progress: 14/14 results ingested 100%");
    expect(r.out).not.toMatch(/progress|█/);
    expect(r.out).not.toContain("\u001b");
    expect(s.batches).toHaveLength(1);
    expect(s.batches[0].requests).toBe(18);
    expect(s.batches[0].polls).toBeGreaterThanOrEqual(3);
    // Two requests left out of the output, two in the error file, two [garbage] answers without a verdict: 12
    // verdicts from the batch, 6 dropped, graded synchronously (4 verdicts, the 2 [garbage] ones excluded).
    expect(r.out).toMatch(/j2: 12 verdicts from batches \(2 recovered from malformed JSON\), 6 dropped\./);
    expect(r.out).toMatch(/j2: 4 verdicts \(0 recovered from malformed JSON\), 2 excluded after retries/);
    const sync = s.calls.slice(before).filter((c) => c.via === "sync");
    expect(sync.length).toBe(6);
    expect(
      count(
        "SELECT COUNT(*) AS n FROM grading_verdicts v JOIN grading_models m ON m.id = v.judge_id WHERE m.name = 'j2'",
      ),
    ).toBe(18);
    expect(count("SELECT COUNT(*) AS n FROM grading_verdicts WHERE via = 'batch'")).toBe(12);
    expect(
      count("SELECT COUNT(*) AS n FROM grading_batches WHERE status = 'ingested' AND ingested = 12 AND dropped = 6"),
    ).toBe(1);
    const requests = readFileSync(join(dir, "requests-001.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(requests[0]).toMatchObject({
      method: "POST",
      url: "/v1/chat/completions",
      body: { model: "judge-2", temperature: 0, max_tokens: 2048 },
    });
    expect(requests[0].custom_id).toMatch(/^r\d+\.c\d+\.j\d+$/);
  });

  it("writes offline request files and ingests an engine's output; bad output lines exit 2 as FILE:LINE", async () => {
    const s = await setUp();
    const dir = tempDir();
    const w = await run([
      "grade-batch-write",
      "--set",
      "psych",
      "--judge",
      "j3",
      "--model",
      "judge-3",
      "--base-url",
      s.baseURL,
      "--dir",
      dir,
    ]);
    expect(w.code, w.err).toBe(0);
    expect(w.out).toMatch(/18 requests in 1 file\./);
    expect(w.err).toMatch(
      /^progress: 0\/18 requests written 0%.*\n(progress: .*\n)*progress: 18\/18 requests written 100%/,
    );
    expect(w.out).not.toMatch(/progress|█/);
    expect(w.out).not.toContain("\u001b");
    const requests = readFileSync(join(dir, "requests-001.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    // What an offline engine (vLLM run-batch) writes back, answered by the scripted judge.
    const outputs = requests.map((q, i) => {
      const reply = scriptedJudge({ index: i, body: q.body, messages: q.body.messages, via: "offline" }) as {
        content: string;
      };
      return JSON.stringify({
        id: `vllm-${i}`,
        custom_id: q.custom_id,
        response: {
          status_code: 200,
          request_id: `vllm-${i}`,
          body: {
            choices: [{ index: 0, message: { role: "assistant", content: reply.content }, finish_reason: "stop" }],
            usage: { prompt_tokens: 1, completion_tokens: 1 },
          },
        },
        error: null,
      });
    });
    const bad = join(dir, "bad.jsonl");
    writeFileSync(
      bad,
      [outputs[0], "{", JSON.stringify({ custom_id: "r1.c0.j999", response: null, error: null })].join("\n"),
    );
    const b = await run(["grade-batch-ingest", "--set", "psych", "--judge", "j3", bad]);
    // The bad lines are refused as FILE:LINE and the command exits 2; the valid first line is ingested.
    expect(b.code).toBe(2);
    expect(b.err).toContain(`${bad}:2: not valid JSON`);
    expect(b.err).toContain(`${bad}:3: custom_id "r1.c0.j999" belongs to another judge`);
    expect(b.err).toMatch(/2 result lines were refused \(listed above\); every other line was ingested/);
    expect(b.out).toBe(
      "3 results: 1 verdicts (0 recovered from malformed JSON), 0 dropped, 0 already graded, 2 lines refused.\n",
    );
    expect(count("SELECT COUNT(*) AS n FROM grading_verdicts")).toBe(1);
    const good = join(dir, "output-001.jsonl");
    writeFileSync(good, outputs.join("\n") + "\n");
    const g = await run(["grade-batch-ingest", "--set", "psych", "--judge", "j3", good]);
    expect(g.code, g.err).toBe(0);
    expect(g.err).toContain("progress: 18/18 results checked 100%");
    expect(g.err).toContain("progress: 18/18 results ingested 100%");
    expect(g.out).toBe("18 results: 15 verdicts (2 recovered from malformed JSON), 2 dropped, 1 already graded.\n");
    expect((await run(["grade-batch-ingest", "--set", "psych", "--judge", "j3", good])).out).toMatch(
      /0 verdicts .* 16 already graded/,
    );
    const st = await run(["grade-status", "--set", "psych", "--json"]);
    expect(JSON.parse(st.out).judges[0]).toMatchObject({ name: "j3", total: 18, pending: 2 });
  });

  const batchRun = (s: GradingStub, dir: string) =>
    run([
      "grade-run",
      "--set",
      "psych",
      "--judge",
      "j5",
      "--model",
      "judge-5",
      "--base-url",
      s.baseURL,
      "--mode",
      "batch",
      "--poll",
      "0.01",
      "--dir",
      dir,
      "--no-fallback",
    ]);
  const j5Verdicts = () =>
    count(
      "SELECT COUNT(*) AS n FROM grading_verdicts v JOIN grading_models m ON m.id = v.judge_id WHERE m.name = 'j5'",
    );

  it("ingests a Batch API output's valid lines, refuses the bad ones as FILE:LINE, closes the batch and resubmits the rest", async () => {
    const s = await setUp();
    // The provider's output: one line names an unknown call, one call has two lines with different answers, one line
    // is repeated as it was, and the last line is cut short.
    s.setBatchBehaviour({
      pollsBeforeDone: 1,
      output: (lines) => {
        const verdicts = lines.filter((l) => l.includes("criteria_met"));
        const unknown = verdicts[2];
        const conflict = JSON.parse(verdicts[4]);
        const other = structuredClone(conflict);
        const message = other.response.body.choices[0].message;
        message.content = message.content.includes('"criteria_met": true')
          ? message.content.replace('"criteria_met": true', '"criteria_met": false')
          : message.content.replace('"criteria_met": false', '"criteria_met": true');
        return [
          ...lines.map((l) => (l === unknown ? l.replace(/"custom_id":"r\d+/, '"custom_id":"r999999') : l)),
          JSON.stringify(other),
          verdicts[6],
          '{"id": "resp-x", "custom_id": "r1',
        ];
      },
    });
    const dir = tempDir();
    const r = await batchRun(s, dir);
    const out = join(dir, "output-1.jsonl");
    const lines = readFileSync(out, "utf8").split("\n");
    const lineOf = (needle: string) => lines.findIndex((l) => l.includes(needle)) + 1;
    const unknownLine = lineOf('"custom_id":"r999999');
    const conflictId = JSON.parse(lines[18]).custom_id as string;
    const repeatedId = JSON.parse(lines[19]).custom_id as string;
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      new RegExp(
        `${out}:${unknownLine}: custom_id "r999999\\.c\\d+\\.j\\d+" names no response and criterion of this set`,
      ),
    );
    expect(r.err).toContain(
      `${out}:19: custom_id "${conflictId}" has another result at line ${lineOf(`"custom_id":"${conflictId}"`)}; neither is taken, the call stays pending`,
    );
    expect(r.err).toContain(
      `warning: ${out}:20: custom_id "${repeatedId}" repeats line ${lineOf(`"custom_id":"${repeatedId}"`)} with the same result; ignored`,
    );
    expect(r.err).toContain(`${out}:21: not valid JSON`);
    expect(r.err).toMatch(/3 result lines were refused \(listed above\); every other line was ingested/);
    // 18 requests: the unknown line's and the conflicting call's and the two [garbage] answers are dropped.
    expect(r.out).toMatch(/j5: 14 verdicts from batches \(\d recovered from malformed JSON\), 4 dropped\./);
    expect(j5Verdicts()).toBe(14);
    expect(count("SELECT COUNT(*) AS n FROM grading_batches WHERE status = 'submitted'")).toBe(0);
    expect(
      count("SELECT COUNT(*) AS n FROM grading_batches WHERE status = 'ingested' AND ingested = 14 AND dropped = 4"),
    ).toBe(1);
    // The next run submits what is missing (the [garbage] calls are dropped again).
    s.setBatchBehaviour({ pollsBeforeDone: 1 });
    const again = await batchRun(s, dir);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toMatch(/j5: 4 pending calls in 1 batch file\./);
    expect(again.out).toMatch(/j5: 2 verdicts from batches \(\d recovered from malformed JSON\), 2 dropped\./);
    expect(s.batches[1].requests).toBe(4);
    expect(j5Verdicts()).toBe(16);
  });

  it("counts as dropped the requests not graded: repeated lines do not hide a missing one, an expired batch drops all", async () => {
    const s = await setUp();
    s.setBatchBehaviour({
      pollsBeforeDone: 1,
      drop: (_, prompt) => prompt.includes("Suggests sleep hygiene"),
      output: (lines) => [...lines, lines[0]],
    });
    const dir = tempDir();
    const r = await batchRun(s, dir);
    expect(r.code, r.err).toBe(0);
    // 18 requests, 16 lines + 1 repeat: two left out (one criterion of both candidates), two [garbage] answers.
    expect(r.out).toMatch(/j5: 14 verdicts from batches \(2 recovered from malformed JSON\), 4 dropped\./);
    expect(r.err).toContain("repeats line 1 with the same result; ignored");
    expect(count("SELECT COUNT(*) AS n FROM grading_batches WHERE ingested = 14 AND dropped = 4")).toBe(1);
    // The next batch expires without any output: its 4 requests are dropped, not 0.
    s.setBatchBehaviour({ pollsBeforeDone: 1, endWithout: "expired" });
    const expired = await batchRun(s, dir);
    expect(expired.code, expired.err).toBe(0);
    expect(expired.err).toContain("a batch ended expired without output: its 4 calls stay pending");
    expect(expired.out).toMatch(/j5: 4 pending calls in 1 batch file\./);
    expect(expired.out).toMatch(/j5: 0 verdicts from batches \(0 recovered from malformed JSON\), 4 dropped\./);
    expect(count("SELECT COUNT(*) AS n FROM grading_batches WHERE status = 'failed' AND dropped = 4")).toBe(1);
  });

  it("draws a progress bar on a terminal for writing, checking and ingesting batch files, on stderr only", async () => {
    await setUp();
    const dir = tempDir();
    const judge = ["--set", "psych", "--judge", "j4", "--model", "judge-4", "--base-url", "http://127.0.0.1:9"];
    const w = await run(["grade-batch-write", ...judge, "--dir", dir], true);
    expect(w.code, w.err).toBe(0);
    // Redrawn in place (carriage return, erase line), the last draw complete, then a newline.
    const ERASE = "\r\u001b[2K";
    expect(w.err.startsWith(`${ERASE}[${"░".repeat(24)}] 0/18 requests written 0%`)).toBe(true);
    expect(w.err).toContain(`${ERASE}[${"█".repeat(24)}] 18/18 requests written 100% `);
    expect(w.err.endsWith("\n")).toBe(true);
    expect(w.out).toBe(`${join(dir, "requests-001.jsonl")}: 18 requests\n18 requests in 1 file.\n`);
    const requests = readFileSync(join(dir, "requests-001.jsonl"), "utf8").trim().split("\n");
    const output = join(dir, "output-001.jsonl");
    writeFileSync(
      output,
      requests
        .map((l, i) =>
          JSON.stringify({
            id: `vllm-${i}`,
            custom_id: JSON.parse(l).custom_id,
            response: {
              status_code: 200,
              request_id: `vllm-${i}`,
              body: {
                choices: [
                  {
                    index: 0,
                    message: { role: "assistant", content: '{"explanation": "no", "criteria_met": false}' },
                    finish_reason: "stop",
                  },
                ],
              },
            },
            error: null,
          }),
        )
        .join("\n") + "\n",
    );
    const g = await run(["grade-batch-ingest", "--set", "psych", "--judge", "j4", output], true);
    expect(g.code, g.err).toBe(0);
    expect(g.err).toMatch(/\[█{24}\] 18\/18 results checked 100% .*\n/);
    expect(g.err).toMatch(/\[█{24}\] 18\/18 results ingested 100% .*\n$/);
    expect(g.out).toBe("18 results: 18 verdicts (0 recovered from malformed JSON), 0 dropped, 0 already graded.\n");
  });
});

describe("the report files", () => {
  it("writes Table 1, tags, themes, agreement, paired, the figure and the manifest", async () => {
    const s = await setUp();
    for (const j of ["j1", "j2"]) {
      const r = await run([
        "grade-run",
        "--set",
        "psych",
        "--judge",
        j,
        "--model",
        `judge-${j}`,
        "--base-url",
        s.baseURL,
        "--max-retries",
        "0",
        ...(j === "j2" ? ["--self", "cand-a"] : []),
      ]);
      expect(r.code, r.err).toBe(0);
    }
    const out = tempDir();
    const r = await run(["grade-report", "--set", "psych", "--out", out]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^\| Rank \| Candidate \| Panel \(95% CI\) \| j1 \| j2 \| n \|/);
    for (const f of [
      "table1.csv",
      "table1.md",
      "table1-refusals-excluded.csv",
      "tags.csv",
      "themes.csv",
      "judge-agreement.csv",
      "paired.csv",
      "ranking.svg",
      "ranking.png",
      "report.json",
      "manifest.json",
    ]) {
      expect(existsSync(join(out, f)), f).toBe(true);
    }
    expect(readFileSync(join(out, "themes.csv"), "utf8")).toMatch(
      /^tag,candidate,panel,n,j1,j2\r?\ntheme:context_seeking,/,
    );
    expect(readFileSync(join(out, "tags.csv"), "utf8")).toMatch(/axis:accuracy/);
    const agreement = readFileSync(join(out, "judge-agreement.csv"), "utf8");
    expect(agreement).toMatch(/self_preference_raw,j2,cand-a,0\.0000/);
    // Both judges answer identically: 16 verdict pairs (the excluded ones left out), all agreeing.
    expect(agreement).toMatch(
      /verdict_pairs,j1,j2,16\r?\nverdict_agreement,j1,j2,1\.0000\r?\nverdict_cohen_kappa,j1,j2,1\.0000/,
    );
    expect(readFileSync(join(out, "ranking.svg"), "utf8")).toMatch(/^<svg/);
    expect(readdirSync(out).length).toBe(13);
    // A full disk: exit 2 naming it, not one of the 13 files left, not a 0-byte ranking.png (docs/reliability.md).
    await expectFullDiskRefusal(run, "grade-report", (o) => ["grade-report", "--set", "psych", "--out", o], tempDir());

    // The admin pages' service: the same report, either policy, the same files.
    const set = requireGradingSet(db, "psych");
    const page = getSetResults(db, set, ResultsQuerySchema.parse({ policy: "exclude_refusals", subset: "no-such" }));
    expect(page.subset).toBeNull();
    expect(page.policy).toBe("exclude_refusals");
    expect(page.evaluation.table.find((x) => x.candidate === "cand-b")!.panel!.mean).toBeCloseTo(2.2 / 3, 12);
    expect(page.judges.map((j) => [j.name, j.total - j.pending])).toEqual([
      ["j1", 18],
      ["j2", 18],
    ]);
    expect(ResultsQuerySchema.parse({ policy: "bogus" }).policy).toBe("as_returned");
    expect(await getResultFile(db, set, "table1.csv", null)).toBe(readFileSync(join(out, "table1.csv"), "utf8"));
  });
});
