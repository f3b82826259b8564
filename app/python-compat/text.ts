/**
 * Python's string behaviours that JavaScript's differ from: `str.strip()`, `str.splitlines()` and the order of
 * `sorted()` on strings. Expected values in test/unit/python-compat.test.ts come from python3 (the script beside the
 * fixture in test/fixtures/python-compat/).
 */

/**
 * Python's `str.strip()` with no argument: strips the characters `str.isspace()` accepts, which include
 * U+001C..U+001F and U+0085 but not U+FEFF (JavaScript's `trim()` strips U+FEFF and not U+001C..U+001F or U+0085).
 */
const PY_WHITESPACE =
  "\\t\\n\\x0b\\x0c\\r\\x1c\\x1d\\x1e\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_STRIP = new RegExp(`^[${PY_WHITESPACE}]+|[${PY_WHITESPACE}]+$`, "g");

/** One code unit that `str.isspace()` accepts (the class of PY_WHITESPACE). */
function isPySpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

export function pyStrip(text: string): string {
  // Most text has nothing to strip: two code units tell (an import strips every cell of every row).
  if (text === "" || (!isPySpace(text.charCodeAt(0)) && !isPySpace(text.charCodeAt(text.length - 1)))) return text;
  return text.replace(PY_STRIP, "");
}

/** Python's `str.splitlines()` boundaries; a final line break does not open an empty last line. */
/* eslint-disable no-control-regex -- Python counts these control characters as line breaks */
const PY_LINE_BREAK = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;
const PY_FINAL_LINE_BREAK = /[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]$/;
/* eslint-enable no-control-regex */

export function pySplitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(PY_LINE_BREAK);
  if (PY_FINAL_LINE_BREAK.test(text)) lines.pop();
  return lines;
}

/**
 * Compares strings by Unicode code point, as Python's `sorted` does (JavaScript's `<` and default sort compare UTF-16
 * units, which put U+E000..U+FFFF after the astral planes' surrogates).
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Outside the surrogates a UTF-16 unit is its code point; inside, compare the whole code points from the pair's
    // start (the units before i are equal, so a pair split at i starts at i - 1 in both strings).
    if ((x & 0xf800) !== 0xd800 && (y & 0xf800) !== 0xd800) return x - y;
    const at = i > 0 && (a.charCodeAt(i - 1) & 0xfc00) === 0xd800 ? i - 1 : i;
    return a.codePointAt(at)! - b.codePointAt(at)!;
  }
  return a.length - b.length;
}
