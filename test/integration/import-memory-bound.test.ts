/**
 * Memory bounded by the longest line, import by import, without timing (docs/reliability.md, "Memory bounded by the
 * longest line"): each command reads a file of about 1 MB (sixteen 64 KiB chunks) through the one streaming reader
 * (`importFileSource`, watched through `probeImportReadsForTests`), and no line or record is handed on more than one
 * chunk (and, for CSV, the next record) after its end was read; no command reads its file whole. A reader that
 * read the file first, or an import that read it whole, would hand its first line on about 1 MB after its end.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import { probeImportReadsForTests } from "../../app/cli/io";
import { importCases } from "../../app/annotation/studies.server";
import type { Db } from "../../app/platform/db.server";
import { freshDb } from "../support/db";
import { startOpenAiStub } from "../support/openai-stub";

const CHUNK = 64 * 1024;
const SIZE = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), "concord-bound-"));
let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => {
  probeImportReadsForTests(null);
  cleanup();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[]): Promise<{ code: number; err: string }> {
  let err = "";
  const io: CliIO = { out: () => {}, err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return { code, err };
}

/** Rows until the file is about 1 MB: a header, then `row(i)` (one physical line each). */
function fileOf(name: string, header: string | null, row: (i: number) => string): string {
  const lines = header === null ? [] : [header];
  let size = 0;
  for (let i = 0; size < SIZE; i++) {
    const line = row(i);
    lines.push(line);
    size += line.length + 1;
  }
  const path = join(dir, name);
  writeFileSync(path, lines.join("\n") + "\n");
  return path;
}

const pad = (i: number) => String(i).padStart(6, "0");
const FILLER = "Low mood for weeks, poor sleep and appetite; no thoughts of self-harm reported.";

interface Case {
  name: string;
  csv: boolean;
  setup?(db: Db): void;
  file(): string;
  argv(file: string): string[];
  /**
   * An import in two passes (docs/reliability.md, "Memory bounded by the longest line"): the rows written so far
   * (hidden ones included). None is written before the first pass has read the whole file, and when the second
   * hands on its last line all but the last batch (500) are written: the checked rows are not kept until the write.
   */
  written?(db: Db): number;
}

