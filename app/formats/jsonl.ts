/**
 * The JSON Lines reader of every JSONL file Concord reads (case, screening and judge-validation imports, trajectory
 * files, the runner's own append-only files): one JSON value per line, lines numbered from 1 as LineCounter counts
 * them (LF, CRLF or a lone CR ends a line), blank lines skipped, a leading BOM dropped. Each reader words its own
 * messages from `line` and the parser's reason.
 */
import { jsonTextProblem, jsonValueProblem } from "./strict-text";

export interface JsonlLine {
  /** 1-based line number. */
  line: number;
  /** The line without its line end. */
  text: string;
  /** Offset in the text just past the line end (or the end of the text). */
  end: number;
  /** False for a last line that no line end closes. */
  terminated: boolean;
}

/** Every physical line of the text, blank ones included; a final line end does not open an empty last line. */
export function splitJsonlLines(text: string): JsonlLine[] {
  const out: JsonlLine[] = [];
  let start = 0;
  let line = 0;
  while (start < text.length) {
    line++;
    let i = start;
    while (i < text.length && text[i] !== "\n" && text[i] !== "\r") i++;
    if (i === text.length) {
      out.push({ line, text: text.slice(start), end: i, terminated: false });
      break;
    }
    const end = text[i] === "\r" && text[i + 1] === "\n" ? i + 2 : i + 1;
    out.push({ line, text: text.slice(start, i), end, terminated: true });
    start = end;
  }
  return out;
}

export type JsonlEntry = { line: number; value: unknown } | { line: number; invalid: string };

/**
 * The values of a JSONL file, one entry per non-blank line in file order: `value`, or `invalid` with JSON.parse's
 * reason (`Unexpected token '}', "{"a":}" is not valid JSON`) for a line that does not parse.
 */
export function readJsonl(text: string): JsonlEntry[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const entries: JsonlEntry[] = [];
  for (const { line, text: lineText } of splitJsonlLines(body)) {
    const entry = readJsonlLine(line, lineText);
    if (entry) entries.push(entry);
  }
  return entries;
}

/** One line of a JSONL file as readJsonl reads it (line numbered `line`), or null for a blank line. */
export function readJsonlLine(line: number, lineText: string): JsonlEntry | null {
  if (lineText.trim() === "") return null;
  let value: unknown;
  try {
    value = JSON.parse(lineText);
  } catch (e) {
    return { line, invalid: (e as Error).message };
  }
  // What JSON.parse accepts but would store otherwise than written (docs/reliability.md, "Hostile and damaged files").
  const problem = jsonTextProblem(lineText) ?? jsonValueProblem(value);
  return problem ? { line, invalid: problem } : { line, value };
}

/** A JSON object (not an array or null), as every JSONL import requires of a line. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The values of a JSONL file that must be valid (shipped data): throws `NAME line N: reason` at the first bad line. */
export function readJsonlValues(text: string, name: string): unknown[] {
  return readJsonl(text).map((entry) => {
    if ("invalid" in entry) throw new Error(`${name} line ${entry.line}: ${entry.invalid}`);
    return entry.value;
  });
}
