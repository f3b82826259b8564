/**
 * The file reading, problem listing and plain-text tables every command shares, so that a missing file, a long list
 * of bad rows and a column of figures read the same in every command.
 */
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { CliError, type CliIO } from "./command";
import { decodeUtf8 } from "../formats/strict-text";
import { StrictUtf8Stream } from "../formats/utf8-stream";
import {
  fileSizeProblem,
  ImportByteCheck,
  importLimits,
  refusalLine,
  type ImportKind,
  type TextProblem,
} from "../formats/import-contract";

function readFailure(path: string, e: unknown): CliError {
  const code = (e as NodeJS.ErrnoException).code;
  return new CliError(`cannot read ${path}: ${code === "ENOENT" ? "no such file" : (e as Error).message}.`);
}

/** A whole file's bytes; a missing or unreadable file, or one larger than `maxBytes`, is a usage error. */
export function readBytes(path: string, maxBytes?: number): Buffer {
  try {
    if (maxBytes !== undefined && statSync(path).size > maxBytes)
      throw new CliError(`${path} is larger than ${maxBytes / 1024 / 1024} MB.`);
    return readFileSync(path);
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw readFailure(path, e);
  }
}

/**
 * A file to be read in chunks (docs/reliability.md, "Bulk imports"): its size now, and its bytes in fresh buffers of
 * about `chunkBytes`, read one at a time as the caller iterates (each call of `chunks` reads from the start), with
 * readBytes's errors. A caller may keep a chunk: none is reused.
 */
export function fileChunks(path: string, chunkBytes = 64 * 1024): { byteLength: number; chunks(): Generator<Buffer> } {
  let byteLength: number;
  try {
    byteLength = statSync(path).size;
  } catch (e) {
    throw readFailure(path, e);
  }
  return {
    byteLength,
    *chunks() {
      let fd: number;
      try {
        fd = openSync(path, "r");
      } catch (e) {
        throw readFailure(path, e);
      }
      try {
        for (;;) {
          const buffer = Buffer.allocUnsafe(chunkBytes);
          let got: number;
          try {
            got = readSync(fd, buffer, 0, chunkBytes, null);
          } catch (e) {
            throw readFailure(path, e);
          }
          if (got === 0) break;
          yield buffer.subarray(0, got);
        }
      } finally {
        closeSync(fd);
      }
    },
  };
}

/**
 * A whole file as UTF-8 text (a BOM is kept, for the reader to drop), with readBytes's errors; bytes that are not
 * UTF-8 are refused as `FILE:LINE: reason`, never replaced (docs/reliability.md, "Hostile and damaged files").
 */
export function readText(path: string, maxBytes?: number): string {
  const decoded = decodeUtf8(readBytes(path, maxBytes));
  if ("error" in decoded) throw new CliError(`${path}:${decoded.error.line}: ${decoded.error.message}`);
  return decoded.text;
}

/**
 * A file as UTF-8 text in chunks of about `chunkBytes`, read one at a time as the caller iterates (a character split
 * across two reads is decoded whole), with readBytes's errors; for files too large to hold as one string.
 */
export function* readTextChunks(path: string, chunkBytes = 4 << 20): Generator<string> {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    throw readFailure(path, e);
  }
  try {
    const buffer = Buffer.allocUnsafe(chunkBytes);
    const decoder = new StringDecoder("utf8");
    for (;;) {
      let got: number;
      try {
        got = readSync(fd, buffer, 0, chunkBytes, null);
      } catch (e) {
        throw readFailure(path, e);
      }
      if (got === 0) break;
      yield decoder.write(buffer.subarray(0, got));
    }
    const rest = decoder.end();
    if (rest !== "") yield rest;
  } finally {
    closeSync(fd);
  }
}

/** An import's refusal of its file: `FILE:LINE: reason`, exit code 2, nothing written. */
function refused(path: string, problem: TextProblem): CliError {
  return new CliError(`${refusalLine(path, problem)} Nothing was imported.`);
}

/**
 * An import's file read in chunks through the import contract (app/formats/import-contract.ts; docs/reliability.md,
 * "The import contract"): its size is checked against the import's limit before the first byte is read, and each
 * chunk for NUL bytes (and `\u0000` escapes in a JSON file) and over-long lines as it is read, so a hostile file is
 * refused after at most one line over the limit. Throws the refusal (`FILE:LINE: reason`, exit code 2) from the
 * iteration, before the chunk that holds the problem is handed on; an empty file is refused at the end.
 */
