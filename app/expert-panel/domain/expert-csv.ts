/**
 * The CSV reading shared by the expert-rating imports (question banks, generated cases): csv-parse records with the
 * physical line each record starts on, so every validation message can say `line N`, and header lookup by
 * case-insensitive names with aliases.
 */
import { parse } from "csv-parse/sync";

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
  let records: { record: string[]; info: { bytes: number } }[];
  try {
    records = parse(text, { info: true, relax_column_count: true, skip_empty_lines: true, bom: true });
  } catch (e) {
    const err = e as { lines?: number; message: string };
    return {
      error: { line: err.lines ?? 0, message: `the CSV cannot be read: ${err.message.replace(/^Invalid .*?: /, "")}` },
    };
  }
  if (records.length === 0) return { error: { line: 1, message: "the file is empty." } };
  // Each record's first line from csv-parse's byte offsets (its own line count treats a CRLF inside a quoted cell
  // as two lines).
  const bytes = new TextEncoder().encode(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  let at = 0;
  let line = 1;
  const advanceTo = (end: number) => {
    for (; at < end && at < bytes.length; at++)
      if (bytes[at] === 0x0a || (bytes[at] === 0x0d && bytes[at + 1] !== 0x0a)) line++;
  };
  advanceTo(records[0]!.info.bytes);
  const rows: CsvRecords["rows"] = [];
  for (const { record, info } of records.slice(1)) {
    while (at < bytes.length && (bytes[at] === 0x0a || bytes[at] === 0x0d)) advanceTo(at + 1);
    rows.push({ line, cells: record });
    advanceTo(info.bytes);
  }
  return { header: records[0]!.record.map((h) => h.trim()), rows };
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
