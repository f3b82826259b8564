/**
 * The promises of docs/reliability.md that are not about kills: the server refuses a damaged database, export-gold
 * --verify finds a tampered folder, a refused screening import applies no setting, the JSONL case import drops
 * nothing silently, and every text import refuses bytes that are not UTF-8 with FILE:LINE.
 */
import { writeFileSync, readFileSync, openSync, writeSync, closeSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import type { Db } from "../../app/platform/db.server";
import { checkDatabaseIntegrity, StartupRefusal } from "../../app/platform/startup.server";
import { parseCaseFile } from "../../app/annotation/domain/case-import";
import { parseJsonWithLines } from "../../app/gold/domain/json-with-lines";
import { freshDb } from "../support/db";

let db: Db;
let path: string;
let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ db, path, cleanup } = freshDb());
  dir = dirname(path);
});
afterEach(() => cleanup());

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return { code, out, err };
}

const SECTIONS = { presenting_symptoms: "Low mood.", psychiatric_history: "None.", psychiatric_exam: "Slowed." };
const jsonl = (...objects: object[]) => objects.map((o) => JSON.stringify(o)).join("\n") + "\n";
const errorsOf = (text: string) =>
  parseCaseFile(text, { format: "jsonl", canonicalCode: (c) => c }).errors.map((e) => `${e.line}: ${e.message}`);

describe("the JSONL case import drops nothing silently", () => {
  it("refuses text under an unknown key, top level or in sections", () => {
    expect(errorsOf(jsonl({ id: "a", ...SECTIONS, secondary_diagnosis: "F41.1 noted" })).join()).toMatch(
      /the key "secondary_diagnosis" holds text but is not a case field/,
    );
    expect(errorsOf(jsonl({ id: "a", sections: { ...SECTIONS, labs: "TSH normal" } })).join()).toMatch(
      /unknown section "labs" in "sections"/,
    );
  });
  it("refuses labels as a list, label values as objects, sex as an object, id 1e400, a duplicated key", () => {
    expect(errorsOf(jsonl({ id: "a", ...SECTIONS, labels: ["1", "1"] })).join()).toMatch(/"labels" must be an object/);
    expect(errorsOf(jsonl({ id: "a", ...SECTIONS, labels: { diagnosis: { code: "F32" } } })).join()).toMatch(
      /label diagnosis must be text/,
    );
    expect(errorsOf(jsonl({ id: "a", ...SECTIONS, sex: { value: "F" } })).join()).toMatch(/"sex" must be text/);
    expect(
      errorsOf('{"id": 1e400, "presenting_symptoms": "a", "psychiatric_history": "b", "psychiatric_exam": "c"}\n'),
    ).toEqual(["1: not valid JSON (a number is too large to be stored)."]);
    expect(
      errorsOf(
        '{"id": "a", "id": "b", "presenting_symptoms": "a", "psychiatric_history": "b", "psychiatric_exam": "c"}\n',
      ),
    ).toEqual(['1: not valid JSON (the key "id" appears twice in one object).']);
  });
  it("refuses control and bidirectional characters in ids and compares ids in NFC", () => {
    expect(errorsOf(jsonl({ id: "a\u202eb", ...SECTIONS })).join()).toMatch(
      /bidirectional control character \(U\+202E\)/,
    );
    expect(errorsOf(jsonl({ id: "a\u0000", ...SECTIONS })).join()).toMatch(/NUL/);
    expect(errorsOf(jsonl({ id: "caf\u00e9", ...SECTIONS }, { id: "cafe\u0301", ...SECTIONS })).join()).toMatch(
      /duplicate id/,
    );
    const warned = parseCaseFile(jsonl({ id: "a", ...SECTIONS, psychiatric_exam: "x \u001b[2J y" }), {
      format: "jsonl",
      canonicalCode: (c) => c,
    });
    expect(warned.errors).toEqual([]);
    expect(warned.warnings.map((w) => w.message).join()).toMatch(/escape character/);
  });
});

describe("import-gold on hostile JSON", () => {
  it("refuses deep nesting, lone surrogates and huge numbers with a line, not a stack overflow", () => {
    const deep = parseJsonWithLines("[".repeat(200_000) + "]".repeat(200_000));
    expect(deep).toMatchObject({ ok: false, message: "invalid JSON: nested deeper than 64 levels" });
    expect(parseJsonWithLines('[\n"\\ud800"]')).toMatchObject({ ok: false, line: 2 });
    expect(parseJsonWithLines("[1e400]")).toMatchObject({
      ok: false,
      message: "invalid JSON: the number 1e400 is too large",
    });
  });
  it("answers deeply nested JSON with exit 2 and FILE:LINE", async () => {
    const file = join(dir, "deep.json");
    writeFileSync(file, "[".repeat(100_000) + "]".repeat(100_000));
    const r = await run(["import-gold", file]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${file}:1: invalid JSON: nested deeper than 64 levels`);
  });
});

describe("invalid UTF-8", () => {
  it("is refused with FILE:LINE by mentat-import, casereview-import and import-gold", async () => {
    const file = join(dir, "bad.csv");
    writeFileSync(
      file,
      Buffer.concat([Buffer.from("id,kind,text\nc1,case,ok\nc2,case,caf"), Buffer.from([0xe9]), Buffer.from("\n")]),
    );
    for (const argv of [
      ["mentat-import", file, "--bank", "B"],
      ["casereview-import", file, "--set", "S"],
      ["import-gold", file],
    ]) {
      const r = await run(argv);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${file}:3: the file is not valid UTF-8 here`);
    }
  });
});

