/**
 * A small CSV reader and writer with the semantics of Python's `csv` module, default dialect (comma, `"` quote,
 * doubled quotes, minimal quoting, CRLF on write).
 *
 * Why not csv-parse / csv-stringify: both use Node's global `Buffer`, and the ICD-10 table index (icd10.ts) may be
 * built in the browser for per-keystroke search; and the released-CSV writer must match Python's `csv.writer` byte
 * for byte (docs/formats.md#csv), which is easier to guarantee (and to test against Python) in twenty lines we own.
 */

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
 * Parses CSV text into rows of fields. Accepts CRLF, LF or CR line endings and a leading UTF-8 BOM; quoted fields may
 * span lines; blank lines are skipped (as `csv.DictReader` does). A quote inside an unquoted field is kept literally
 * (as Python does). Text after a closing quote other than a delimiter or line end is an error here (Python's
 * non-strict reader would append it silently). Throws CsvSyntaxError with the 1-based physical line.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    const row: string[] = [];
    let endOfRow = false;
    while (!endOfRow) {
      let field = "";
      if (text[i] === '"') {
        const openLine = line;
        i++;
        for (;;) {
          if (i >= n) throw new CsvSyntaxError("unterminated quoted field", openLine);
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
          if (c === "\n" || (c === "\r" && text[i + 1] !== "\n")) line++;
          field += c;
          i++;
        }
        if (i < n && text[i] !== "," && text[i] !== "\r" && text[i] !== "\n") {
          throw new CsvSyntaxError("unexpected character after a closing quote", line);
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
        line++;
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
 * (`[""]` → `""`) so that the row is not mistaken for a blank line.
 */
export function formatCsvRecord(fields: readonly string[]): string {
  if (fields.length === 1 && fields[0] === "") return '""\r\n';
  return fields.map((f) => (NEEDS_QUOTES.test(f) ? `"${f.replace(/"/g, '""')}"` : f)).join(",") + "\r\n";
}

export function formatCsv(rows: readonly (readonly string[])[]): string {
  return rows.map(formatCsvRecord).join("");
}
