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

/** The whole text at once: the value, and the line each element of a top-level array starts on. */
export function parseJsonWithLines(text: string): Located {
  const values: unknown[] = [];
  const elementLines: number[] = [];
  const read = jsonElements([text]);
  for (const e of read.elements) {
    values.push(e.value);
    elementLines.push(e.line);
  }
  const end = read.end();
  if (!end.ok) return end;
  return end.array ? { ok: true, value: values, elementLines } : { ok: true, value: end.value, elementLines: [] };
}

/** One element of a top-level array, and the line it starts on. */
export interface JsonElement {
  value: unknown;
  line: number;
}

/** How a JSON document ended: valid (a top-level array, or another value, given whole), or its error. */
export type JsonEnd =
  { ok: true; array: true } | { ok: true; array: false; value: unknown } | { ok: false; line: number; message: string };

/**
 * The parser over a text that arrives in pieces (docs/reliability.md, "Memory bounded by the longest line":
 * `import-gold` reads a data_gt.json of up to 1 GB this way). A top-level array's elements are handed on one at a
 * time as each is parsed, and the text before the next element is dropped, so what is held is one element and one
 * piece, never the document. The parser pulls the next piece whenever it needs a character past those it has, so it
 * answers exactly as over the whole text, wherever the pieces are cut. Hand-written rather
 * than a streaming JSON library, none being installed: it is the parser the whole-text reader used, so the errors
 * and their lines are the ones the import's refusals already gave.
 *
 * `end()`, once `elements` has been iterated to its end, says whether the document was valid; an error anywhere
 * makes it invalid, the elements before it having been handed on. A top-level value that is not an array is parsed
 * whole and given by `end()`.
 */
export function jsonElements(pieces: Iterable<string>): { elements: Iterable<JsonElement>; end(): JsonEnd } {
  let outcome: JsonEnd | null = null;
  function* elements(): Generator<JsonElement> {
    const input = pieces[Symbol.iterator]();
    let text = "";
    let exhausted = false;
    let i = 0;
    let line = 1;
    /** Makes the text reach index k, or the end of the input. */
    const ensure = (k: number) => {
      while (k >= text.length && !exhausted) {
        const next = input.next();
        if (next.done) exhausted = true;
        else text += next.value;
      }
    };
    const ch = (k: number): string | undefined => {
      ensure(k);
      return text[k];
    };
    class Failure extends Error {}
    const fail = (message: string): never => {
      throw new Failure(message);
    };
    const ws = () => {
      for (;;) {
        const c = ch(i);
        if (c === "\n") line++;
        else if (c !== " " && c !== "\t" && c !== "\r") return;
        i++;
      }
    };
    const describe = () => (ch(i) === undefined ? "the end of the file" : JSON.stringify(text[i]));
    const expect = (c: string) => {
      if (ch(i) !== c) fail(`expected ${JSON.stringify(c)} but found ${describe()}`);
      i++;
    };
    const literal = (word: string, v: unknown) => {
      ensure(i + word.length);
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
        // The plain characters, on into the next pieces (nothing is dropped inside an element: `start` stays valid).
        for (;;) {
          while (i < text.length && text[i] !== '"' && text[i] !== "\\" && text.charCodeAt(i) >= 0x20) i++;
          if (i < text.length || exhausted) break;
          ensure(i);
        }
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
        ensure(i + 12);
        const e = text[i + 1]!;
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
      ensure(i + 400);
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
      const c = ch(i);
      if (c === "{") {
        i++;
        const obj: Record<string, unknown> = {};
        ws();
        if (ch(i) === "}") {
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
          if (ch(i) === ",") i++;
          else if (ch(i) === "}") {
            i++;
            return obj;
          } else fail(`expected "," or "}" but found ${describe()}`);
        }
      }
      if (c === "[") {
        i++;
        const arr: unknown[] = [];
        ws();
        if (ch(i) === "]") {
          i++;
          return arr;
        }
        for (;;) {
          ws();
          arr.push(value(depth + 1));
          ws();
          if (ch(i) === ",") i++;
          else if (ch(i) === "]") {
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
      ws();
      let end: JsonEnd;
      if (ch(i) === "[") {
        // The top-level array, element by element (value(0) on "[" without keeping the elements).
        i++;
        ws();
        if (ch(i) === "]") i++;
        else
          for (;;) {
            ws();
            const elementLine = line;
            const v = value(1);
            yield { value: v, line: elementLine };
            // What the element was read from is no longer needed.
            text = text.slice(i);
            i = 0;
            ws();
            if (ch(i) === ",") i++;
            else if (ch(i) === "]") {
              i++;
              break;
            } else fail(`expected "," or "]" but found ${describe()}`);
          }
        end = { ok: true, array: true };
      } else end = { ok: true, array: false, value: value(0) };
      ws();
      if (ch(i) !== undefined) fail(`unexpected ${describe()} after the end of the JSON value`);
      outcome = end;
    } catch (e) {
      if (e instanceof Failure) outcome = { ok: false, line, message: `invalid JSON: ${e.message}` };
      else throw e;
    }
  }
  return {
    elements: { [Symbol.iterator]: elements },
    end() {
      if (!outcome) throw new Error("jsonElements: end() asked before the elements were all read");
      return outcome;
    },
  };
}
