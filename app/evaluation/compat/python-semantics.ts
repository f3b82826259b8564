/**
 * The Python semantics the Safe-Psych evaluation scripts rely on, reproduced for their emulations in this folder:
 * `str()` of JSON values, `strip()`, truthiness, `dict.get` defaults (a key present with null is null), `int()`,
 * `round(x, 2)`, line iteration, and a `ScriptCrash` wherever the script would raise.
 */
import { compareCodePoints, pyStrip } from "../../python-compat/text";
import { pyStr, pyTruthy } from "../../python-compat/values";

export { pyStr, pyTruthy };

/** The script would raise here; its message says what Python would have said. */
export class ScriptCrash extends Error {}

export type Py = unknown;
export type Dict = Record<string, unknown>;

export const isDict = (v: Py): v is Dict => typeof v === "object" && v !== null && !Array.isArray(v);

export function typeName(v: Py): string {
  if (v === null || v === undefined) return "NoneType";
  if (Array.isArray(v)) return "list";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (typeof v === "string") return "str";
  return "dict";
}

/** `obj.get(key, default)`: AttributeError on anything but a dict. */
export function get(obj: Py, key: string, fallback: Py = null): Py {
  if (!isDict(obj)) throw new ScriptCrash(`AttributeError: '${typeName(obj)}' object has no attribute 'get'`);
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : fallback;
}

/** `obj[key]`: KeyError when absent. */
export function item(obj: Py, key: string): Py {
  const v = get(obj, key, undefined);
  if (v === undefined) throw new ScriptCrash(`KeyError: '${key}'`);
  return v;
}

/** `normalize_text`: "" for None, else `str(value).strip()`. */
export const normalizeText = (v: Py): string => (v === null || v === undefined ? "" : pyStrip(pyStr(v)));

/** `isinstance(v, int)` for a JSON value (booleans are ints in Python). */
export const isPyInt = (v: Py): v is number | boolean =>
  (typeof v === "number" && Number.isInteger(v)) || typeof v === "boolean";
export const pyIntValue = (v: number | boolean): number => (typeof v === "boolean" ? (v ? 1 : 0) : v);

/** `int(text)` of a stripped string (ASCII digits, sign, underscores between digits); null where Python raises ValueError. */
export function pyInt(text: string): number | null {
  const t = pyStrip(text);
  return /^[+-]?\d+(_\d+)*$/.test(t) ? Number(t.replace(/_/g, "")) : null;
}

/** `int(float(text))`; null on ValueError. */
export function pyIntOfFloat(text: string): number | null {
  const t = pyStrip(text).toLowerCase().replace(/_/g, "");
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return null;
  return Math.trunc(Number(t));
}

/** Python's `round(x, 2)`: half-even on the exact binary value. */
export function pyRound2(x: number): number {
  if (!Number.isFinite(x)) return x;
  const exact = Math.abs(x).toFixed(60);
  const dot = exact.indexOf(".");
  const kept = exact.slice(0, dot + 3);
  const rest = exact.slice(dot + 3);
  let rounded = Number(kept);
  const half = rest[0] === "5" && /^5(0*)$/.test(rest);
  if (rest > "5" && !half) rounded = Number((Number(kept) + 0.01).toFixed(2));
  else if (half && Number(kept.replace(".", "")) % 2 === 1) rounded = Number((Number(kept) + 0.01).toFixed(2));
  return x < 0 ? -rounded : rounded;
}

/** The scripts' `pct`: `round(100 * k / n, 2) if n else 0.0`. */
export const pct = (k: number, n: number): number => (n > 0 ? pyRound2((100 * k) / n) : 0);

/** Lines of a text file as Python iterates them (universal newlines). */
export const fileLines = (text: string): string[] => text.split(/\r\n|\r|\n/);

export function jsonLoads(text: string, where: string): Py {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ScriptCrash(`json.decoder.JSONDecodeError in ${where}: ${(e as Error).message}`);
  }
}

/** `load_jsonl` that skips malformed lines (clarification, premature, accuracy scripts). */
export function loadJsonlSkipping(text: string): Py[] {
  const out: Py[] = [];
  for (const line of fileLines(text)) {
    const l = pyStrip(line);
    if (!l) continue;
    try {
      out.push(JSON.parse(l));
    } catch {
      // the script prints "Skipping malformed JSON" and goes on
    }
  }
  return out;
}

/** `sorted(trajectory, key=lambda x: x.get("step_index", 999))` — TypeError on keys Python cannot compare. */
export function sortedSteps(trajectory: Py): Py[] {
  const steps = iterate(trajectory);
  const keyed = steps.map((s, i) => ({ s, k: get(s, "step_index", 999), i }));
  const numeric = (k: Py) => typeof k === "number" || typeof k === "boolean";
  if (keyed.length > 1) {
    const allNum = keyed.every((x) => numeric(x.k));
    const allStr = keyed.every((x) => typeof x.k === "string");
    if (!allNum && !allStr)
      throw new ScriptCrash("TypeError: '<' not supported between step_index values of different types");
    keyed.sort((a, b) => {
      const ka = allNum ? Number(a.k) : (a.k as string);
      const kb = allNum ? Number(b.k) : (b.k as string);
      return ka < kb ? -1 : ka > kb ? 1 : a.i - b.i;
    });
  }
  return keyed.map((x) => x.s);
}

/** `for x in value`: lists iterate, dicts iterate their keys, strings their characters, None raises. */
export function iterate(value: Py): Py[] {
  if (Array.isArray(value)) return value;
  if (typeof value === "string") return [...value];
  if (isDict(value)) return Object.keys(value);
  throw new ScriptCrash(`TypeError: '${typeName(value)}' object is not iterable`);
}

export type ScriptOutput<T> = ({ status: "ok" } & T) | { status: "crashed"; error: string };

export function guard<T>(run: () => T): ScriptOutput<T> {
  try {
    return { status: "ok", ...run() };
  } catch (e) {
    if (e instanceof ScriptCrash) return { status: "crashed", error: e.message };
    throw e;
  }
}

/** Python's `<` on two values of one type: code points for strings. */
export const cmp = (a: Py, b: Py): number =>
  typeof a === "string" && typeof b === "string"
    ? compareCodePoints(a, b)
    : a === b
      ? 0
      : (a as number) < (b as number)
        ? -1
        : 1;
export const byKeys =
  (...keys: string[]) =>
  (a: Dict, b: Dict) => {
    for (const k of keys) {
      const c = cmp(a[k], b[k]);
      if (c !== 0) return c;
    }
    return 0;
  };
