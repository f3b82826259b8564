/**
 * Python's `str()` and truthiness of values read from JSON (`None`, `True`, lists, dicts), as the reference scripts
 * apply them to what `json.loads` gives.
 */
import { pyFloatRepr } from "./float";

/** Python's `str()` of a JSON value: `None`, `True`, `1`, `0.5`, `1e-07`, `['a', 1]`, `{'k': None}`. */
export function pyStr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : pyFloatRepr(v);
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`)
    .join(", ")}}`;
}

const SHORT_ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };

/**
 * Python's `repr()` of a string: single quotes unless the text holds `'` and no `"`; backslash, tab, newline, CR and
 * the other ASCII control characters escaped. Python also escapes the non-printable characters beyond ASCII (e.g.
 * U+0085 as `\x85`); that is not reproduced here.
 */
function pyReprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  const body = s.replace(
    // eslint-disable-next-line no-control-regex -- Python's repr escapes exactly these
    /[\\\x00-\x1f\x7f]/g,
    (c) => SHORT_ESCAPES[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
  return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote;
}

function pyRepr(v: unknown): string {
  return typeof v === "string" ? pyReprString(v) : pyStr(v);
}

/** Python's `bool()` of a JSON value: false for None, False, 0, "", [] and {}. */
export function pyTruthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === "") return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "object") return Object.keys(v).length > 0;
  return true;
}
