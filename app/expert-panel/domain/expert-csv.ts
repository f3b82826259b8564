/**
 * The CSV reading shared by the expert-rating imports (question banks, generated cases): records of the one CSV
 * reader (formats/csv.ts) with the line each starts on, so every validation message can say `line N`, and header
 * lookup by case-insensitive names with aliases.
 */
import { readCsv } from "../../formats/csv";

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

/** Parses CSV text (BOM, CRLF and quoted multi-line cells allowed); blank lines are skipped. */
export function readCsvRecords(text: string): CsvRecords | { error: CsvIssue } {
  if (text.length > MAX_IMPORT_BYTES)
    return { error: { line: 0, message: `the file is larger than ${MAX_IMPORT_BYTES} bytes.` } };
  const read = readCsv(text);
  if ("error" in read)
    return { error: { line: read.error.line, message: `the CSV cannot be read: ${read.error.reason}` } };
  const [header, ...body] = read.records;
  if (!header) return { error: { line: 1, message: "the file is empty." } };
  return { header: header.cells.map((h) => h.trim()), rows: body };
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
