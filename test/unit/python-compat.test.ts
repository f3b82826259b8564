/**
 * The Python-compatible behaviours (app/python-compat/) against CPython itself: every expected value below is read
 * from test/fixtures/python-compat/expected.json, written by test/fixtures/python-compat/generate.py with python3
 * (`python3 test/fixtures/python-compat/generate.py > test/fixtures/python-compat/expected.json`).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { pyFloatRepr } from "../../app/python-compat/float";
import { jsonDumps, jsonDumpsIndent2 } from "../../app/python-compat/json";
import { compareCodePoints, pySplitLines, pyStrip } from "../../app/python-compat/text";
import { pyStr, pyTruthy } from "../../app/python-compat/values";

const expected = JSON.parse(
  readFileSync(new URL("../fixtures/python-compat/expected.json", import.meta.url), "utf8"),
) as {
  isspace: string[];
  not_isspace: string[];
  strip: [string, string][];
  splitlines: [string, string[]][];
  sorted: string[];
  float_repr: [string, string][];
  json_dumps: { value: unknown; float_keys: string[]; indent?: number; expected: string }[];
  json_dumps_indent2: [unknown, string][];
  str: [unknown, string][];
  bool: [unknown, boolean][];
};

describe("str.strip()", () => {
  it("strips exactly the characters str.isspace() accepts", () => {
    for (const c of expected.isspace) expect(pyStrip(`${c}x${c}`)).toBe("x");
    for (const c of expected.not_isspace) expect(pyStrip(`${c}x${c}`)).toBe(`${c}x${c}`);
  });
  it.each(expected.strip)("strip(%j)", (input, output) => {
    expect(pyStrip(input)).toBe(output);
  });
});

describe("str.splitlines()", () => {
  it.each(expected.splitlines)("splitlines(%j)", (input, output) => {
    expect(pySplitLines(input)).toEqual(output);
  });
});

describe("sorted() on strings", () => {
  it("orders by code point, where JavaScript's default sort (UTF-16 units) differs", () => {
    const input = [...expected.sorted].reverse();
    expect([...input].sort(compareCodePoints)).toEqual(expected.sorted);
    expect([...input].sort()).not.toEqual(expected.sorted);
  });
  it("is antisymmetric and zero only for equal strings", () => {
    for (const a of expected.sorted)
      for (const b of expected.sorted) {
        expect(Math.sign(compareCodePoints(a, b)) + Math.sign(compareCodePoints(b, a))).toBe(0);
        expect(compareCodePoints(a, b) === 0).toBe(a === b);
      }
  });
});

describe("repr(float)", () => {
  it.each(expected.float_repr)("repr(float(%s))", (input, output) => {
    expect(pyFloatRepr(Number(input))).toBe(output);
  });
  it("writes the non-finite values as json.dumps does", () => {
    expect([NaN, Infinity, -Infinity].map(pyFloatRepr)).toEqual(["NaN", "Infinity", "-Infinity"]);
  });
});

describe("json.dumps(value, ensure_ascii=False[, indent=n]) with typed floats", () => {
  it.each(expected.json_dumps.map((c) => [JSON.stringify(c.value).slice(0, 40), c] as const))("%s", (_, c) => {
    expect(jsonDumps(c.value, { indent: c.indent ?? undefined, floatKeys: new Set(c.float_keys) })).toBe(c.expected);
  });
  it("escapes U+0085, U+2028 and U+2029, which Python writes raw; json.loads reads the same string back", () => {
    const s = "a\u0085b\u2028c\u2029d";
    expect(jsonDumps({ s })).toBe('{"s": "a\\u0085b\\u2028c\\u2029d"}');
    expect(JSON.parse(jsonDumps({ s }))).toEqual({ s });
  });
});

describe("json.dumps(value, ensure_ascii=False, indent=2) is JSON.stringify(value, null, 2) for integer data", () => {
  it.each(expected.json_dumps_indent2.map(([v, out]) => [JSON.stringify(v).slice(0, 40), v, out] as const))(
    "%s",
    (_, value, output) => {
      expect(JSON.stringify(value, null, 2)).toBe(output);
      expect(jsonDumpsIndent2(value as object)).toBe(output);
    },
  );
  it("refuses floats, which Python writes differently (1.0, 1e-07)", () => {
    expect(() => jsonDumpsIndent2({ a: [1.5] })).toThrow("integers only");
  });
});

describe("str() and bool() of JSON values", () => {
  it.each(expected.str)("str(%j)", (value, output) => {
    expect(pyStr(value)).toBe(output);
  });
  it.each(expected.bool)("bool(%j)", (value, output) => {
    expect(pyTruthy(value)).toBe(output);
  });
});
