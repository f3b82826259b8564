/**
 * The CSV reading shared by the expert-rating imports (question banks, generated cases): records of the one CSV
 * reader (formats/csv.ts) with the line each starts on, so every validation message can say `line N`, and header
 * lookup by case-insensitive names with aliases, and the checks both files make of their header, ids and cells.
 */
import { textSource, type ImportSource } from "../../formats/import-source";
import { formulaWarning } from "../../formats/spreadsheet-safe";
import { textWarning } from "../../formats/strict-text";

export interface CsvIssue {
  line: number;
  message: string;
}

export interface CsvRecords {
  /** Header cells, trimmed. */
  header: string[];
  rows: { line: number; cells: string[] }[];
}

export const MAX_IMPORT_BYTES = 20 * 1024 * 1024;

/**
 * Parses CSV (BOM, CRLF and quoted multi-line cells allowed); blank lines are skipped. A text in memory (a page's
 * upload), or a file the command line streams through the import contract, read record by record and never held
 * whole (docs/reliability.md, "Bulk imports"; the rows are kept).
 */
export function readCsvRecords(input: string | ImportSource): CsvRecords | { error: CsvIssue } {
  if (typeof input === "string" && input.length > MAX_IMPORT_BYTES)
    return { error: { line: 0, message: `the file is larger than ${MAX_IMPORT_BYTES} bytes.` } };
  const read = (typeof input === "string" ? textSource(input) : input).csvRecords();
  let header: string[] | null = null;
  const rows: CsvRecords["rows"] = [];
  for (const record of read.records) {
    if (header) rows.push(record);
    else header = record.cells.map((h) => h.trim());
  }
  const error = read.error();
  if (error) return { error: { line: error.line, message: `the CSV cannot be read: ${error.reason}` } };
  if (!header) return { error: { line: 1, message: "the file is empty." } };
  return { header, rows };
}

/** What one pass over a file reports: its errors and warnings, by line. */
export interface CsvReport {
  errors: CsvIssue[];
  warnings: CsvIssue[];
  /** Set when the CSV could not be read at all (its one error then replaces every other issue). */
  unreadable?: boolean;
}

/**
 * The data rows of a CSV as they are read (docs/reliability.md, "Memory bounded by the longest line"): a text in
 * memory or a file streamed through the import contract, never held whole, and the rows not kept. `header` is told
 * the trimmed header cells first and says whether the rows are wanted (it reports a header that cannot be used into
 * `report` and returns false; the file is still read to its end). The issues are those of `readCsvRecords` over the
 * whole text: a CSV that cannot be read reports only that (the issues found before it are dropped), an empty file
 * only that, and a usable header with no row `noRows` on line 2.
 */
export function* csvRows(
  input: string | ImportSource,
  report: CsvReport,
  header: (cells: string[]) => boolean,
  noRows: string,
): Generator<{ line: number; cells: string[] }> {
  if (typeof input === "string" && input.length > MAX_IMPORT_BYTES) {
    report.errors.push({ line: 0, message: `the file is larger than ${MAX_IMPORT_BYTES} bytes.` });
    return;
  }
  const read = (typeof input === "string" ? textSource(input) : input).csvRecords();
  let seenHeader = false;
  let wanted = false;
  let rows = 0;
  for (const record of read.records) {
    if (!seenHeader) {
      seenHeader = true;
      wanted = header(record.cells.map((h) => h.trim()));
    } else if (wanted) {
      rows++;
      yield record;
    }
  }
  const error = read.error();
  if (error) {
    report.errors.splice(0, report.errors.length, {
      line: error.line,
      message: `the CSV cannot be read: ${error.reason}`,
    });
    report.warnings.length = 0;
    report.unreadable = true;
  } else if (!seenHeader) report.errors.push({ line: 1, message: "the file is empty." });
  else if (wanted && rows === 0) report.errors.push({ line: 2, message: noRows });
}

/**
 * The index of each wanted column in the header, matched case-insensitively on any of its names (the first name is
 * the canonical one, used in messages). Columns not found are absent from the map.
 */
export function columnIndex<C extends string>(header: string[], names: Record<C, readonly string[]>): Map<C, number> {
  const lower = header.map((h) => h.toLowerCase());
  const out = new Map<C, number>();
  for (const [column, aliases] of Object.entries(names) as [C, readonly string[]][]) {
    const at = lower.findIndex((h) => aliases.some((a) => a.toLowerCase() === h));
    if (at >= 0) out.set(column, at);
  }
  return out;
}

export function cell(cells: string[], at: number | undefined): string {
  return at === undefined ? "" : (cells[at] ?? "").trim();
}

/** An item's id in a file: letters, digits, dot, underscore and hyphen, at most 64, starting with a letter or digit. */
export const EXTERNAL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** "missing column(s) "a", "b". {needs}" — the header line's error. */
export function missingColumnsIssue(missing: readonly string[], needs: string): CsvIssue {
  return {
    line: 1,
    message: `missing column${missing.length > 1 ? "s" : ""} ${missing.map((m) => `"${m}"`).join(", ")}. ${needs}`,
  };
}

/** The warning for header cells that name no column of the file's kind, or null when every one is used. */
export function unusedColumnsIssue(header: readonly string[], index: Map<string, number>): CsvIssue | null {
  const known = new Set(index.values());
  const unused = header.filter((h, i) => h !== "" && !known.has(i));
  if (!unused.length) return null;
  return {
    line: 1,
    message: `column${unused.length > 1 ? "s" : ""} ${unused.map((u) => `"${u}"`).join(", ")} not used.`,
  };
}

/**
 * What is wrong with the id of the row on `line` (empty, not an id, used before), or null; a good id is added to
 * `seen`, which maps each id to the line it was first used on.
 */
export function externalIdProblem(externalId: string, seen: Map<string, number>, line: number): string | null {
  if (!externalId) return "the id is empty.";
  if (!EXTERNAL_ID.test(externalId))
    return `the id "${externalId}" may use letters, digits, dot, underscore and hyphen (at most 64).`;
  if (seen.has(externalId)) return `the id "${externalId}" is already used on line ${seen.get(externalId)}.`;
  seen.set(externalId, line);
  return null;
}

/**
 * The warnings of a row's cells: cells past the header (ignored), a cell a spreadsheet would run as a formula, and
 * text with control or invisible characters. Both are kept as given and flagged, because exports may be opened in spreadsheets (docs/security.md).
 */
export function cellWarnings(header: readonly string[], cells: readonly string[], line: number): CsvIssue[] {
  const out: CsvIssue[] = [];
  // Cells past the header are not read: say so, as the case import does, so that nothing vanishes without a word
  // (often a quote inside a quoted cell that was not doubled, which splits the cell).
  const extra = cells.slice(header.length).filter((c) => c.trim() !== "").length;
  if (extra > 0)
    out.push({
      line,
      message: `${extra} cell(s) beyond the header ignored; if a cell holds a quote, double it ("") inside a quoted cell.`,
    });
  const formula = formulaWarning(Object.fromEntries(header.map((h, i) => [h, cells[i]])));
  if (formula) out.push({ line, message: formula });
  for (const [k, h] of header.entries()) {
    const w = textWarning(`column "${h}"`, cells[k]);
    if (w) out.push({ line, message: w });
  }
  return out;
}
