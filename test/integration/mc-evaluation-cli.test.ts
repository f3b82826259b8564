/**
 * `mc-run` and `mc-report` end to end against a local OpenAI-compatible server on 127.0.0.1
 * (test/support/openai-stub.ts) that answers each fixture item with its fixture answer: the exact requests, the
 * stored records, resuming, refusing changed parameters, bad input, a dead endpoint, and the report's numbers, which
 * must equal those reference_mentalbench.py computed from the same answers (test/fixtures/mc-evaluation/).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import { parsePythonCsv } from "../../app/formats/csv-text";
import { getMcReport, getMcReportFile, listMcReports } from "../../app/mc-evaluation/reports.server";
import { startOpenAiStub, type OpenAiStub, type StubHandler } from "../support/openai-stub";
import { expectFullDiskRefusal } from "../support/output-faults";

const FIX = "test/fixtures/mc-evaluation";
const dirs: string[] = [];
const stubs: OpenAiStub[] = [];
afterEach(async () => {
  while (stubs.length) await stubs.pop()!.close();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "concord-mc-"));
  dirs.push(d);
  return d;
}

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    readStdin: async () => "",
    isTTY: false,
  };
  const code = await runCli(argv, io);
  return { code, out, err };
}

const answersOf = (file: string) =>
  new Map(
    readFileSync(join(FIX, file), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; raw: string })
      .map((a) => [a.id, a.raw]),
  );

/** Answers "Case k:" (MentalBench) and "Question: <id>" (MENTAT) prompts with the fixture's answer for that item. */
function fixtureHandler(): StubHandler {
  const mb = answersOf("mentalbench-answers.jsonl");
  const mentat = answersOf("mentat-answers.jsonl");
  return (call) => {
    const last = call.last;
    const k = /^Case (\d+):/.exec(last);
    if (k) return { content: mb.get(`mb${k[1]!.padStart(3, "0")}`)! };
    const q = /Question: (\S+)\n/.exec(last);
    if (q) return { content: mentat.get(q[1]!)! };
    return { status: 400 };
  };
}

async function stub(handler: StubHandler = fixtureHandler()): Promise<OpenAiStub> {
  const s = await startOpenAiStub(handler);
  stubs.push(s);
  return s;
}

const runArgs = (items: string, baseURL: string, out: string, extra: string[] = []) => [
  "mc-run",
  "--items",
  items,
  "--models",
  "test/model-1",
  "--base-url",
  baseURL,
  "--out",
  out,
  "--concurrency",
  "4",
  "--retry-delay",
  "0",
  "--max-retries",
  "1",
  ...extra,
];

describe("help", () => {
  it("every command prints its usage, and the overview lists them", async () => {
    for (const name of ["mc-run", "mc-report"]) {
      const r = await cli([name, "--help"]);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`Usage: npm run concord -- ${name}`);
    }
    expect((await cli(["--help"])).out).toMatch(/mc-run[\s\S]*mc-report|mc-report[\s\S]*mc-run/);
    const missing = await cli(["mc-run", "--models", "m", "--base-url", "http://127.0.0.1:1/v1"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/--items is required/);
    const badUrl = await cli(["mc-run", "--items", "x", "--models", "m", "--base-url", "ftp://x"]);
    expect(badUrl.code).toBe(2);
    expect(badUrl.err).toMatch(/--base-url: must be an http\(s\) URL/);
  });
});

