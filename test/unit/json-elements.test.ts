/**
 * The strict JSON parser over pieces (`jsonElements` in app/gold/domain/json-with-lines.ts; docs/reliability.md,
 * "Memory bounded by the longest line"): wherever a document is cut, it answers as over the whole text — the same
 * elements with the same lines, the same error on the same line — and it holds one element, not the document.
 */
import { describe, expect, it } from "vitest";
import { jsonElements, parseJsonWithLines } from "../../app/gold/domain/json-with-lines";

/** The document cut every `size` characters, and read through jsonElements. */
function streamed(text: string, size: number) {
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  const read = jsonElements(pieces);
  const elements = [...read.elements];
  const end = read.end();
  if (!end.ok) return end;
  return end.array
    ? { ok: true, value: elements.map((e) => e.value), elementLines: elements.map((e) => e.line) }
    : { ok: true, value: end.value, elementLines: [] };
}

const record = (i: number) =>
  JSON.stringify(
    { id: `c${i}`, text: `Line one\nsaid "hi" \u00e9\u{1f600} \\ ${i}`, n: i * 1.5e-3, ok: i % 2 === 0, none: null },
    null,
    2,
  );

const DOCUMENTS = [
  `[\n${Array.from({ length: 40 }, (_, i) => record(i)).join(",\n")}\n]\n`,
  "[]",
  " [ ] ",
  '{"a": [1, 2, {"b": "c"}]}',
  '"just a string"',
  "[1, 2,]",
  '[\n{"id": "a"},\n{"id": "b", "id": "c"}\n]',
  '[\n{"id": "a"}\n{"id": "b"}]',
  '[\n"unterminated',
  '[\n"\\ud800"]',
  '[\n"bad \\x escape"]',
  '[\n"tab\there"]',
  "[1e400]",
  "[tru]",
  "[true, false, null, -0.5e+3]",
  "[1] x",
  "[" + "[".repeat(70) + "]".repeat(70) + "]",
  "",
  "  \n ",
  '[\n{"a": 1},\n{"b": [1, 2, 3]}\n',
];

describe("jsonElements", () => {
  it.each(DOCUMENTS.map((d, k) => [k, d] as const))("document %i reads as the whole text at every cut", (_, doc) => {
    const whole = parseJsonWithLines(doc);
    for (const size of [1, 2, 3, 5, 7, 13, 64, 1000]) expect(streamed(doc, size)).toEqual(whole);
  });

  it("hands each element on as soon as it is read, and holds one element, not the document", () => {
    const elements = 2_000;
    const body = Array.from({ length: elements }, (_, i) => record(i));
    const pieces = ["[\n", ...body.flatMap((r, i) => (i ? [",\n", r] : [r])), "\n]\n"];
    // Where each element ends in the text.
    const ends: number[] = [];
    let at = 2;
    for (const [i, r] of body.entries()) {
      at += (i ? 2 : 0) + r.length;
      ends.push(at);
    }
    const longest = Math.max(...pieces.map((p) => p.length));
    let pulled = 0;
    const read = jsonElements(
      (function* () {
        for (const p of pieces) {
          pulled += p.length;
          yield p;
        }
      })(),
    );
    let handed = 0;
    for (const e of read.elements) {
      // Read past the element's end: at most a number's 400 characters of look-ahead and the piece holding them.
      expect(pulled - ends[handed]!).toBeLessThanOrEqual(400 + longest);
      expect((e.value as { id: string }).id).toBe(`c${handed}`);
      handed++;
    }
    expect(handed).toBe(elements);
    expect(read.end()).toEqual({ ok: true, array: true });
  });
});
