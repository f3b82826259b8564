/**
 * The two ways Concord writes JSON as Python's `json.dumps` does, each for the files that need it. Expected values
 * in test/unit/python-compat.test.ts come from python3 (the script beside the fixture in
 * test/fixtures/python-compat/).
 */
import { pyFloatRepr } from "./float";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue | undefined };

function checkIntegers(v: unknown): void {
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) throw new TypeError(`jsonDumpsIndent2 supports integers only, got ${v}`);
  } else if (Array.isArray(v)) v.forEach(checkIntegers);
  else if (v !== null && typeof v === "object") Object.values(v).forEach(checkIntegers);
  else if (typeof v !== "string" && typeof v !== "boolean" && v !== null && v !== undefined)
    throw new TypeError(`jsonDumpsIndent2 cannot write a ${typeof v}`);
}

/**
 * Python's `json.dumps(value, ensure_ascii=False, indent=2)` (the reference's data_gt.json, samples.json, Concord's
 * manifests): `JSON.stringify(value, null, 2)` writes the same bytes — items on their own lines after `,`, keys
 * followed by `: `, `[]` / `{}` when empty, non-ASCII characters raw, `"`, `\`, and U+0000–U+001F escaped with the
 * same short forms and lower-case `\u00XX`, no trailing newline, keys in insertion order, undefined members skipped
 * (written as null in arrays). Only integers are accepted as numbers: Python writes floats differently (`1.0`,
 * `1e-07`). A lone surrogate, which Python could not write as UTF-8, is escaped.
 */
export function jsonDumpsIndent2(value: JsonValue | object): string {
  checkIntegers(value);
  return JSON.stringify(value, null, 2);
}

/**
 * One element of an array written by jsonDumpsIndent2, as it appears inside the array: its lines indented by two
 * more spaces (the array's own `[`, `,` and line ends are the caller's). For a writer that writes a long array one
 * element at a time (`JsonArrayWriter` in app/gold/gold-export.server.ts): `JSON.stringify` indents it in the same
 * pass, where re-indenting the element's own text would copy it once more.
 */
export function jsonDumpsIndent2Element(value: JsonValue | object): string {
  checkIntegers(value);
  const text = JSON.stringify([value], null, 2);
  // `[\n` + the element + `\n]`
  return text.slice(2, -2);
}

// JSON.stringify leaves these raw, and so does Python with ensure_ascii=False; but Python's str.splitlines() — used
// by the reference's abstention_rate/process.py to split a .jsonl file — breaks lines at them,
// which would cut a record in two. Escaping them keeps every record on one line for every reader; json.loads reads
// the escapes back to the same string.
const LINE_BREAKERS = /[\u0085\u2028\u2029]/g;

const HAS_LINE_BREAKER = /[\u0085\u2028\u2029]/;

function jsonString(s: string): string {
  const json = JSON.stringify(s);
  if (!HAS_LINE_BREAKER.test(s)) return json;
  return json.replace(LINE_BREAKERS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export interface JsonDumpsOptions {
  /** Indent width for `json.dumps(indent=n)`; without it, one line with `, ` and `: ` separators. */
  indent?: number;
  /** Keys whose numbers Python holds as floats (`0.7`, `12.0`); other integers are written as integers. */
  floatKeys?: ReadonlySet<string>;
}

/**
 * Python's `json.dumps(value, ensure_ascii=False[, indent=n])` for records holding floats (the runner's
 * trajectories.jsonl lines, timing.json, the step log): non-ASCII characters raw except U+0085, U+2028 and U+2029
 * (escaped, see above), key order kept, undefined members skipped. Non-integer numbers are written as Python floats
 * (pyFloatRepr); integers under `floatKeys` too.
 */
export function jsonDumps(value: unknown, options: JsonDumpsOptions = {}): string {
  const indent = options.indent;
  const floatKeys = options.floatKeys ?? NO_FLOAT_KEYS;
  // The runner's records repeat the same texts (a trajectory's conversation holds every earlier message again at each
  // step): each distinct string is escaped once per call (docs/evaluation.md, "Scale").
  const strings = new Map<string, string>();
  const str = (s: string): string => {
    if (s.length < 16) return jsonString(s);
    let out = strings.get(s);
    if (out === undefined) strings.set(s, (out = jsonString(s)));
    return out;
  };
  const write = (v: unknown, depth: number, asFloat: boolean): string => {
    if (v === null || v === undefined) return "null";
    if (typeof v === "string") return str(v);
    if (typeof v === "number") return asFloat || !Number.isInteger(v) ? pyFloatRepr(v) : String(v);
    if (typeof v === "boolean") return v ? "true" : "false";
    if (typeof v !== "object") throw new TypeError(`jsonDumps cannot write a ${typeof v}`);
    const open = indent === undefined ? "" : "\n" + " ".repeat(indent * (depth + 1));
    const close = indent === undefined ? "" : "\n" + " ".repeat(indent * depth);
    const sep = indent === undefined ? ", " : "," + open;
    let out = "";
    if (Array.isArray(v)) {
      if (v.length === 0) return "[]";
      for (let i = 0; i < v.length; i++) out += (i === 0 ? "" : sep) + write(v[i], depth + 1, asFloat);
      return `[${open}${out}${close}]`;
    }
    const record = v as Record<string, unknown>;
    let first = true;
    for (const k of Object.keys(record)) {
      const m = record[k];
      if (m === undefined) continue;
      out += (first ? "" : sep) + keyString(k) + ": " + write(m, depth + 1, floatKeys.has(k));
      first = false;
    }
    return first ? "{}" : `{${open}${out}${close}}`;
  };
  return write(value, 0, false);
}

const NO_FLOAT_KEYS: ReadonlySet<string> = new Set();

/** Keys escaped once for the process (records have few distinct keys; the cache stops growing at 10,000). */
const KEYS = new Map<string, string>();
function keyString(k: string): string {
  let out = KEYS.get(k);
  if (out === undefined) {
    out = jsonString(k);
    if (KEYS.size < 10_000) KEYS.set(k, out);
  }
  return out;
}