export function importFileChunks(
  path: string,
  kind: ImportKind,
  format: { json: boolean },
  chunkBytes = 64 * 1024,
): { byteLength: number; chunks(): Generator<Buffer> } {
  const limits = importLimits(kind);
  const file = fileChunks(path, chunkBytes);
  const size = fileSizeProblem(file.byteLength, limits);
  if (size) throw refused(path, size);
  return {
    byteLength: file.byteLength,
    *chunks() {
      const check = new ImportByteCheck(limits, format.json);
      for (const chunk of file.chunks()) {
        if (!check.write(chunk)) throw refused(path, check.problem!);
        yield chunk;
      }
      const problem = check.finish();
      if (problem) throw refused(path, problem);
    },
  };
}

/** An import's whole file as bytes, read through the contract (see importFileChunks). */
export function readImportBytes(path: string, kind: ImportKind, format: { json: boolean }): Buffer {
  const parts: Buffer[] = [];
  for (const chunk of importFileChunks(path, kind, format).chunks()) parts.push(chunk);
  return Buffer.concat(parts);
}

/**
 * An import's whole file as strict UTF-8 text, read through the contract (see importFileChunks); bytes that are not
 * UTF-8 are refused with their line. A BOM is kept, for the reader to drop.
 */
export function readImportFile(path: string, kind: ImportKind, format: { json: boolean }): string {
  const decoded = decodeUtf8(readImportBytes(path, kind, format));
  if ("error" in decoded) throw refused(path, decoded.error);
  return decoded.text;
}

/**
 * Checks an import's file through the contract (see importFileChunks) and as strict UTF-8 without keeping it, for an
 * import that then reads the file line by line itself: what it holds is one line at most.
 */
export function checkImportFile(path: string, kind: ImportKind, format: { json: boolean }): void {
  const utf8 = new StrictUtf8Stream(() => {});
  for (const chunk of importFileChunks(path, kind, format).chunks()) {
    utf8.write(chunk);
    if (utf8.error) throw refused(path, utf8.error);
  }
  utf8.finish();
  if (utf8.error) throw refused(path, utf8.error);
}

/** At most this many problems are printed for one file; the rest are counted. */
export const MAX_LISTED_ISSUES = 50;

export interface Issue {
  /** 1-based line in the file; 0 for the file as a whole. */
  line: number;
  message: string;
}

export interface IssueListOptions {
  /** The file the lines are in, named before each problem. */
  file?: string;
  kind?: "error" | "warning";
  /**
   * `file:line` (`data.csv:4: message`, as compilers write it) or `line N` (`data.csv: line 4: message`, or
   * `line 4: message` without a file).
   */
  style?: "file:line" | "line N";
  /** Put before each line (e.g. an indent under a heading). */
  prefix?: string;
}

/** The lines (without line ends) listing a file's problems, at most MAX_LISTED_ISSUES of them. */
export function issueLines(issues: readonly Issue[], options: IssueListOptions = {}): string[] {
  const { file, kind = "error", style = "file:line", prefix = "" } = options;
  const label = kind === "warning" ? "warning: " : "";
  const where = (line: number) => {
    if (style === "line N") return `${file !== undefined ? `${file}: ` : ""}${line > 0 ? `line ${line}: ` : ""}`;
    return `${file ?? ""}${line > 0 ? `:${line}` : ""}: `;
  };
  const lines = issues.slice(0, MAX_LISTED_ISSUES).map((i) => `${prefix}${label}${where(i.line)}${i.message}`);
  if (issues.length > MAX_LISTED_ISSUES)
    lines.push(
      `${prefix}… and ${issues.length - MAX_LISTED_ISSUES} more ${kind}s${file !== undefined ? ` in ${file}` : ""}`,
    );
  return lines;
}

/** Prints issueLines on standard error. */
export function listIssues(io: CliIO, issues: readonly Issue[], options: IssueListOptions = {}): void {
  for (const line of issueLines(issues, options)) io.err(`${line}\n`);
}

/**
 * Rows as aligned columns: the first column left-aligned, the others right-aligned (figures), `gap` spaces between
 * columns, each line indented and without trailing spaces.
 */
export function table(rows: readonly (readonly string[])[], options: { indent?: string; gap?: number } = {}): string[] {
  const { indent = "  ", gap = 2 } = options;
  if (rows.length === 0) return [];
  const columns = Math.max(...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  const sep = " ".repeat(gap);
  return rows.map((r) =>
    (indent + r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join(sep)).trimEnd(),
  );
}
