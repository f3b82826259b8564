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

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;
/** A record still incomplete after this many bytes goes to csv-parse (the fast path rescans it at every chunk). */
const FAST_CARRY_BYTES = 1 << 20;

/**
 * The same reader over a file that arrives in chunks (a case file read as a stream, docs/reliability.md, "Bulk
 * imports"): `write` each chunk of UTF-8 bytes (a BOM already dropped) and `end` once; each record is handed to
 * `onRecord` as soon as it is complete, with the line it starts on, and the first unreadable record stops the
 * reader with the error `readCsv` would have given for the whole file. The records and errors are readCsv's, whatever
 * the chunks. Synchronous, so that an import can write what it read between two chunks.
 *
 * Records in the plain form most files have — cells unquoted, or quoted with `""` inside, separated by commas, ended
 * by LF, CRLF or a lone CR — are split by a byte loop here (csv-parse's parser costs about ten times as much per
 * byte). At the first record that is anything else (a quote inside an unquoted cell, text after a closing quote, a
 * quote left open at the end, a record longer than FAST_CARRY_BYTES), that record and everything after it go to
 * csv-parse's incremental parser, the one its stream calls for every chunk, which reads them exactly as `readCsv`
 * does: the fast path never decides anything csv-parse would read differently (test/unit/formats-csv.test.ts compares
 * the two on random files cut at random places).
 */
export class CsvRecordStream {
  private core: CsvCore | null = null;
  private lines: StreamLineCounter | null = null;
  private end = 0;
  /** The start of a record not yet complete, kept for the next chunk (fast path). */
  private carry: Buffer | null = null;
  /** The line the carry (or the next chunk) starts on (fast path). */
  private line = 1;
  /** The last chunk ended with a CR: an LF first in the next one is the same line end (fast path). */
  private pendingCR = false;
  error: CsvReadError | null = null;

  constructor(
    private readonly onRecord: (record: CsvRecord) => void,
    private readonly options: CsvReadOptions = {},
  ) {
    // Trimmed cells are csv-parse's alone.
    if (options.trim) this.toParser(1);
  }

  /** From here on csv-parse reads, starting at a record that starts on `line`. */
  private toParser(line: number): void {
    // Without csv-parse's per-record info objects: each would be an allocation per record, and the parser's own
    // running `info.bytes` is the same offset when a record is pushed.
    this.core = (new Parser({ ...parseOptions(this.options), info: false }) as unknown as { api: CsvCore }).api;
    this.lines = new StreamLineCounter(line);
    this.end = 0;
  }

  write(chunk: Uint8Array): void {
    if (this.error) return;
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.core) return this.parse(buf, false);
    const all = this.carry ? Buffer.concat([this.carry, buf]) : buf;
    this.carry = null;
    const rest = this.scan(all, false);
    if (rest === all.length) return;
    if (all.length - rest > FAST_CARRY_BYTES) {
      this.toParser(this.line);
      this.parse(all.subarray(rest), false);
    } else this.carry = Buffer.from(all.subarray(rest));
  }

  finish(): void {
    if (this.error) return;
    if (!this.core) {
      const all = this.carry ?? Buffer.alloc(0);
      this.carry = null;
      this.scan(all, true);
    }
    if (this.core && !this.error) this.parse(undefined, true);
  }

  /** csv-parse over the rest of the file. */
  private parse(buf: Buffer | undefined, end: boolean): void {
    if (buf) this.lines!.append(buf);
    const error = this.core!.parse(
      buf,
      end,
      (record) => {
        const line = this.lines!.nextContentLine(this.end);
        this.end = this.core!.info.bytes;
        this.onRecord({ line, cells: record });
      },
      () => {},
    );
    if (error === undefined) return;
    if (!(error instanceof CsvError)) throw error;
    this.error = readError(error, this.lines!);
  }

  /**
   * Hands out every complete record of `buf` and returns where the first incomplete one starts (`buf.length` when
   * none is). At a record the fast path does not read, the rest of `buf` goes to csv-parse (and `buf.length` is
   * returned). `end`: no more bytes will come.
   */
  private scan(buf: Buffer, end: boolean): number {
    const n = buf.length;
    let pos = 0;
    let line = this.line;
    if (this.pendingCR && (n > 0 || end)) {
      this.pendingCR = false;
      if (buf[0] === LF) pos = 1;
    }
    /** A record end (LF, CRLF or CR) at `at`: the position after it. */
    const lineEnd = (at: number): number => {
      line++;
      if (buf[at] === LF) return at + 1;
      if (at + 1 < n) return buf[at + 1] === LF ? at + 2 : at + 1;
      this.pendingCR = !end;
      return at + 1;
    };
    records: while (pos < n) {
      const first = buf[pos];
      if (first === LF || first === CR) {
        // A blank line: skipped.
        pos = lineEnd(pos);
        continue;
      }
      const start = pos;
      const startLine = line;
      const cells: string[] = [];
      let p = pos;
      for (;;) {
        let value: string;
        if (buf[p] === QUOTE) {
          value = "";
          let from = p + 1;
          for (;;) {
            const q = buf.indexOf(QUOTE, from);
            if (q === -1) {
              if (!end) {
                line = startLine;
                break records;
              }
              // A quote left open at the end of the file: csv-parse's error.
              line = startLine;
              this.toParser(startLine);
              this.parse(buf.subarray(start), false);
              return n;
            }
            for (let i = from; i < q; i++) {
              const b = buf[i];
              if (b === LF) line++;
              else if (b === CR && buf[i + 1] !== LF) line++;
            }
            if (q + 1 === n && !end) {
              line = startLine;
              break records;
            }
            if (buf[q + 1] === QUOTE) {
              value += buf.toString("utf8", from, q + 1);
              from = q + 2;
              continue;
            }
            value += buf.toString("utf8", from, q);
            p = q + 1;
            break;
          }
          const next = buf[p];
          if (p < n && next !== COMMA && next !== LF && next !== CR) {
            // Text after a closing quote: csv-parse's to read.
            line = startLine;
            this.toParser(startLine);
            this.parse(buf.subarray(start), false);
            return n;
          }
        } else {
          let i = p;
          for (; i < n; i++) {
            const b = buf[i];
            if (b === COMMA || b === LF || b === CR) break;
            if (b === QUOTE) {
              // A quote inside an unquoted cell: csv-parse's to read.
              line = startLine;
              this.toParser(startLine);
              this.parse(buf.subarray(start), false);
              return n;
            }
          }
          if (i === n && !end) {
            line = startLine;
            break records;
          }
          value = buf.toString("utf8", p, i);
          p = i;
        }
        cells.push(value);
        if (p === n) {
          // The file's last record, without a line end.
          pos = n;
          break;
        }
        if (buf[p] === COMMA) {
          p++;
          if (p === n) {
            if (!end) {
              line = startLine;
              break records;
            }
            cells.push("");
            pos = n;
            break;
          }
          continue;
        }
        pos = lineEnd(p);
        break;
      }
      this.onRecord({ line: startLine, cells });
    }
    // `line` is the line `pos` is on: the start of the incomplete record, or the next chunk's first byte.
    this.line = line;
    return pos;
  }
}
