/**
 * The one streaming reader every import reads its file through (app/formats/import-source.ts, `importFileSource` in
 * app/cli/io.ts; docs/reliability.md, "Bulk imports"): the lines and records are those of the whole-text readers at
 * any chunk size, and they are handed on as the file is read — what has been read when a line is handed on is never
 * more than that line and one chunk past it, so memory is bounded by the longest line, not by the file.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CliError } from "../../app/cli/command";
import { importFileSource } from "../../app/cli/io";
import { setImportLimitsForTests } from "../../app/formats/import-contract";
import { textSource } from "../../app/formats/import-source";

const dir = mkdtempSync(join(tmpdir(), "concord-import-source-"));
let n = 0;
const file = (content: string | Buffer) => {
  const path = join(dir, `f${n++}`);
  writeFileSync(path, content);
  return path;
};
afterEach(() => setImportLimitsForTests(null));

const TEXTS = [
  '{"a":1}\n{"b":2}\n',
  '\uFEFF{"a":1}\r\n\r\n{"b":"é"}\r\n{"c":3}',
  "one\rtwo\r\nthree\n\nfour\r",
  'id,text\n1,"two\nlines"\n2,"CRLF\r\ninside"\r\n\n3,plain,extra\r4,"ü ❤"\n',
  "\uFEFFid,text\r\n1,x",
  "x\n".repeat(5000) + "end",
];

describe("importFileSource", () => {
  it("hands on the lines splitJsonlLines and the records readCsv give for the whole text, at any chunk size", () => {
    for (const text of TEXTS) {
      const path = file(text);
      const whole = textSource(text);
      const wantLines = [...whole.jsonlLines()].map(({ line, text, terminated }) => ({ line, text, terminated }));
      const wantCsv = whole.csvRecords();
      const wantRecords = [...wantCsv.records];
      for (const chunk of [1, 2, 3, 7, 64, 65536]) {
        const source = importFileSource(path, "screening", { json: false }, chunk);
        const lines = [...source.jsonlLines()].map(({ line, text, terminated }) => ({ line, text, terminated }));
        expect(lines, `${JSON.stringify(text.slice(0, 30))} at ${chunk}`).toEqual(wantLines);
        const csv = source.csvRecords();
        expect([...csv.records], `${JSON.stringify(text.slice(0, 30))} at ${chunk}`).toEqual(wantRecords);
        expect(csv.error()).toEqual(wantCsv.error());
      }
    }
  });

  it("reports an unreadable CSV as readCsv does", () => {
    // A quote opened and never closed (a bare quote inside a cell is text: docs/formats.md, "CSV").
    const text = 'id,text\n1,ok\n2,"bad\n3,after\n';
    const want = textSource(text).csvRecords();
    expect([...want.records]).toEqual([]);
    const got = importFileSource(file(text), "screening", { json: false }, 5).csvRecords();
    // The records before the unreadable one are handed on as they are read; error() then refuses the file.
    expect([...got.records].map((r) => r.line)).toEqual([1, 2]);
    expect(got.error()).toEqual(want.error());
    expect(got.error()!.line).toBe(3);
  });

  it("holds one line and one chunk: every line is handed on before the file past it is read", () => {
    // 40,000 lines of 100 bytes (4 MB), read 64 KiB at a time.
    const line = (i: number) => `{"id":"${String(i).padStart(8, "0")}","text":"${"x".repeat(72)}"}`;
    const lines = Array.from({ length: 40_000 }, (_, i) => line(i));
    expect(lines.every((l) => l.length === 99)).toBe(true);
    const path = file(lines.join("\n") + "\n");
    const chunk = 64 * 1024;
    const source = importFileSource(path, "grading", { json: true }, chunk);
    let count = 0;
    let ahead = 0;
    for (const l of source.jsonlLines()) {
      // l.end: the bytes up to and including this line's end (ASCII: one byte a character).
      ahead = Math.max(ahead, source.bytesRead() - l.end);
      if (l.text !== lines[count]) throw new Error(`line ${l.line} is not the file's`);
      count++;
    }
    expect(count).toBe(40_000);
    expect(source.bytesRead()).toBe(4_000_000);
    // Never more than a chunk read past the line handed on: nothing else of the file was held.
    expect(ahead).toBeLessThanOrEqual(chunk);
    expect(ahead).toBeGreaterThan(0);

    // The same of CSV records (the record on line N ends at N × 100 bytes).
    const csvPath = file(lines.map((l, i) => `${i},"${l.slice(0, 90).replace(/"/g, "'")}"`).join("\n") + "\n");
    const csvSource = importFileSource(csvPath, "screening", { json: false }, chunk);
    const csvLines = new Map<number, number>();
    let offset = 0;
    lines.forEach((l, i) => {
      offset += `${i},"${l.slice(0, 90)}"\n`.length;
      csvLines.set(i + 1, offset);
    });
    let csvAhead = 0;
    let records = 0;
    const csv = csvSource.csvRecords();
    for (const r of csv.records) {
      csvAhead = Math.max(csvAhead, csvSource.bytesRead() - csvLines.get(r.line)!);
      records++;
    }
    expect(csv.error()).toBeNull();
    expect(records).toBe(40_000);
    // csv-parse hands a record on once it has seen the byte after it: at most a chunk and the next record ahead.
    expect(csvAhead).toBeLessThanOrEqual(chunk + 100);
  });

  it("refuses a bad line as FILE:LINE: reason after handing on the lines before it, and hashes each full pass", () => {
    const good = Array.from({ length: 3000 }, (_, i) => `{"id":${i}}`);
    const withNul = file([...good, '{"id":"a\u0000"}', "{}"].join("\n"));
    const source = importFileSource(withNul, "grading", { json: true }, 1024);
    const seen: number[] = [];
    expect(() => {
      for (const l of source.jsonlLines()) seen.push(l.line);
    }).toThrow(
      new CliError(
        `${withNul}:3001: the file holds a NUL byte (U+0000), which no text of an import may contain. Nothing was imported.`,
      ),
    );
    expect(seen.length).toBeGreaterThan(2000);
    expect(seen.length).toBeLessThan(3001);
    expect(source.sha256()).toBeNull();

    const badUtf8 = file(Buffer.concat([Buffer.from(good.join("\n") + "\n"), Buffer.from([0x7b, 0xff, 0x7d, 0x0a])]));
    expect(() => [...importFileSource(badUtf8, "grading", { json: true }, 1024).jsonlLines()]).toThrow(
      /:3001: .*UTF-8.* Nothing was imported\.$/,
    );

    const ok = importFileSource(file(good.join("\n")), "grading", { json: true });
    expect([...ok.jsonlLines()]).toHaveLength(3000);
    expect(ok.sha256()).toMatch(/^[0-9a-f]{64}$/);
  });

  it("checks the size before reading and a line's length as it is read", () => {
    setImportLimitsForTests({ maxFileBytes: 1000, maxLineBytes: 100 });
    const big = file("x\n".repeat(600));
    expect(() => importFileSource(big, "grading", { json: true })).toThrow(
      /^.*: the file is 1\.2 KB; this import reads files of at most 1000 bytes\. Nothing was imported\.$/,
    );
    const long = file(`a\nb\n${"y".repeat(150)}\n`);
    expect(() => [...importFileSource(long, "grading", { json: true }).jsonlLines()]).toThrow(
      `${long}:3: the line is longer than 100 bytes, the longest this import reads. Nothing was imported.`,
    );
  });
});
