/**
 * Long-format ratings files (docs/formats.md#ratings-csv): a CSV with header `item,rater,label`, one rating per row; a missing rating
 * is an absent row. Text in, rows and line-numbered problems out, so the command line and the web upload report
 * the same errors.
 */
import { parse } from "csv-parse/sync";
import type { RatingRow } from "./rating-table";

export interface RatingsCsvRow extends RatingRow {
  /** 1-based line of the row in the file (the last line of a record that spans lines). */
  line: number;
}

export interface RatingsCsvIssue {
  line: number;
  message: string;
}

export interface RatingsCsvResult {
  /** Valid rows with identical duplicates removed; empty when there are errors. */
  rows: RatingsCsvRow[];
  errors: RatingsCsvIssue[];
  warnings: RatingsCsvIssue[];
}

export const RATINGS_COLUMNS = ["item", "rater", "label"] as const;

interface ParsedRecord {
  record: string[];
  info: { lines: number };
}

/**
 * Parses and checks a ratings file: the three columns must be present (in any order, extra columns ignored,
 * header names case-insensitive); item and rater must be non-empty; an item/rater pair may appear twice only with
 * the same label (kept once, with a warning); a row with an empty label counts as a missing rating (warning).
 * Fields are trimmed. Any error empties `rows`.
 *
 * @example parseRatingsCsv("item,rater,label\nn1,A,yes\n").rows // [{ item: "n1", rater: "A", label: "yes", line: 2 }]
 */
export function parseRatingsCsv(text: string): RatingsCsvResult {
  const errors: RatingsCsvIssue[] = [];
  const warnings: RatingsCsvIssue[] = [];
  const fail = (line: number, message: string): RatingsCsvResult => ({
    rows: [],
    errors: [...errors, { line, message }],
    warnings,
  });

  if (text.replace(/^\uFEFF/, "").trim() === "")
    return fail(1, "the file is empty; expected a header item,rater,label");

  let records: ParsedRecord[];
  try {
    records = parse(text, {
      bom: true,
      info: true,
      trim: true,
      skip_empty_lines: true,
      relax_column_count: true,
    }) as ParsedRecord[];
  } catch (e) {
    const err = e as Error & { lines?: number };
    return fail(err.lines ?? 1, `not valid CSV: ${err.message}`);
  }

  const [header, ...body] = records;
  const names = header.record.map((name) => name.toLowerCase());
  const missing = RATINGS_COLUMNS.filter((column) => !names.includes(column));
  if (missing.length > 0) {
    return fail(
      header.info.lines,
      `missing column${missing.length > 1 ? "s" : ""} ${missing.join(
        ", ",
      )}: the header must name item, rater and label`,
    );
  }
  for (const column of RATINGS_COLUMNS) {
    if (names.indexOf(column) !== names.lastIndexOf(column)) {
      return fail(header.info.lines, `column ${column} appears twice in the header`);
    }
  }
  if (body.length === 0) return fail(header.info.lines, "no ratings: the file has a header but no rows");

  const [itemAt, raterAt, labelAt] = RATINGS_COLUMNS.map((column) => names.indexOf(column));
  const needed = Math.max(itemAt, raterAt, labelAt) + 1;
  const seen = new Map<string, RatingsCsvRow>();
  const rows: RatingsCsvRow[] = [];
  for (const { record, info } of body) {
    const line = info.lines;
    if (record.length < needed) {
      errors.push({ line, message: `expected ${header.record.length} fields, found ${record.length}` });
      continue;
    }
    const item = record[itemAt];
    const rater = record[raterAt];
    const label = record[labelAt];
    if (item === "" || rater === "") {
      errors.push({ line, message: `empty ${item === "" ? "item" : "rater"}` });
      continue;
    }
    if (label === "") {
      warnings.push({ line, message: `empty label for item "${item}", rater "${rater}": treated as a missing rating` });
      continue;
    }
    const key = `${item}\u0000${rater}`;
    const previous = seen.get(key);
    if (previous) {
      if (previous.label !== label) {
        errors.push({
          line,
          message:
            `item "${item}" rater "${rater}" is labelled "${label}" here ` +
            `but "${previous.label}" on line ${previous.line}`,
        });
      } else {
        warnings.push({
          line,
          message: `duplicate of line ${previous.line} (item "${item}", rater "${rater}"): kept once`,
        });
      }
      continue;
    }
    const row = { item, rater, label, line };
    seen.set(key, row);
    rows.push(row);
  }
  if (errors.length === 0 && rows.length === 0) {
    errors.push({ line: header.info.lines, message: "no ratings: every row has an empty label" });
  }
  return { rows: errors.length > 0 ? [] : rows, errors, warnings };
}
