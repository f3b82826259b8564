/** A strict JSON parser that knows where each top-level element starts, so that errors can name a line. */
import { MAX_JSON_DEPTH } from "../../formats/strict-text";

const SIMPLE_ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

type Located = { ok: true; value: unknown; elementLines: number[] } | { ok: false; line: number; message: string };

export function parseJsonWithLines(text: string): Located {
  let i = 0;
  let line = 1;
  const elementLines: number[] = [];
  class Failure extends Error {}
  const fail = (message: string): never => {
    throw new Failure(message);
  };
  const ws = () => {
    for (;;) {
      const c = text[i];
      if (c === "\n") line++;
      else if (c !== " " && c !== "\t" && c !== "\r") return;
      i++;
    }
  };
  const expect = (c: string) => {
    if (text[i] !== c) fail(`expected ${JSON.stringify(c)} but found ${describe()}`);
    i++;
  };
  const describe = () => (i >= text.length ? "the end of the file" : JSON.stringify(text[i]));
  const literal = (word: string, v: unknown) => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return v;
    }
    return fail(`unexpected ${describe()}`);
  };
  const string = (): string => {
    expect('"');
    let out = "";
    for (;;) {
      const start = i;
      while (i < text.length && text[i] !== '"' && text[i] !== "\\" && text.charCodeAt(i) >= 0x20) i++;
      out += text.slice(start, i);
      if (i >= text.length) fail("unterminated string");
      const c = text[i];
      if (c === '"') {
        i++;
        return out;
      }
      if (c !== "\\") {
        const code = text.charCodeAt(i).toString(16).padStart(4, "0");
        fail(`a control character must be escaped in a string (U+${code})`);
      }
      const e = text[i + 1];
      if (e in SIMPLE_ESCAPES) {
        out += SIMPLE_ESCAPES[e];
        i += 2;
      } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
        const code = parseInt(text.slice(i + 2, i + 6), 16);
        const low = /^\\u[dD][c-fC-F][0-9a-fA-F]{2}$/.test(text.slice(i + 6, i + 12));
        if (code >= 0xdc00 && code <= 0xdfff)
          fail("a lone surrogate escape in a string (\\udc00–\\udfff without a high half)");
        if (code >= 0xd800 && code <= 0xdbff) {
          if (!low) fail("a lone surrogate escape in a string (\\ud800–\\udbff without a low half)");
          out += String.fromCharCode(code, parseInt(text.slice(i + 8, i + 12), 16));
          i += 12;
          continue;
        }
        out += String.fromCharCode(code);
        i += 6;
      } else fail("invalid escape in a string");
    }
  };
  const number = (): number => {
    const m = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (!m) return fail(`unexpected ${describe()}`);
    i += m[0].length;
    const n = Number(m[0]);
    if (!Number.isFinite(n)) fail(`the number ${m[0].slice(0, 40)} is too large`);
    return n;
  };
  const value = (depth: number): unknown => {
    // Refused before the recursion can exhaust the stack; no data_gt.json nests deeper than a few levels.
    if (depth > MAX_JSON_DEPTH) fail(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const obj: Record<string, unknown> = {};
      ws();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        const keyLine = line;
        const key = string();
        if (Object.prototype.hasOwnProperty.call(obj, key)) {
          line = keyLine;
          fail(`duplicate key ${JSON.stringify(key)}`);
        }
        ws();
        expect(":");
        const v = value(depth + 1);
        Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "}") {
          i++;
          return obj;
        } else fail(`expected "," or "}" but found ${describe()}`);
      }
    }
    if (c === "[") {
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        ws();
        if (depth === 0) elementLines.push(line);
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") {
          i++;
          return arr;
        } else fail(`expected "," or "]" but found ${describe()}`);
      }
    }
    if (c === '"') return string();
    if (c === "t") return literal("true", true);
    if (c === "f") return literal("false", false);
    if (c === "n") return literal("null", null);
    return number();
  };
  try {
    const v = value(0);
    ws();
    if (i < text.length) fail(`unexpected ${describe()} after the end of the JSON value`);
    return { ok: true, value: v, elementLines };
  } catch (e) {
    if (e instanceof Failure) return { ok: false, line, message: `invalid JSON: ${e.message}` };
    throw e;
  }
}