const CASES: Case[] = [
  {
    name: "judge-import",
    csv: false,
    file: () => fileOf("r.jsonl", null, (i) => JSON.stringify({ id: `r${pad(i)}`, response: FILLER })),
    argv: (f) => ["judge-import", "--set", "bound", f],
  },
  {
    name: "judge-report --labels",
    csv: true,
    file: () =>
      fileOf("labels.csv", "response_id,rater,primary_answer,info_request", (i) => `r${pad(i)},alice,committed,none`),
    argv: (f) => ["judge-report", "--labels", f],
  },
  {
    name: "mentat-import-ratings",
    csv: true,
    file: () =>
      fileOf(
        "ratings.csv",
        "rt,stimulus,response,trial_type,trial_index,time_elapsed,internal_node_id,participant_name,rater_id,question_order,q_no,q,q_key",
        (i) =>
          `2000,,"{""Q0"":10,""Q1"":20,""Q2"":30,""Q3"":40,""Q4"":50,""comment"":""${FILLER}""}",survey-slider,${i + 4},${i},0.0-${i + 4}.0,,,"[0,1,2,3,4]",${i + 1},Question ${i + 1},q_male`,
      ),
    argv: (f) => ["mentat-import-ratings", "--bank", "Bank", f],
  },
  {
    name: "rater-quality --calibration",
    csv: true,
    setup: (db) => {
      const bytes = new TextEncoder().encode(
        JSON.stringify({
          id: "m1",
          presenting_symptoms: "Low mood.",
          psychiatric_history: "None.",
          psychiatric_exam: "Slowed.",
        }) + "\n",
      );
      expect(importCases(db, { studyName: "Main", bytes, filename: "m.jsonl", actorId: null }).ok).toBe(true);
    },
    file: () =>
      fileOf(
        "calibration.csv",
        "study,case,purpose,sufficiency,icd10,earliest_section,missing_info,missing_other,rationale",
        (i) => `Earlier,e${pad(i)},calibration,sufficient,F32.1,2,,,${FILLER}`,
      ),
    argv: (f) => ["rater-quality", "--study", "Main", "--calibration", f],
  },
  ...(["jsonl", "csv"] as const).map((format): Case => ({
    name: `mc-run --items (${format})`,
    csv: format === "csv",
    // Every answer names no option: each item is refused, so nothing is asked.
    file: () =>
      format === "csv"
        ? fileOf(
            "items.csv",
            "id,question,A,B,C,D,answer,type,disease",
            (i) => `mb${pad(i)},Case: ${FILLER},MDD,BD-II,GAD,PDD,none,I,GAD`,
          )
        : fileOf("items.jsonl", null, (i) =>
            JSON.stringify({
              id: `mb${pad(i)}`,
              question: `Case: ${FILLER}`,
              options: "A. MDD\nB. BD-II\nC. GAD\nD. PDD",
              answer: "none",
              type: "I",
              disease: "GAD",
            }),
          ),
    argv: (f) => [
      "mc-run",
      "--items",
      f,
      "--format",
      "mentalbench",
      "--models",
      "m",
      "--base-url",
      "http://127.0.0.1:1/v1",
      "--out",
      join(dir, `out-${format}`),
    ],
  })),
  {
    name: "grade-import",
    csv: false,
    file: () =>
      fileOf("set.jsonl", null, (i) =>
        JSON.stringify({
          prompt_id: `p${pad(i)}`,
          prompt: [{ role: "user", content: FILLER }],
          rubrics: [{ criterion: "Asks about duration.", points: 5, tags: ["axis:accuracy"] }],
          example_tags: ["theme:hedging"],
        }),
      ),
    argv: (f) => ["grade-import", "--set", "bound", f],
  },
  {
    name: "screening-import --items",
    csv: false,
    file: () =>
      fileOf("items.jsonl", null, (i) =>
        JSON.stringify({ prompt_id: `p${pad(i)}`, prompt: [{ role: "user", content: FILLER }], completion: [] }),
      ),
    argv: (f) => ["screening-import", "--study", "Bound", "--categories", "anxiety,mood", "--items", f],
    written: (db) => db.$client.prepare("select count(*) from screening_items").pluck().get() as number,
  },
  {
    name: "mentat-import",
    csv: true,
    file: () =>
      fileOf(
        "bank.csv",
        "id,domain,question,a,b,c,d,e,answer,notes",
        (i) => `q${pad(i)},triage,"A <AGE> patient: ${FILLER}",Wait,Call,Refer,Admit,Discharge,c,"${FILLER}"`,
      ),
    argv: (f) => ["mentat-import", "--bank", "Bound", f],
    written: (db) => db.$client.prepare("select count(*) from mentat_questions").pluck().get() as number,
  },
  {
    name: "casereview-import",
    csv: true,
    file: () => fileOf("cases.csv", "id,kind,text,diagnosis", (i) => `c${pad(i)},case,"${FILLER}",F32.1`),
    argv: (f) => ["casereview-import", "--set", "Bound", f],
    written: (db) => db.$client.prepare("select count(*) from review_items").pluck().get() as number,
  },
];

describe("every streamed import hands each line on within a chunk of its end", () => {
  it.each(CASES)(
    "$name",
    async (c) => {
      c.setup?.(db);
      const path = c.file();
      const bytes = readFileSync(path);
      // The offset just past each line's end (line N ends at lineEnd[N]).
      const lineEnd = [0];
      for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) lineEnd.push(i + 1);
      const longest = Math.max(...lineEnd.slice(1).map((end, k) => end - lineEnd[k]!));
      let handedOn = 0;
      let ahead = 0;
      let fullPass = false;
      const whole: string[] = [];
      const lastLine = lineEnd.length - 1;
      let passes = 0;
      const writtenAt: number[] = [];
      probeImportReadsForTests({
        handedOn(p, line, bytesRead) {
          if (p !== path) return;
          if (line === 1) passes++;
          if (line === lastLine && c.written) writtenAt.push(c.written(db));
          handedOn++;
          ahead = Math.max(ahead, bytesRead - lineEnd[line]!);
          if (bytesRead === bytes.length) fullPass = true;
        },
        readWhole: (p) => void whole.push(p),
      });
      const r = await cli(c.argv(path));
      // Refused or imported: either way with an exit code of the contract, never a crash.
      expect([0, 2], r.err.slice(0, 500)).toContain(r.code);
      expect(whole).toEqual([]);
      expect(fullPass).toBe(true);
      expect(handedOn).toBeGreaterThanOrEqual(lineEnd.length - 2);
      expect(ahead).toBeGreaterThan(0);
      // A chunk past the line (CSV: and the next record, which csv-parse reads before handing a record on).
      expect(ahead).toBeLessThanOrEqual(CHUNK + (c.csv ? longest : 0));
      expect(ahead).toBeLessThan(bytes.length / 8);
      if (c.written) {
        expect(r.code).toBe(0);
        expect(passes).toBe(2);
        expect(writtenAt[0]).toBe(0);
        expect(writtenAt[1]).toBeGreaterThanOrEqual(lastLine - 501);
        // A CSV's first line is its header.
        expect(c.written(db)).toBe(c.csv ? lastLine - 1 : lastLine);
      }
    },
    120_000,
  );
});

