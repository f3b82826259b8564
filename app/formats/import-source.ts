/**
 * An import's input, read line by line (JSONL) or record by record (CSV), whatever it comes from: a text already in
 * memory (a page's upload, a test) or a file streamed from disk by the command line (`importFileSource` in
 * app/cli/io.ts). Every import's parser reads through one (docs/reliability.md, "Bulk imports": memory bounded by
 * the longest line, not by the file). Each call of `jsonlLines` or `csvRecords` reads the input again from its
 * start, so an import can check the whole input in a first pass and write it in a second, holding no more than a
 * line (or a record) and what its checks keep between lines.
 *
 * The lines and records are exactly those of `splitJsonlLines` and `readCsv` over the whole text (a leading BOM
 * dropped; LF, CRLF and a lone CR end a line), so an import answers the same whether its file was streamed or read
 * whole. Server and command line only (csv-parse uses Node's Buffer).
 */
import { createHash } from "node:crypto";
import { CsvRecordStream, readCsv, type CsvReadError, type CsvReadOptions, type CsvRecord } from "./csv";
import { readJsonlLine, splitJsonlLines, type JsonlEntry, type JsonlLine } from "./jsonl";

/** The records of a CSV input as they are read, and once they are all read, whether it could be read at all. */
export interface CsvRecords {
  records: Iterable<CsvRecord>;
  /**
   * After `records` has been iterated to its end: the unreadable record that stopped the reader (readCsv's error
   * for the whole text), or null. The records before it were handed on; an import that finds an error here refuses
   * the input as readCsv's error alone.
   */
  error(): CsvReadError | null;
}

export interface ImportSource {
  /** The name the refusals give (the file's path, or the upload's name). */
  readonly name: string;
  /** Every physical line, blank ones included, numbered from 1 (splitJsonlLines over the text, BOM dropped). */
  jsonlLines(): Iterable<JsonlLine>;
  /** The CSV records (readCsv over the text), each with the line it starts on. */
  csvRecords(options?: CsvReadOptions): CsvRecords;
  /**
   * The sha256 of the input's bytes as the last pass read to its end read them, or null before one has: an import
   * that reads its file twice compares the passes, so that a file changed between them is refused.
   */
  sha256(): string | null;
}

/** An input already in memory as one text (a page's upload; the command line streams its files instead). */
export function textSource(text: string, name = ""): ImportSource {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return {
    name,
    sha256: () => createHash("sha256").update(text, "utf8").digest("hex"),
    jsonlLines: () => splitJsonlLines(body),
    csvRecords(options) {
      const read = readCsv(body, options);
      return "error" in read ? { records: [], error: () => read.error } : { records: read.records, error: () => null };
    },
  };
}

/**
 * The lines of a text that arrives in pieces, each ending just after a line feed (or the input's end), as
 * StrictUtf8Stream hands them on: numbered across pieces as splitJsonlLines numbers them over the whole text. The
 * first piece's BOM is dropped. Holds one piece at a time.
 */
export function* linesOfPieces(pieces: Iterable<string>): Generator<JsonlLine> {
  let line = 0;
  let offset = 0;
  let first = true;
  for (let piece of pieces) {
    if (first && piece.charCodeAt(0) === 0xfeff) piece = piece.slice(1);
    first = false;
    for (const l of splitJsonlLines(piece)) yield { ...l, line: line + l.line, end: offset + l.end };
    // A piece ends after a line feed (its last line terminated) or at the input's end: the next one starts a line.
    line += countLineEnds(piece);
    offset += piece.length;
  }
}

/** Line ends in a piece as splitJsonlLines counts them: LF, CRLF and a lone CR each end one. */
function countLineEnds(piece: string): number {
  let n = 0;
  for (let i = 0; i < piece.length; i++) {
    const c = piece.charCodeAt(i);
    if (c === 0x0a) n++;
    else if (c === 0x0d && piece.charCodeAt(i + 1) !== 0x0a) n++;
  }
  return n;
}

