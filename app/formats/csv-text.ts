/**
 * CSV with the semantics of Python's `csv` module, default dialect (comma, `"` quote, doubled quotes, minimal
 * quoting, CRLF on write): the writer of every released file, and the reader of the shipped ICD-10 table.
 *
 * Why this is not the import reader (formats/csv.ts, over csv-parse): this module is loaded by pages (the ICD-10 rules,
 * the judge report, the bucket rules import it) and csv-parse uses Node's global `Buffer` when it loads; the released
 * files must match Python's `csv.writer` byte for byte, which is easier to guarantee (and to test against Python) in
 * a few lines we own; and Python's reading — a quote inside an unquoted cell is text, yet a closing quote must end
 * its cell — is not one of csv-parse's modes (its relax_quotes allows both or neither). Line numbers come from the
 * same LineCounter as the import reader.
 */
import { LineCounter } from "./lines";
import { spreadsheetCell } from "./spreadsheet-safe";

export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
    this.name = "CsvSyntaxError";
  }
}

/**
 * Parses CSV text into rows of fields as Python's `csv.reader` does. Accepts CRLF, LF or CR line endings and a
 * leading UTF-8 BOM; quoted fields may span lines; blank lines are skipped (as `csv.DictReader` does). A quote inside an unquoted field is kept literally
 * (as Python does). Text after a closing quote other than a delimiter or line end is an error here (Python's
 * non-strict reader would append it silently). Throws CsvSyntaxError with the 1-based physical line.
 */
export function parsePythonCsv(text: string): string[][] {
  const rows: string[][] = [];
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const lines = LineCounter.ofText(text);
  const n = text.length;
  while (i < n) {
    const row: string[] = [];
    let endOfRow = false;
    while (!endOfRow) {
      let field = "";
      if (text[i] === '"') {
        const open = i;
        i++;
        for (;;) {
          if (i >= n) throw new CsvSyntaxError("unterminated quoted field", lines.lineAt(open));
          const c = text[i];
          if (c === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          field += c;
          i++;
        }
        if (i < n && text[i] !== "," && text[i] !== "\r" && text[i] !== "\n") {
          throw new CsvSyntaxError("unexpected character after a closing quote", lines.lineAt(i));
        }
      } else {
        while (i < n && text[i] !== "," && text[i] !== "\r" && text[i] !== "\n") field += text[i++];
      }
      row.push(field);
      if (i >= n) {
        endOfRow = true;
      } else if (text[i] === ",") {
        i++;
      } else {
        i += text[i] === "\r" && text[i + 1] === "\n" ? 2 : 1;
        endOfRow = true;
      }
    }
    if (!(row.length === 1 && row[0] === "")) rows.push(row);
  }
  return rows;
}

const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One record as Python's `csv.writer` (QUOTE_MINIMAL, lineterminator "\r\n") writes it: a field is quoted iff it
 * contains the delimiter, the quote character, CR or LF; quotes are doubled. Python also quotes a lone empty field
 * (`[""]` → `""`) so that the row is not mistaken for a blank line. Cells as given: only the reference-format files
 * below may be written this way.
 */
function rawCsvRecord(fields: readonly string[]): string {
  if (fields.length === 1 && fields[0] === "") return '""\r\n';
  return fields.map((f) => (NEEDS_QUOTES.test(f) ? `"${f.replace(/"/g, '""')}"` : f)).join(",") + "\r\n";
}

/**
 * The one CSV writer of every CSV Concord writes or serves for people (docs/security.md, "Spreadsheet exports"):
 * every cell goes through `spreadsheetCell`, so no writer can emit a cell a spreadsheet would evaluate.
 */
export function formatCsvRecord(fields: readonly string[]): string {
  return rawCsvRecord(fields.map(spreadsheetCell));
}

export function formatCsv(rows: readonly (readonly string[])[]): string {
  return rows.map(formatCsvRecord).join("");
}

/**
 * The files exempt from the formula-safe encoder, all of them: files that other programs read and that must stay
 * byte-exact (docs/formats.md, "Reference-format files"). The gold export's `data.csv` is the Safe-Psych reference's
 * released CSV; the screening `recall-pool.csv` is the input of the recall screen, whose ids must match the tiers file
 * it returns. Only their writers may import the two functions below (eslint.config.js, "reference-format CSV").
 */
export const REFERENCE_FORMAT_CSV_FILES = ["data.csv", "recall-pool.csv"] as const;
type ReferenceFormatCsv = (typeof REFERENCE_FORMAT_CSV_FILES)[number];

/**
 * A record of a reference-format file, cells as given, as Python's csv.writer writes them. `_file` names the file,
 * so that every use is one of REFERENCE_FORMAT_CSV_FILES.
 */
export function formatReferenceCsvRecord(_file: ReferenceFormatCsv, fields: readonly string[]): string {
  return rawCsvRecord(fields);
}

/** A reference-format file (one of REFERENCE_FORMAT_CSV_FILES), cells as given. */
export function formatReferenceCsv(_file: ReferenceFormatCsv, rows: readonly (readonly string[])[]): string {
  return rows.map(rawCsvRecord).join("");
}
