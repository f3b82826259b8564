/**
 * Long-format ratings files (docs/formats.md#ratings-csv): a CSV with header `item,rater,label`, one rating per row; a missing rating
 * is an absent row. Text in, rows and line-numbered problems out, so the command line and the web upload report
 * the same errors.
 */
import { readCsv } from "../formats/csv";
import type { RatingRow } from "./rating-table";

export interface RatingsCsvRow extends RatingRow {
  /** 1-based line of the row in the file (the first line of a record that spans lines). */
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

  const read = readCsv(text, { trim: true });
  if ("error" in read) return fail(read.error.line, `not valid CSV: ${read.error.message}`);
  const [header, ...body] = read.records;
  const names = header.cells.map((name) => name.toLowerCase());
  const missing = RATINGS_COLUMNS.filter((column) => !names.includes(column));
  if (missing.length > 0) {
    return fail(
      header.line,
      `missing column${missing.length > 1 ? "s" : ""} ${missing.join(
        ", ",
      )}: the header must name item, rater and label`,
    );
  }
  for (const column of RATINGS_COLUMNS) {
    if (names.indexOf(column) !== names.lastIndexOf(column)) {
      return fail(header.line, `column ${column} appears twice in the header`);
    }
  }
  if (body.length === 0) return fail(header.line, "no ratings: the file has a header but no rows");

  const [itemAt, raterAt, labelAt] = RATINGS_COLUMNS.map((column) => names.indexOf(column));
  const needed = Math.max(itemAt, raterAt, labelAt) + 1;
  const seen = new Map<string, RatingsCsvRow>();
  const rows: RatingsCsvRow[] = [];
  for (const { line, cells: record } of body) {
    if (record.length < needed) {
      errors.push({ line, message: `expected ${header.cells.length} fields, found ${record.length}` });
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
    errors.push({ line: header.line, message: "no ratings: every row has an empty label" });
  }
  return { rows: errors.length > 0 ? [] : rows, errors, warnings };
}
