/**
 * The CSV reader of every import (cases, screening files, judge labels, expert question banks and cases, ratings):
 * csv-parse records, each with the physical line it starts on, counted by LineCounter (so a CRLF inside a quoted cell
 * is one line end, not two). Blank lines are skipped, rows may have any number of cells, a leading BOM is dropped, and
 * LF, CRLF and a lone CR all end a record (as Python's csv module reads them, whatever the file mixes).
 *
 * Server and command line only: csv-parse uses Node's Buffer when it loads. Pages reach the writer in csv-text.ts.
 */
import { CsvError, parse } from "csv-parse/sync";
import { LineCounter } from "./lines";

export interface CsvRecord {
  /** 1-based physical line on which the record starts. */
  line: number;
  cells: string[];
}

export interface CsvReadOptions {
  /** A quote inside an unquoted cell is text, and text after a closing quote is kept (csv-parse's relax_quotes). */
  relaxQuotes?: boolean;
  /** Spaces around each cell are dropped (csv-parse's trim). */
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

export function readCsv(
  text: string,
  options: CsvReadOptions = {},
): { records: CsvRecord[] } | { error: CsvReadError } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let parsed: { record: string[]; info: { bytes: number } }[];
  try {
    parsed = parse(body, {
      info: true,
      relax_column_count: true,
      relax_quotes: options.relaxQuotes ?? false,
      trim: options.trim ?? false,
      skip_empty_lines: true,
      record_delimiter: ["\r\n", "\n", "\r"],
    });
  } catch (e) {
    if (!(e instanceof CsvError)) throw e;
    // `bytes` is where the last complete record ended: the bad record starts on the next line that is not blank.
    const { bytes } = e as CsvError & { bytes?: number };
    const line = LineCounter.ofBytes(new TextEncoder().encode(body)).nextContentLine(bytes ?? 0);
    const message = e.message.replace(/\b(at|on) line \d+/, `$1 line ${line}`);
    return { error: { line, message, reason: message.replace(/^Invalid .*?: /, "") } };
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
