/**
 * The checks every import applies to the text it reads (docs/reliability.md, "Hostile and damaged files"): bytes that
 * are not UTF-8 are refused with their line, never replaced with U+FFFD; a JSON value that cannot be stored as read
 * (a lone surrogate, a number beyond a double, a key given twice, nesting deeper than any Concord file) is refused;
 * ids may not hold control characters or bidirectional overrides, and are compared in NFC; such characters in free
 * text are reported as warnings.
 */

export interface TextProblem {
  /** 1-based line of the file; 0 for the file as a whole. */
  line: number;
  message: string;
}

export const NOT_UTF8 = "the file is not valid UTF-8 here. Save it as UTF-8 and import it again.";

/** Decodes UTF-8 strictly; on failure names the first line holding an invalid byte sequence. */
export function decodeUtf8(bytes: Uint8Array): { text: string } | { error: TextProblem } {
  try {
    return { text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    let line = 1;
    let start = 0;
    for (let i = 0; i <= bytes.length; i++) {
      if (i === bytes.length || bytes[i] === 0x0a) {
        try {
          decoder.decode(bytes.subarray(start, i));
        } catch {
          return { error: { line, message: NOT_UTF8 } };
        }
        line++;
        start = i + 1;
      }
    }
    return { error: { line: 1, message: NOT_UTF8 } };
  }
}

/** No Concord file nests deeper than this; a deeper one is refused before anything walks it recursively. */
export const MAX_JSON_DEPTH = 64;

/**
 * Why a JSON text (one line of a JSONL file) cannot be taken as read, or null: a key given twice in one object
 * (JSON.parse would keep the last silently), or nesting deeper than MAX_JSON_DEPTH. A scan of the text, no recursion.
 */
export function jsonTextProblem(text: string): string | null {
  const keys: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      const top = keys[keys.length - 1];
      if (expectKey && top) {
        let key: string;
        try {
          key = JSON.parse(text.slice(i, j + 1)) as string;
        } catch {
          return null; // JSON.parse reports the syntax error
        }
        if (top.has(key)) return `the key ${JSON.stringify(key)} appears twice in one object`;
        top.add(key);
        expectKey = false;
      }
      i = j;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      keys.push(c === 0x7b ? new Set() : null);
      if (keys.length > MAX_JSON_DEPTH) return `nested deeper than ${MAX_JSON_DEPTH} levels`;
      expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      keys.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) expectKey = keys[keys.length - 1] instanceof Set;
  }
  return null;
}

// With the u flag, a surrogate half matches only when it is not part of a pair.
const LONE_SURROGATE = /[\ud800-\udfff]/u;

/**
 * Why a parsed JSON value cannot be stored as read, or null: a number JSON.parse turned into Infinity (`1e400`), or
 * a string holding a lone surrogate (`"\ud800"`), which SQLite would store as invalid UTF-8. Iterative.
 */
export function jsonValueProblem(value: unknown): string | null {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "number" && !Number.isFinite(v)) return "a number is too large to be stored";
    if (typeof v === "string" && LONE_SURROGATE.test(v))
      return "a string holds a lone surrogate (\\ud800–\\udfff escape)";
    if (typeof v === "object" && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (LONE_SURROGATE.test(k)) return "a key holds a lone surrogate (\\ud800–\\udfff escape)";
        stack.push(x);
      }
    }
  }
  return null;
}

// C0 controls, DEL, C1 controls (ESC starts ANSI sequences), and the bidirectional embedding, override and isolate
// characters that make text display in another order than it is stored ("Trojan Source").
// eslint-disable-next-line no-control-regex
const ID_FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u;
// In free text, tab, line feed and carriage return are ordinary.
// eslint-disable-next-line no-control-regex
const TEXT_SUSPECT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

function describeChar(ch: string): string {
  const code = ch.codePointAt(0)!;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  if (code === 0) return `a NUL byte (${hex})`;
  if (code === 0x1b) return `an escape character (${hex}, as in ANSI colour codes)`;
  if ((code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069) || code === 0x200e || code === 0x200f)
    return `a bidirectional control character (${hex})`;
  return `a control character (${hex})`;
}

/**
 * The longest id (in UTF-16 units) any import accepts: ids are shown, compared and written into file names and CSVs
 * (docs/formats.md, "Text policy of every import").
 */
export const MAX_ID_CHARS = 256;

/** Why an id cannot be used, or null: ids are shown, compared and written into file names and CSVs. */
export function idProblem(id: string): string | null {
  if (id.length > MAX_ID_CHARS) return `the id is ${id.length} characters long; ids are at most ${MAX_ID_CHARS}.`;
  const m = ID_FORBIDDEN.exec(id);
  return m ? `the id holds ${describeChar(m[0])}; ids may not contain control or bidirectional characters.` : null;
}

/** The form ids are stored and compared in: NFC, so that "é" typed as one code point or as e + accent is one id. */
export function normaliseId(id: string): string {
  return id.normalize("NFC");
}

/** A warning for free text holding control or bidirectional characters (kept as given), or null. */
export function textWarning(field: string, text: string | null | undefined): string | null {
  if (!text) return null;
  const m = TEXT_SUSPECT.exec(text);
  return m ? `${field} holds ${describeChar(m[0])}; kept as given, check the source.` : null;
}