describe("screening-import", () => {
  it("applies no --threshold and creates no study when its files are refused", async () => {
    const items = join(dir, "items.jsonl");
    writeFileSync(items, "not json\n");
    const r = await run(["screening-import", "--study", "S", "--categories", "anxiety", "--items", items]);
    expect(r.code).toBe(2);
    expect(db.$client.prepare("select count(*) from screening_studies").pluck().get()).toBe(0);
    expect((await run(["screening-import", "--study", "S", "--categories", "anxiety"])).code).toBe(0);
    const before = db.$client.prepare("select control_threshold from screening_studies").pluck().get();
    const again = await run(["screening-import", "--study", "S", "--threshold", "0.5", "--items", items]);
    expect(again.code).toBe(2);
    expect(db.$client.prepare("select control_threshold from screening_studies").pluck().get()).toBe(before);
  });
});

describe("export-gold --verify", () => {
  it("accepts a fresh export and names a changed or missing file", async () => {
    const cases = join(dir, "c.csv");
    writeFileSync(
      cases,
      "id,presenting_symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses\nc1,a,b,c,,\n",
    );
    expect((await run(["import", "--study", "P", cases])).code).toBe(0);
    const out = join(dir, "gold");
    expect((await run(["export-gold", "--study", "P", "--out", out, "--allow-partial"])).code).toBe(0);
    expect(await run(["export-gold", "--verify", out])).toMatchObject({
      code: 0,
      out: `${out} matches its manifest.\n`,
    });
    writeFileSync(join(out, "data.csv"), readFileSync(join(out, "data.csv"), "utf8") + "x");
    const r = await run(["export-gold", "--verify", out]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("data.csv does not match the manifest");
  });
});

describe("the server refuses a damaged database", () => {
  it("names the file and the restore command", () => {
    db.$client.exec(
      "create table filler (x); with recursive n(i) as (select 1 union all select i + 1 from n where i < 50) insert into filler select randomblob(3000) from n",
    );
    db.$client.pragma("wal_checkpoint(TRUNCATE)");
    expect(() => checkDatabaseIntegrity(path)).not.toThrow();
    // Damage a page in the middle of the file.
    const fd = openSync(path, "r+");
    writeSync(fd, Buffer.alloc(4096, 0xab), 0, 4096, 4096 * 3);
    closeSync(fd);
    let refusal: unknown;
    try {
      checkDatabaseIntegrity(path);
    } catch (e) {
      refusal = e;
    }
    expect(refusal).toBeInstanceOf(StartupRefusal);
    expect((refusal as Error).message).toContain(`The database ${path} is damaged`);
    expect((refusal as Error).message).toContain(`cp BACKUP.db ${path}`);
  });

  it("past its size budget, checks at start only what does not grow with the studies; check-db checks everything", async () => {
    db.$client.exec(
      "create table filler (x); with recursive n(i) as (select 1 union all select i + 1 from n where i < 50) insert into filler select randomblob(3000) from n",
    );
    db.$client.pragma("wal_checkpoint(TRUNCATE)");
    expect(await run(["check-db"])).toMatchObject({ code: 0, out: expect.stringContaining(`${path}: ok`) });
    // Damage the last page of the file: the filler's, which stands for the cases of a big study.
    const pages = statSync(path).size / 4096;
    const fd = openSync(path, "r+");
    writeSync(fd, Buffer.alloc(4096, 0xab), 0, 4096, 4096 * (pages - 1));
    closeSync(fd);
    // Within the budget (this file is small) the start reads everything and refuses.
    expect(() => checkDatabaseIntegrity(path)).toThrow(StartupRefusal);
    // Past it (a budget of 0 bytes), the start reads the schema and the small tables only: the filler is not read.
    expect(() => checkDatabaseIntegrity(path, { fullCheckBytes: 0 })).not.toThrow();
    // The whole check finds it, with one line and exit 2.
    const whole = await run(["check-db"]);
    expect(whole.code).toBe(2);
    expect(whole.err).toContain(`${path}: damaged (SQLite's integrity_check:`);
    expect(whole.err.trim().split("\n")).toHaveLength(1);
    // A damaged first page (the header and the schema) is refused at any size.
    const head = openSync(path, "r+");
    writeSync(head, Buffer.alloc(100, 0xcd), 0, 100, 0);
    closeSync(head);
    expect(() => checkDatabaseIntegrity(path, { fullCheckBytes: 0 })).toThrow(StartupRefusal);
  });
});
