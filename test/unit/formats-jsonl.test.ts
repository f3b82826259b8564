/** The one JSONL reader (formats/jsonl.ts) and the imports that read through it. */
import { describe, expect, it } from "vitest";
import { parseCaseFile } from "../../app/annotation/domain/case-import";
import { isJsonObject, readJsonl, readJsonlValues, splitJsonlLines } from "../../app/formats/jsonl";
import { parseResponsesJsonl } from "../../app/judge-validation/domain/judge-import";
import { parseItemsFile } from "../../app/screening/domain/screening-import";
import { readJsonLines } from "../../app/evaluation/domain/runner-records";

describe("readJsonl", () => {
  it("numbers lines from 1 across LF, CRLF and lone CR, skipping blank lines and a BOM", () => {
    expect(readJsonl('\uFEFF{"a":1}\r\n\r\n  \n[2]\r"x"\n')).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 4, value: [2] },
      { line: 5, value: "x" },
    ]);
  });

  it("reports a line that does not parse with JSON.parse's reason, and goes on", () => {
    const entries = readJsonl('{"a":1}\n{"a":}\n{"b":2}');
    expect(entries[0]).toEqual({ line: 1, value: { a: 1 } });
    expect(entries[1]).toMatchObject({ line: 2, invalid: expect.stringMatching(/JSON|token/) });
    expect(entries[2]).toEqual({ line: 3, value: { b: 2 } });
  });

  it("is empty for an empty or blank file", () => {
    expect(readJsonl("")).toEqual([]);
    expect(readJsonl("\uFEFF\n \r\n")).toEqual([]);
  });

  it("readJsonlValues throws `NAME line N: reason` at the first bad line", () => {
    expect(readJsonlValues('{"a":1}\n\n{"a":1}\n', "notes")).toEqual([{ a: 1 }, { a: 1 }]);
    expect(() => readJsonlValues('{"a":1}\n\nnope\n', "notes")).toThrow(/^notes line 3: /);
  });

  it("isJsonObject accepts objects only", () => {
    expect([{}, [], null, "x", 1].map(isJsonObject)).toEqual([true, false, false, false, false]);
  });

  it("splitJsonlLines keeps offsets past each line end and marks an unterminated last line", () => {
    expect(splitJsonlLines("a\r\nb\n\nc")).toEqual([
      { line: 1, text: "a", end: 3, terminated: true },
      { line: 2, text: "b", end: 5, terminated: true },
      { line: 3, text: "", end: 6, terminated: true },
      { line: 4, text: "c", end: 7, terminated: false },
    ]);
    expect(splitJsonlLines("a\n")).toEqual([{ line: 1, text: "a", end: 2, terminated: true }]);
  });
});

describe("JSONL imports report `line N: reason` on the same lines", () => {
  const file = '\uFEFF{"id":"a","text":"x"}\r\n\r\n{"id":\r\n[1]\r\n';

  it("case import", () => {
    const r = parseCaseFile(file, { format: "jsonl", canonicalCode: () => null });
    expect(r.errors.map((e) => [e.line, e.message.slice(0, 16)])).toEqual([
      // Text under a key that is not a case field is refused, never dropped (docs/formats.md, "Case JSONL").
      [1, 'the key "text" h'],
      [3, "not valid JSON ("],
      [4, "each line must b"],
    ]);
  });

  it("screening import", () => {
    const r = parseItemsFile(file, { format: "jsonl" });
    expect(r.errors.map((e) => [e.line, e.message.slice(0, 16)])).toEqual([
      [3, "not valid JSON ("],
      [4, "each line must b"],
    ]);
  });

  it("judge-validation import", () => {
    const r = parseResponsesJsonl('{"response":"x"}\r\n\r\n{"id":\r\n[1]\r\n');
    expect(r.errors.filter((e) => e.line > 1).map((e) => [e.line, e.message.slice(0, 16)])).toEqual([
      [3, "not valid JSON: "],
      [4, "a line must be a"],
    ]);
  });

  it("the runner's append-only files: byte offsets over CRLF, a torn last line", () => {
    expect(readJsonLines('{"a":1}\r\n\r\n{"b":"é"}\n{"c"')).toEqual({
      values: [{ a: 1 }, { b: "é" }],
      validBytes: 22,
      tornTail: '{"c"',
      missingNewline: false,
      badLines: [],
    });
  });
});
