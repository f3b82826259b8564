/**
 * The CSV reader of every import (cases, screening files, calibration cases, judge labels, expert question banks and
 * review sets, ratings), with one set of csv-parse options, so a file reads the same whatever the upload:
 * csv-parse records, each with the physical line it starts on, counted by LineCounter (so a CRLF inside a quoted cell
 * is one line end, not two). Blank lines are skipped, rows may have any number of cells, a leading BOM is dropped, and
 * LF, CRLF and a lone CR all end a record (as Python's csv module reads them, whatever the file mixes).
 *
 * Server and command line only: csv-parse uses Node's Buffer when it loads. Pages reach the writer in csv-text.ts.
 */
import { Parser } from "csv-parse";
import { CsvError, parse } from "csv-parse/sync";
import { LineCounter, StreamLineCounter } from "./lines";

export interface CsvRecord {
  /** 1-based physical line on which the record starts. */
  line: number;
  cells: string[];
}

export interface CsvReadOptions {
  /**
   * Spaces around each cell are dropped (csv-parse's trim): only for the `agreement` command's hand-written ratings
   * files; every upload reads its cells as they are.
   */
  trim?: boolean;
}

export interface CsvReadError {
  /** The line on which the unreadable record starts. */
  line: number;
  /** csv-parse's message (`Invalid Closing Quote: got "y" at line 4 …`), with that line in place of its own count. */
  message: string;
  /** The message without csv-parse's `Invalid …:` title, for a sentence of our own (`the CSV cannot be read: …`). */
  reason: string;
}

const parseOptions = (options: CsvReadOptions) => ({
  info: true,
  relax_column_count: true,
  // A quote inside an unquoted cell is text, as Python's csv module reads it, for every upload alike (docs/formats.md,
  // "CSV"); csv-parse then also keeps text after a closing quote (`"x"y` reads `"x"y`).
  relax_quotes: true,
  trim: options.trim ?? false,
  skip_empty_lines: true,
  record_delimiter: ["\r\n", "\n", "\r"],
});

/** The error of an unreadable record, its line found by `lines` (csv-parse's own count is off after a CRLF in a cell). */
function readError(e: CsvError, lines: { nextContentLine(offset: number): number }): CsvReadError {
  // `bytes` is where the last complete record ended: the bad record starts on the next line that is not blank.
  const { bytes } = e as CsvError & { bytes?: number };
  const line = lines.nextContentLine(bytes ?? 0);
  const message = e.message.replace(/\b(at|on) line \d+/, `$1 line ${line}`);
  return { line, message, reason: message.replace(/^Invalid .*?: /, "") };
}

export function readCsv(
  text: string,
  options: CsvReadOptions = {},
): { records: CsvRecord[] } | { error: CsvReadError } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let parsed: { record: string[]; info: { bytes: number } }[];
  try {
    parsed = parse(body, parseOptions(options));
  } catch (e) {
    if (!(e instanceof CsvError)) throw e;
    return { error: readError(e, LineCounter.ofBytes(new TextEncoder().encode(body))) };
  }
  // csv-parse's `info.bytes` is the UTF-8 offset at which each record ends.
  const lines = LineCounter.ofBytes(new TextEncoder().encode(body));
  let end = 0;
  const records = parsed.map(({ record, info }) => {
    const line = lines.nextContentLine(end);
    end = info.bytes;
    return { line, cells: record };
  });
  return { records };
}

/** csv-parse's incremental parser, the one its stream calls for every chunk (csv-parse 5, `Parser#api`). */
interface CsvCore {
  parse(
    chunk: Buffer | undefined,
    end: boolean,
    push: (record: string[]) => void,
    close: () => void,
  ): Error | undefined;
  /** The parser's running counts; `bytes` is where the record being pushed ends (what `info: true` copies per record). */
  info: { bytes: number };
}

/**
 * The same reader over a file that arrives in chunks (a case file read as a stream, docs/reliability.md, "Bulk
 * imports"): `write` each chunk of UTF-8 bytes (a BOM already dropped) and `end` once; each record is handed to
 * `onRecord` as soon as it is complete, with the line it starts on, and the first unreadable record stops the
 * reader with the error `readCsv` would have given for the whole file. The records and errors are readCsv's, whatever
 * the chunks: csv-parse's stream runs this same parser chunk by chunk. Synchronous, so that an import can write what
 * it read between two chunks.
 */
export class CsvRecordStream {
  private readonly core: CsvCore;
  private readonly lines = new StreamLineCounter();
  private end = 0;
  error: CsvReadError | null = null;

  constructor(
    private readonly onRecord: (record: CsvRecord) => void,
    options: CsvReadOptions = {},
  ) {
    // Without csv-parse's per-record info objects: each would be an allocation per record, and the parser's own
    // running `info.bytes` is the same offset when a record is pushed.
    this.core = (new Parser({ ...parseOptions(options), info: false }) as unknown as { api: CsvCore }).api;
  }

  write(chunk: Uint8Array): void {
    if (this.error) return;
    this.lines.append(chunk);
    this.run(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength), false);
  }

  finish(): void {
    if (!this.error) this.run(undefined, true);
  }

  private run(chunk: Buffer | undefined, end: boolean): void {
    const error = this.core.parse(
      chunk,
      end,
      (record) => {
        const line = this.lines.nextContentLine(this.end);
        this.end = this.core.info.bytes;
        this.onRecord({ line, cells: record });
      },
      () => {},
    );
    if (error === undefined) return;
    if (!(error instanceof CsvError)) throw error;
    this.error = readError(error, this.lines);
  }
}