/**
 * `mc-run --items` in two passes (docs/reliability.md, "Memory bounded by the longest line"): the file is checked
 * whole first, keeping each item's id and hash, then read again as the items are asked, so the run never holds them.
 */
describe("mc-run --items reads its items as it asks them", () => {
  const ITEMS = 2_000;
  const itemsFile = (name: string, question = (i: number) => `Case: ${FILLER} ${i}`) => {
    const path = join(dir, name);
    const lines: string[] = [];
    for (let i = 0; i < ITEMS; i++)
      lines.push(
        JSON.stringify({
          id: `mb${pad(i)}`,
          question: question(i),
          options: "A. MDD\nB. BD-II\nC. GAD\nD. PDD",
          answer: "A",
          type: "I",
          disease: "MDD",
        }),
      );
    writeFileSync(path, lines.join("\n") + "\n");
    return path;
  };
  const runArgs = (path: string, baseURL: string, out: string) => [
    "mc-run",
    "--items",
    path,
    "--models",
    "m",
    "--base-url",
    baseURL,
    "--out",
    out,
    "--concurrency",
    "2",
    "--max-retries",
    "0",
  ];

  it("checks the whole file, then reads it again a few items ahead of the calls", async () => {
    const path = itemsFile("asked.jsonl");
    let passes = 0;
    let lastHandedOn = 0;
    probeImportReadsForTests({
      handedOn(p, line) {
        if (p !== path) return;
        if (line === 1) passes++;
        lastHandedOn = line;
      },
      readWhole: () => {},
    });
    // At each call: the pass under way and the last line it handed on.
    const seen: { passes: number; line: number }[] = [];
    const stub = await startOpenAiStub(() => {
      seen.push({ passes, line: lastHandedOn });
      return { content: "A" };
    });
    try {
      const out = join(dir, "out-asked");
      const r = await cli(runArgs(path, stub.baseURL, out));
      expect(r.code, r.err.slice(0, 500)).toBe(0);
      expect(stub.calls).toHaveLength(ITEMS);
      expect(passes).toBe(2);
      // The first pass ended before the first call; the second hands an item on as a slot takes it.
      expect(seen.every((s) => s.passes === 2)).toBe(true);
      seen.forEach((s, k) => expect(s.line).toBeLessThanOrEqual(k + 3));
      const records = readFileSync(join(out, readdirSync(out)[0]!, "responses.jsonl"), "utf8")
        .trim()
        .split("\n");
      expect(records).toHaveLength(ITEMS);
    } finally {
      await stub.close();
    }
  }, 120_000);

  it("refuses a file rewritten while it is asked, keeping the answers written", async () => {
    const path = itemsFile("changed.jsonl");
    const stub = await startOpenAiStub((call) => {
      // The file is rewritten once the run has begun asking: a later item's question differs.
      if (call.index === 10)
        itemsFile("changed.jsonl", (i) => (i === ITEMS - 5 ? "Case: another" : `Case: ${FILLER} ${i}`));
      return { content: "A" };
    });
    try {
      const out = join(dir, "out-changed");
      const r = await cli(runArgs(path, stub.baseURL, out));
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${path}: the file changed during the run`);
      expect(r.err).not.toMatch(/\n\s+at /);
      const records = readFileSync(join(out, readdirSync(out)[0]!, "responses.jsonl"), "utf8")
        .trim()
        .split("\n");
      expect(records.length).toBeGreaterThan(10);
      expect(records.length).toBeLessThan(ITEMS);
    } finally {
      await stub.close();
    }
  }, 120_000);
});
