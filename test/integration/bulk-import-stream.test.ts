/**
 * The case import reads its file as a stream and writes as it reads (docs/reliability.md, "Bulk imports"): a file
 * refused on its very last line has had batches written by then, and leaves nothing — not a visible row, not a hidden
 * one, not its run; and a reader polling while another process imports sees nothing of the import until it is
 * complete, then all of it. The expected lines are counted by hand: the header is line 1, case cK is on line K + 2.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SECTION_KINDS } from "../../app/annotation/domain/sections";
import { fileChunks } from "../../app/cli/io";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { getStudyByName, importCases, listStudies, listStudyCases } from "../../app/annotation/studies.server";
import { listCaseProgress } from "../../app/gold/gold-export.server";
import { freshDb } from "../support/db";

const ROOT = new URL("../..", import.meta.url).pathname;

let db: Db;
let path: string;
let cleanup: () => void;
beforeEach(() => ({ db, path, cleanup } = freshDb()));
afterEach(() => cleanup());

const TABLES = ["cases", "case_sections", "reference_labels", "events", "studies", "import_runs", "imports"];
const counts = () =>
  Object.fromEntries(
    TABLES.map((t) => [t, (db.$client.prepare(`select count(*) as n from ${t}`).get() as { n: number }).n]),
  );

/** A released-style CSV of `n` records c0…c(n-1); `last` replaces the last record. */
function csvFile(n: number, last?: string): string {
  const lines = [["id", "age_group", "sex", ...SECTION_KINDS].join(",")];
  for (let i = 0; i < n; i++) lines.push(`c${i},38-47,F,"Low mood ${i}, poor sleep.",No admissions.,Slowed.,,`);
  if (last !== undefined) lines[n] = last;
  const file = join(path, "..", `cases-${n}.csv`);
  writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

async function cli(argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return { code, out, err };
}

describe("a refusal on the last line of a big file", () => {
  it("leaves nothing although batches were written before it was read", async () => {
    importCases(db, {
      studyName: "Old",
      bytes: new TextEncoder().encode(`id,${SECTION_KINDS.join(",")}\nold1,a,b,c,,\n`),
      filename: "old.csv",
      actorId: null,
    });
    const before = counts();
    // 5,000 records; the last one repeats the id of the eighth (c7, line 9), which only the whole file shows.
    const file = csvFile(5000, `c7,38-47,F,"Low mood again.",No admissions.,Slowed.,,`);
    let written = 0;
    let hiddenSeen = 0;
    const result = importCases(
      db,
      { studyName: "Big", bytes: fileChunks(file), filename: file, actorId: null },
      {
        onChunk: (n) => {
          written = n;
          hiddenSeen = Math.max(hiddenSeen, counts().cases - before.cases);
        },
      },
    );
    // Rows were written (hidden) before the last line was read, and all of them are gone.
    expect(written).toBeGreaterThanOrEqual(1000);
    expect(hiddenSeen).toBeGreaterThanOrEqual(1000);
    expect(result).toMatchObject({ ok: false, written: false, create: 0, total: 0 });
    expect(result.parse.errors).toEqual([{ line: 5001, message: '(id c7) duplicate id "c7" (first on line 9).' }]);
    expect(counts()).toEqual(before);
    expect(listStudies(db).map((s) => `${s.name}:${s.numCases}`)).toEqual(["Old:1"]);
  });

  it("is reported by `concord import` as FILE's line, exit 2, nothing imported", async () => {
    const before = counts();
    const file = csvFile(5000, `c4999,38-47,F,only one section,,,,`);
    const r = await cli(["import", "--study", "Big", file]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${file}:5001: (id c4999) 1 non-empty section; a case needs 3 to 5.`);
    expect(r.err).toContain("1 error; nothing was imported.");
    expect(counts()).toEqual(before);
  });

  it("a JSONL file whose last line is not JSON leaves nothing", async () => {
    const lines: string[] = [];
    for (let i = 0; i < 5000; i++)
      lines.push(
        JSON.stringify({
          id: `j${i}`,
          presenting_symptoms: `Low mood ${i}.`,
          psychiatric_history: "None.",
          psychiatric_exam: "Calm.",
        }),
      );
    lines[4999] = '{"id": "j4999", "presenting_symptoms": ';
    const file = join(path, "..", "cases.jsonl");
    writeFileSync(file, lines.join("\n") + "\n");
    const before = counts();
    let written = 0;
    const result = importCases(
      db,
      { studyName: "Big", bytes: fileChunks(file), filename: file, actorId: null },
      { onChunk: (n) => (written = n) },
    );
    expect(written).toBeGreaterThanOrEqual(1000);
    expect(result.parse.errors.map((e) => e.line)).toEqual([5000]);
    expect(result.parse.errors[0]!.message).toMatch(/^not valid JSON \(/);
    expect(counts()).toEqual(before);
  });
});

describe("a reader polling during an import in another process", () => {
  it("sees nothing of it until the end, then all of it", async () => {
    importCases(db, {
      studyName: "Old",
      bytes: new TextEncoder().encode(`id,${SECTION_KINDS.join(",")}\nold1,a,b,c,,\nold2,a,b,c,,\n`),
      filename: "old.csv",
      actorId: null,
    });
    const N = 20_000;
    const file = csvFile(N);
    const reader = openDatabase(path);
    // One read transaction per look, so that the look is one state of the database.
    const look = reader.$client.transaction(() => {
      const study = getStudyByName(reader, "Big");
      return {
        view: {
          studies: listStudies(reader).map((s) => `${s.name}:${s.numCases}`),
          cases: study ? listStudyCases(reader, study.id).length : null,
          progress: study ? listCaseProgress(reader, study.id).length : null,
        },
        rows: (reader.$client.prepare("select count(*) as n from cases").get() as { n: number }).n,
      };
    });
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/concord.ts", "import", "--study", "Big", file], {
      cwd: ROOT,
      env: { ...process.env, CONCORD_DB: path, CONCORD_DEMO: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    let running = true;
    void exited.then(() => (running = false));
    const nothing = { studies: ["Old:2"], cases: null, progress: null };
    const all = { studies: ["Big:20000", "Old:2"], cases: N, progress: N };
    const seen: ReturnType<typeof look>[] = [];
    while (running) {
      seen.push(look());
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await exited).toBe(0);
    expect(out).toContain(`Imported into study "Big": ${N} cases in file: ${N} new`);
    // Every look saw the database before the import or after it, never part of it; some looked while its rows
    // were already written, hidden.
    for (const { view } of seen) expect([nothing, all]).toContainEqual(view);
    expect(seen.filter((s) => s.rows > 2 && s.view.cases === null).length).toBeGreaterThan(0);
    expect(look().view).toEqual(all);
    reader.$client.close();
  }, 60_000);
});