/**
 * The CSV records of bytes that arrive in chunks (a BOM at the start dropped), with CsvRecordStream: each chunk's
 * complete records are handed on before the next chunk is read, so what is held is a chunk and a record.
 */
export function csvRecordsOfChunks(chunks: () => Iterable<Uint8Array>, options?: CsvReadOptions): CsvRecords {
  let error: CsvReadError | null = null;
  let done = false;
  function* records(): Generator<CsvRecord> {
    let ready: CsvRecord[] = [];
    const stream = new CsvRecordStream((record) => ready.push(record), options);
    let first = true;
    for (let chunk of chunks()) {
      if (first && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3);
      first = false;
      stream.write(chunk);
      yield* ready;
      ready = [];
      if (stream.error) break;
    }
    if (!stream.error) stream.finish();
    yield* ready;
    error = stream.error;
    done = true;
  }
  return {
    records: { [Symbol.iterator]: records },
    error() {
      if (!done) throw new Error("csvRecords: error() asked before the records were all read");
      return error;
    },
  };
}

/**
 * The values of a JSONL input, one entry per non-blank line, as readJsonl gives them for the whole text, read as
 * they are iterated: a text in memory or a streamed file.
 */
export function* jsonlEntries(input: string | ImportSource): Generator<JsonlEntry> {
  const source = typeof input === "string" ? textSource(input) : input;
  for (const { line, text } of source.jsonlLines()) {
    const entry = readJsonlLine(line, text);
    if (entry) yield entry;
  }
}

/** What the first pass of a two-pass import keeps of each record: its key and the hash of its content. */
export interface PassKey {
  key: string;
  hash: string;
}

/** The refusal of a file whose second pass did not read what its first pass checked. */
export const FILE_CHANGED_MESSAGE =
  "the file changed while it was being imported; nothing was imported. Import it again.";

/** Thrown by `secondPass` (see there); the import's all-or-nothing scope removes what it wrote. */
export class FileChangedError extends Error {
  constructor() {
    super(FILE_CHANGED_MESSAGE);
    this.name = "FileChangedError";
  }
}

/**
 * The second pass of a two-pass import, the one shape every such import passes through (docs/reliability.md,
 * "Memory bounded by the longest line"): the first pass checked the whole input and kept of each record only its key
 * and content hash (`first`, in input order) and the input's sha256 (`firstSha256`); this reads the records again
 * (`records()`, which reads `source` from its start), checks that each is the one the first pass checked — same key,
 * same hash, same place — and hands them on in batches of `batchSize`, each to be written (in the import run's short
 * transactions) before the next is read. So an import holds one batch, never its file or its rows. A record that
 * differs, one too many or too few, a record that no longer reads (`records()` threw), or bytes whose sha256
 * differs from the first pass's throw `FileChangedError` — the input changed between the passes — and the caller's
 * import then removes what it wrote: nothing of it is kept.
 */
export function* secondPass<R>(spec: {
  source: ImportSource;
  records: () => Iterable<R>;
  keyOf: (record: R) => PassKey;
  first: readonly PassKey[];
  firstSha256: string | null;
  batchSize?: number;
}): Generator<R[]> {
  const size = spec.batchSize ?? 500;
  let batch: R[] = [];
  let at = 0;
  let records: Iterator<R>;
  try {
    records = spec.records()[Symbol.iterator]();
  } catch {
    throw new FileChangedError();
  }
  for (;;) {
    let next: IteratorResult<R>;
    let keyed: PassKey;
    try {
      next = records.next();
      if (next.done) break;
      keyed = spec.keyOf(next.value);
    } catch {
      // A line that no longer checks, or a refusal of the bytes: the file changed between the passes.
      throw new FileChangedError();
    }
    const expected = spec.first[at];
    if (!expected || expected.key !== keyed.key || expected.hash !== keyed.hash) throw new FileChangedError();
    batch.push(next.value);
    at++;
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (at !== spec.first.length || spec.source.sha256() !== spec.firstSha256) throw new FileChangedError();
  if (batch.length) yield batch;
}
