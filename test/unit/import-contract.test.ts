/**
 * The import contract's byte checks (app/formats/import-contract.ts; docs/reliability.md, "The import contract"):
 * the same answer whatever the chunks, the line of each problem counted as every reader counts lines (LF, CRLF, a
 * lone CR), and an over-long line refused before the rest of it is read.
 */
import { describe, expect, it } from "vitest";
import {
  decodeImportBytes,
  DuplicateRows,
  ImportByteCheck,
  importIdProblem,
  type ImportLimits,
} from "../../app/formats/import-contract";

const LIMITS: ImportLimits = { maxFileBytes: 1 << 20, maxLineBytes: 100 };

/** The problem the check finds in `text` fed in chunks of `size` bytes. */
function problemOf(text: string | Uint8Array, size: number, json = false, limits = LIMITS) {
  const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  const check = new ImportByteCheck(limits, json);
  for (let at = 0; at < bytes.length; at += size) if (!check.write(bytes.subarray(at, at + size))) break;
  return check.finish();
}

const SIZES = [1, 2, 3, 7, 64, 1 << 16];

describe("ImportByteCheck", () => {
  it.each(SIZES)("names the line of a NUL byte, with LF, CRLF and lone CR line ends (chunks of %i)", (size) => {
    expect(problemOf("a\nb\nc\u0000d\n", size)).toMatchObject({ line: 3, message: expect.stringMatching(/NUL byte/) });
    expect(problemOf("a\r\nb\r\nc\u0000d\r\n", size)).toMatchObject({ line: 3 });
    expect(problemOf("a\rb\rc\u0000d\r", size)).toMatchObject({ line: 3 });
    expect(problemOf("a\r\n\r\nc\u0000", size)).toMatchObject({ line: 3 });
  });

  it.each(SIZES)("refuses a line over the limit at its line, at once (chunks of %i)", (size) => {
    const long = "x".repeat(101);
    expect(problemOf(`ok\n${"y".repeat(100)}\n${long}\nmore\n`, size)).toMatchObject({
      line: 3,
      message: expect.stringMatching(/longer than 100 bytes/),
    });
    expect(problemOf(`ok\r\n${long}`, size)).toMatchObject({ line: 2 });
    expect(problemOf(`${"y".repeat(100)}\r\n${"y".repeat(100)}\r${"y".repeat(100)}\n`, size)).toBeNull();
  });

  it("stops reading a hostile line after the limit, not at its end", () => {
    const check = new ImportByteCheck(LIMITS, false);
    const chunk = Buffer.alloc(64, 0x61);
    let chunks = 0;
    while (check.write(chunk)) chunks++;
    expect(chunks).toBe(1);
    expect(check.problem).toMatchObject({ line: 1 });
  });

  it.each(SIZES)("refuses a \\u0000 escape in a JSON file, not an escaped backslash (chunks of %i)", (size) => {
    expect(problemOf('{"a": "x"}\n{"a": "y\\u0000z"}\n', size, true)).toMatchObject({
      line: 2,
      message: expect.stringMatching(/NUL character/),
    });
    expect(problemOf('{"a": "y\\\\u0000z"}\n', size, true)).toBeNull();
    expect(problemOf('{"a": "y\\\\\\u0000z"}\n', size, true)).toMatchObject({ line: 1 });
    // In a CSV the same six characters are text.
    expect(problemOf("a,y\\u0000z\n", size, false)).toBeNull();
  });

  it("refuses an empty file, one of white space, and one of a BOM only", () => {
    for (const text of ["", " \n\r\n\t", "\ufeff", "\ufeff\n"]) expect(problemOf(text, 3)?.message).toMatch(/empty/);
    expect(problemOf("\ufeffa", 1)).toBeNull();
  });

  it("refuses a file over its limit, also when it grows past its checked size", () => {
    expect(problemOf("a".repeat(50) + "\n", 8, false, { maxFileBytes: 40, maxLineBytes: 100 })).toMatchObject({
      line: 0,
      message: "the file is larger than 40 bytes, the most this import reads.",
    });
  });
});

describe("decodeImportBytes", () => {
  it("decodes strict UTF-8 and names the line of a bad byte (never U+FFFD)", () => {
    expect(decodeImportBytes(Buffer.from("a\nb\n"), LIMITS, { json: false })).toEqual({ text: "a\nb\n" });
    const bad = Buffer.from("a\nb\nc\n");
    bad[4] = 0xff;
    expect(decodeImportBytes(bad, LIMITS, { json: false })).toMatchObject({
      problem: { line: 3, message: expect.stringMatching(/not valid UTF-8/) },
    });
  });
});

describe("ids and duplicates", () => {
  it("refuses an id over 256 characters or holding NUL", () => {
    expect(importIdProblem("a".repeat(256))).toBeNull();
    expect(importIdProblem("a".repeat(257), "the case id")).toBe(
      "the case id is 257 characters long; ids are at most 256.",
    );
    expect(importIdProblem("a\u0000b")).toMatch(/NUL/);
  });

  it("names both lines of a conflicting duplicate and lets an identical one be the import's call", () => {
    const rows = new DuplicateRows();
    expect(rows.see("c1", 2, "x")).toBeNull();
    expect(rows.see("c1", 5, "x")).toEqual({ repeat: 2 });
    expect(rows.see("c1", 7, "y")).toEqual({
      conflict: 'the id "c1" is given twice with different content: on line 2 and on line 7.',
    });
  });
});
