/**
 * The file reading, problem listing and plain-text tables every command shares, so that a missing file, a long list
 * of bad rows and a column of figures read the same in every command.
 */
import { createHash } from "node:crypto";
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { CliError, type CliIO } from "./command";
import { decodeUtf8 } from "../formats/strict-text";
import { StrictUtf8Stream } from "../formats/utf8-stream";
import { csvRecordsOfChunks, linesOfPieces, type ImportSource } from "../formats/import-source";
import {
  fileSizeProblem,
  ImportByteCheck,
  importLimits,
  refusalLine,
  type ImportKind,
  type TextProblem,
} from "../formats/import-contract";
import { maxOf } from "../stats/extremes";

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
  readProbe?.readWhole(path);
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

/**
 * Told how an import reads its file, for the tests that prove memory is bounded by the longest line without timing
 * (docs/reliability.md, "Memory bounded by the longest line"): each line or record `importFileSource` hands on, with
 * the bytes of the file read by then, and each file read whole.
 */
export interface ImportReadProbe {
  handedOn(path: string, line: number, bytesRead: number): void;
  readWhole(path: string): void;
}

let readProbe: ImportReadProbe | null = null;

/** Tests only: sets (or, with null, removes) the probe. */
export function probeImportReadsForTests(probe: ImportReadProbe | null): void {
  readProbe = probe;
}

/** An import's file read as a stream through the contract (see importFileSource). */
export interface ImportFileSource extends ImportSource {
  /** The file's size when it was opened (checked against the import's limit before reading). */
  readonly byteLength: number;
  /** Bytes read so far by the pass under way (for tests and measurements). */
  bytesRead(): number;
  /**
   * The file's text read again from its start, in pieces each ending after a line feed (or at the end), for a
   * reader of its own (import-gold's JSON document, `jsonElements` in app/gold/domain/json-with-lines.ts).
   */
  textPieces(): Iterable<string>;
}

/**
 * An import's file read as a stream through the contract (docs/reliability.md, "Bulk imports"): its size checked
 * against the import's limit before the first byte is read, each 64 KiB chunk through `ImportByteCheck` (line
 * length, NUL, `\u0000` in JSON, empty file) and strict UTF-8 (StrictUtf8Stream) as it is read, then handed on as
 * JSONL lines or CSV records (app/formats/import-source.ts). What is held is one chunk and one line (a line over the
 * import's limit is refused before it is held whole), never the file: memory is bounded by the longest line allowed.
 * A problem of the bytes is thrown from the iteration as the refusal `FILE:LINE: reason` (exit code 2) before the
 * line that holds it is handed on. Each pass reads the file again from its start, and hashes it as it goes: an
 * import that checks the file in a first pass and writes it in a second compares the two hashes, so that a file
 * changed between them is refused, not half imported.
 */
export function importFileSource(
  path: string,
  kind: ImportKind,
  format: { json: boolean },
  chunkBytes = 64 * 1024,
): ImportFileSource {
  const file = importFileChunks(path, kind, format, chunkBytes);
  let read = 0;
  let lastSha: string | null = null;
  function* pieces(): Generator<Uint8Array> {
    read = 0;
    const hash = createHash("sha256");
    let ready: Uint8Array[] = [];
    const utf8 = new StrictUtf8Stream((piece) => ready.push(piece));
    for (const chunk of file.chunks()) {
      read += chunk.length;
      hash.update(chunk);
      utf8.write(chunk);
      if (utf8.error) throw refused(path, utf8.error);
      yield* ready;
      ready = [];
    }
    utf8.finish();
    if (utf8.error) throw refused(path, utf8.error);
    yield* ready;
    lastSha = hash.digest("hex");
  }
  function* text(): Generator<string> {
    for (const piece of pieces()) yield Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString("utf8");
  }
  return {
    name: path,
    byteLength: file.byteLength,
    bytesRead: () => read,
    sha256: () => lastSha,
    textPieces: () => text(),
    jsonlLines: () => probed(linesOfPieces(text())),
    csvRecords: (options) => {
      const records = csvRecordsOfChunks(pieces, options);
      return { records: { [Symbol.iterator]: () => probed(records.records[Symbol.iterator]()) }, error: records.error };
    },
  };
  function* probed<L extends { line: number }>(items: Iterator<L>): Generator<L> {
    for (let next = items.next(); !next.done; next = items.next()) {
      readProbe?.handedOn(path, next.value.line, read);
      yield next.value;
    }
  }
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
  /** Put before each line (e.g. an indent under a heading). */
  prefix?: string;
}

/**
 * The lines (without line ends) listing a file's problems, at most MAX_LISTED_ISSUES of them, each
 * `FILE:LINE: reason` (`refusalLine`; `FILE: reason` for the file as a whole), as every import words a refusal
 * (docs/reliability.md, "The import contract").
 */
export function issueLines(issues: readonly Issue[], options: IssueListOptions = {}): string[] {
  const { file, kind = "error", prefix = "" } = options;
  const label = kind === "warning" ? "warning: " : "";
  const lines = issues.slice(0, MAX_LISTED_ISSUES).map((i) => `${prefix}${label}${refusalLine(file ?? "", i)}`);
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
  const columns = maxOf(rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, c) => maxOf(rows.map((r) => (r[c] ?? "").length)));
  const sep = " ".repeat(gap);
  return rows.map((r) =>
    (indent + r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join(sep)).trimEnd(),
  );
}