describe("mc-run and mc-report on MentalBench items", () => {
  it("asks every item with the paper's prompts, stores every answer, resumes, and reports the reference numbers", async () => {
    const s = await stub();
    const out = tempDir();
    const items = join(FIX, "mentalbench-items.jsonl");
    const first = await cli(runArgs(items, s.baseURL, out));
    expect(first.err).not.toMatch(/at .*\.ts:\d+/);
    expect(first.code).toBe(0);
    const folder = join(out, "test-model-1_mentalbench_seed-0");
    const records = readFileSync(join(folder, "responses.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(records).toHaveLength(36);
    // Empty answers are retried once (max-retries 1), then recorded as "empty".
    const empties = records.filter((r) => r.parse.status === "empty").length;
    expect(s.calls.length).toBe(36 + empties);

    const typeI = s.calls.find((c) => c.last.startsWith("Case 1:"))!;
    expect(typeI.body.temperature).toBe(0);
    expect(typeI.body.seed).toBe(0);
    expect(typeI.body.max_tokens).toBe(300);
    expect(typeI.messages).toHaveLength(1);
    const item1 = JSON.parse(readFileSync(items, "utf8").split("\n")[0]!);
    const single = readFileSync("app/data/mc-evaluation/mentalbench-single.txt", "utf8");
    expect(typeI.last).toBe(single.replace("{question}", item1.question).replace("{options}", item1.options));
    const typeIII = s.calls.find((c) => /Select all that apply/.test(c.last))!;
    expect(typeIII).toBeDefined();

    const run = JSON.parse(readFileSync(join(folder, "run.json"), "utf8"));
    expect(run).toMatchObject({
      status: "complete",
      answered: 36,
      num_items: 36,
      decoding: { temperature: 0, seed: 0 },
    });
    expect(run.inputs.items.sha256).toBe(createHash("sha256").update(readFileSync(items)).digest("hex"));
    expect(Object.keys(run.prompts).sort()).toEqual(["mentalbench-multiple.txt", "mentalbench-single.txt"]);

    // Resume: nothing left to ask.
    const before = s.calls.length;
    const again = await cli(runArgs(items, s.baseURL, out));
    expect(again.code).toBe(0);
    expect(s.calls.length).toBe(before);

    // Other decoding parameters: refused, nothing asked.
    const changed = await cli(runArgs(items, s.baseURL, out, ["--temperature", "0.5"]));
    expect(changed.code).toBe(2);
    expect(changed.err).toMatch(/other parameters/);
    expect(s.calls.length).toBe(before);

    const reportDir = join(out, "report");
    const report = await cli(["mc-report", "--runs", out, "--out", reportDir, "--json"]);
    expect(report.code).toBe(0);
    const json = JSON.parse(report.out);
    const expected = JSON.parse(readFileSync(join(FIX, "mentalbench-expected.json"), "utf8"));
    const scores = json.mentalbench[0].scores;
    expect(scores.overall).toBeCloseTo(expected.overall, 12);
    expect(scores.overall_reference).toBeCloseTo(expected.overall_reference, 12);
    expect(scores.gap_iii_iv).toBeCloseTo(expected.gap_iii_iv, 12);
    for (const f of [
      "report.md",
      "scores.json",
      "mentalbench-table2.csv",
      "parse-counts.csv",
      "accuracy-by-type.svg",
      "accuracy-by-type.png",
      "runs/test-model-1_mentalbench_seed-0.csv",
    ]) {
      expect(existsSync(join(reportDir, f)), f).toBe(true);
    }
    const manifest = JSON.parse(readFileSync(join(reportDir, "manifest.json"), "utf8"));
    for (const [name, hash] of Object.entries(manifest.files as Record<string, string>)) {
      expect(
        createHash("sha256")
          .update(readFileSync(join(reportDir, name)))
          .digest("hex"),
        name,
      ).toBe(hash);
    }
    expect(manifest.runs[0].decoding).toMatchObject({ temperature: 0, max_tokens: 300 });
    expect(readFileSync(join(reportDir, "report.md"), "utf8")).toMatch(/Type III/);
    // A full disk: exit 2 naming it, not one file left, not a 0-byte report.md (docs/reliability.md, "Atomic files").
    await expectFullDiskRefusal(cli, "mc-report", (o) => ["mc-report", "--runs", out, "--out", o], tempDir());

    // The admin pages' view of the same folder: listed, tables, figures, files by manifest name only.
    expect(listMcReports(out).map((r) => r.name)).toEqual(["report"]);
    const view = getMcReport("report", out)!;
    expect(view.tables.map((t) => t.name)).toContain("mentalbench-table2");
    expect(view.figures).toContain("accuracy-by-type.svg");
    expect(getMcReportFile("report", "accuracy-by-type.png", out)!.contentType).toBe("image/png");
    expect(getMcReportFile("report", "../report/scores.json", out)).toBeNull();
    expect(getMcReportFile("..", "manifest.json", out)).toBeNull();
    expect(getMcReportFile("report", "runs", out)).toBeNull();
  });

  it("leaves rejected items unanswered (exit 1), then resumes after a kill's torn line, asking only those", async () => {
    const good = fixtureHandler();
    let n = 0;
    const s = await stub((call) => (++n > 20 ? { status: 422 } : good(call)));
    const out = tempDir();
    const items = join(FIX, "mentalbench-items.jsonl");
    const first = await cli(runArgs(items, s.baseURL, out, ["--concurrency", "1", "--max-retries", "0"]));
    expect(first.code).toBe(1);
    expect(first.out).toMatch(/20\/36 items \(incomplete\).* 16 failed/);
    const responses = join(out, "test-model-1_mentalbench_seed-0", "responses.jsonl");
    writeFileSync(responses, readFileSync(responses, "utf8") + '{"item_id": "mb0');
    s.setHandler(good);
    const before = s.calls.length;
    const second = await cli(runArgs(items, s.baseURL, out, ["--max-retries", "0"]));
    expect(second.code).toBe(0);
    expect(s.calls.length - before).toBe(16);
    const ids = readFileSync(responses, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).item_id);
    expect(new Set(ids).size).toBe(36);
    expect(ids).toHaveLength(36);
    const run = JSON.parse(readFileSync(join(out, "test-model-1_mentalbench_seed-0", "run.json"), "utf8"));
    expect(run.sessions.map((x: { status: string }) => x.status)).toEqual(["stopped", "complete"]);
  });

  it("refuses a bad item file with FILE:LINE: reason, exit 2 and no request", async () => {
    const s = await stub();
    const dir = tempDir();
    const bad = join(dir, "items.jsonl");
    writeFileSync(
      bad,
      [
        JSON.stringify({
          id: "1",
          question: "q",
          options: ["a", "b", "c", "d"],
          answer: "A. a",
          type: "I",
          disease: "MDD",
        }),
        JSON.stringify({
          id: "2",
          question: "q",
          options: ["a", "b", "c", "d"],
          answer: "Bipolar",
          type: "II",
          disease: "MDD",
        }),
        JSON.stringify({
          id: "3",
          question: "q",
          options: ["a", "b", "c", "d"],
          answer: "A. a",
          type: "V",
          disease: "MDD",
        }),
        "{not json",
      ].join("\n"),
    );
    const r = await cli(runArgs(bad, s.baseURL, dir));
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${bad}:2: answer "Bipolar" names no option letter`);
    expect(r.err).toContain(`${bad}:3: type: type must be I, II, III or IV`);
    expect(r.err).toContain(`${bad}:4: not valid JSON`);
    expect(r.err).not.toMatch(/\n\s+at /);
    expect(s.calls).toHaveLength(0);
  });

  it("reads MentalBench CSV with option columns", async () => {
    const s = await stub(() => ({ content: "B." }));
    const dir = tempDir();
    const csv = join(dir, "items.csv");
    writeFileSync(
      csv,
      'id,question,A,B,C,D,answer,type,disease,cluster\r\nx1,"Case 9: two\nlines",MDD,BP2,GAD,PDD,B. BP2,2,MDD,depressive\r\n',
    );
    const r = await cli(runArgs(csv, s.baseURL, dir));
    expect(r.code).toBe(0);
    expect(s.calls[0]!.last).toContain("A. MDD\nB. BP2\nC. GAD\nD. PDD");
  });

  it("stops on a dead endpoint with exit 1, keeping what it has", async () => {
    const dir = tempDir();
    const r = await cli(runArgs(join(FIX, "mentalbench-items.jsonl"), "http://127.0.0.1:9/v1", dir));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/cannot connect|gave up/);
  });
});

describe("mc-run against a model whose API rejects the temperature", () => {
  it("answers every item without it, the calls in flight included, and records it in run.json", async () => {
    const answers = fixtureHandler();
    const s = await stub((call) =>
      "temperature" in call.body
        ? {
            status: 400,
            delayMs: 20,
            body: JSON.stringify({
              error: { message: "no", type: "invalid_request_error", param: "temperature", code: "unsupported_value" },
            }),
          }
        : answers(call),
    );
    const out = tempDir();
    const r = await cli(runArgs(join(FIX, "mentalbench-items.jsonl"), s.baseURL, out));
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain("warning: test/model-1's API rejects temperature; every call is sent without it");
    expect(r.out).toMatch(/36\/36 items \(complete\); \d+ calls, \d+ retries, 0 failed/);
    const run = JSON.parse(readFileSync(join(out, "test-model-1_mentalbench_seed-0", "run.json"), "utf8"));
    expect(run.parameters_not_sent).toEqual(["temperature"]);
    expect(run.decoding.temperature).toBe(0);
    // Only the calls in flight when the first 400 came back sent it (concurrency 4).
    expect(s.calls.filter((c) => "temperature" in c.body).length).toBeLessThanOrEqual(4);
  });
});

describe("mc-report checks a run's responses against its run.json", () => {
  it("refuses an emptied file, a torn last line, a repeated item and a miscount, as FILE:LINE with exit 2", async () => {
    const s = await stub();
    const out = tempDir();
    expect((await cli(runArgs(join(FIX, "mentalbench-items.jsonl"), s.baseURL, out))).code).toBe(0);
    const folder = join(out, "test-model-1_mentalbench_seed-0");
    const path = join(folder, "responses.jsonl");
    const runPath = join(folder, "run.json");
    const good = readFileSync(path, "utf8");
    const lines = good.trimEnd().split("\n");
    expect(lines).toHaveLength(36);
    const report = async (text: string) => {
      writeFileSync(path, text);
      return cli(["mc-report", "--runs", out]);
    };
    expect((await report(good)).code).toBe(0);

    const empty = await report("");
    expect(empty.code).toBe(2);
    expect(empty.err).toContain(`${path}: 0 answered items, but ${runPath} says it is complete with 36 of 36`);
    expect(empty.out).toBe("");

    const torn = await report(lines.join("\n") + "\n" + lines[5]!.slice(0, 40));
    expect(torn.code).toBe(2);
    expect(torn.err).toContain(`${path}:37: the last line is cut short`);

    const repeated = await report(good + lines[3] + "\n");
    expect(repeated.code).toBe(2);
    expect(repeated.err).toMatch(new RegExp(`${path}:37: item "mb\\d+" is answered twice \\(first at line 4\\)`));

    const short = await report(lines.slice(1).join("\n") + "\n");
    expect(short.code).toBe(2);
    expect(short.err).toContain(`${path}: 35 answered items, but ${runPath} says it is complete with 36 of 36`);

    const long = await report(good + JSON.stringify({ raw: "x".repeat(17 << 20) }) + "\n");
    expect(long.code).toBe(2);
    expect(long.err).toContain(`${path}:37: the line is longer than ${16 << 20} bytes`);
    for (const r of [empty, torn, repeated, short, long]) expect(r.err).not.toMatch(/at .*\.ts:\d+/);
  });
});

describe("mc-report --clusters reads its file through the import contract", () => {
  it("refuses bytes that are not UTF-8 and a NUL as FILE:LINE with exit 2, writing no report", async () => {
    const s = await stub();
    const out = tempDir();
    expect((await cli(runArgs(join(FIX, "mentalbench-items.jsonl"), s.baseURL, out))).code).toBe(0);
    const clusters = join(tempDir(), "clusters.csv");
    const reportDir = join(tempDir(), "report");
    const report = (bytes: Buffer) => {
      writeFileSync(clusters, bytes);
      return cli(["mc-report", "--runs", out, "--clusters", clusters, "--out", reportDir]);
    };
    // Before, the file was read as UTF-8 with U+FFFD in place of the bad byte, and the NUL kept, without a word.
    const latin1 = await report(Buffer.from("disease,cluster\nDepression,Mood\nAnxi\xe9t\xe9,Anxiety\n", "latin1"));
    expect(latin1.code).toBe(2);
    expect(latin1.err).toMatch(new RegExp(`${clusters}:3: .*UTF-8`));
    const nul = await report(Buffer.from("disease,cluster\nDepression,Mo\u0000od\n"));
    expect(nul.code).toBe(2);
    expect(nul.err).toContain(`${clusters}:2: the file holds a NUL byte`);
    expect(existsSync(reportDir)).toBe(false);
  });
});

describe("mc-run and mc-report on MENTAT records", () => {
  it("holds out 10% of the questions for few-shot examples and reports domains and drift", async () => {
    const s = await stub();
    const out = tempDir();
    const r = await cli(runArgs(join(FIX, "mentat-items.jsonl"), s.baseURL, out, ["--few-shot", "2"]));
    expect(r.code).toBe(0);
    const run = JSON.parse(readFileSync(join(out, "test-model-1_mentat_seed-0", "run.json"), "utf8"));
    expect(run.few_shot.held_out_questions).toHaveLength(3);
    expect(run.few_shot.shots).toBe(2);
    expect(run.num_items).toBe(27 * 15);
    const call = s.calls[0]!;
    expect(call.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant", "user"]);
    expect(call.messages[0]!.content).toBe("You are a helpful assistant.");
    const held = new Set(run.few_shot.held_out_questions as string[]);
    expect(s.calls.some((c) => held.has(/Question: (q\d+)/.exec(c.last)![1]!))).toBe(false);
    const report = await cli(["mc-report", "--runs", out, "--json", "--bootstrap", "200"]);
    expect(report.code).toBe(0);
    const json = JSON.parse(report.out);
    expect(Object.keys(json.mentat[0].scores.base_by_domain)).toContain("triage");
    expect(json.mentat[0].drift.map((d: { dimension: string }) => d.dimension)).toEqual(["gender", "age", "race"]);
    const md = await cli(["mc-report", "--runs", out]);
    expect(md.out).toMatch(/paired tests between conditions/);
    // Intervals in the CSVs are two numeric columns, ci_low and ci_high, never one text cell (docs/formats.md, "CSV").
    const reportDir = join(tempDir(), "report");
    expect((await cli(["mc-report", "--runs", out, "--out", reportDir, "--bootstrap", "200"])).code).toBe(0);
    for (const file of ["mentat-ablation.csv", "mentat-drift-tests.csv"]) {
      const [header, ...rows] = parsePythonCsv(readFileSync(join(reportDir, file), "utf8"));
      const low = header!.indexOf("ci_low");
      expect(header![low + 1], file).toBe("ci_high");
      expect(
        header!.some((h) => /CI/.test(h)),
        file,
      ).toBe(false);
      expect(rows.length, file).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row[low], file).toMatch(/^-?\d+\.\d\d$/);
        expect(row[low + 1], file).toMatch(/^-?\d+\.\d\d$/);
        expect(Number(row[low]), file).toBeLessThanOrEqual(Number(row[low + 1]));
        expect(
          row.some((c) => c.includes("–")),
          file,
        ).toBe(false);
      }
    }
  });

  it("mc-report refuses a damaged responses file with FILE:LINE", async () => {
    const dir = tempDir();
    const folder = join(dir, "m_mentat_seed-0");
    await cli(["mc-report", "--runs", dir]); // nothing there yet
    const { mkdirSync } = await import("node:fs");
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      join(folder, "run.json"),
      JSON.stringify({
        format: "concord-mc-run/1",
        model: { name: "m", key: "m", base_url: "x" },
        items_format: "mentat",
        seed: 0,
        decoding: {},
        mentalbench_style: "paper",
        few_shot: null,
        prompts: {},
        num_items: 1,
        status: "complete",
        answered: 1,
      }),
    );
    writeFileSync(join(folder, "responses.jsonl"), '{"item_id": "x"}\n');
    const r = await cli(["mc-report", "--runs", dir]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${join(folder, "responses.jsonl")}:1:`);
  });
});
