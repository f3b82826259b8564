/**
 * Reading the labels file of `judge-report --labels` (docs/formats.md#judge-validation-files): CSV `response_id,rater,primary_answer,info_request`
 * with an optional `action` column, long format, one row per response and rater. Text in, labels and line-numbered
 * problems out (a text, or a file streamed through the import contract). Kept apart from judge-report.ts because the CSV reader (formats/csv.ts) needs Node (the report core
 * also runs in pages).
 */
import { textSource, type ImportSource } from "../../formats/import-source";
import {
  ACTIONS,
  INFO_REQUESTS,
  normaliseLabel,
  parseAction,
  PRIMARY_ANSWERS,
  type Action,
} from "../../evaluation/public";
import { JUDGE_PREFIX, LABEL_COLUMNS, type JudgeLabel } from "./judge-report";
import { fromSpreadsheetCell } from "../../formats/spreadsheet-safe";
import { pushAll } from "../../stats/extremes";

export interface LabelsIssue {
  line: number;
  message: string;
}

/**
 * Reads a labels CSV: header `response_id,rater,primary_answer,info_request` (any order, case-insensitive, extra
 * columns ignored) and an optional `action` column. Labels are normalised as docs/judge-validation.md#label-normalisation (trim, lower-case;
 * "", nan, null, none/null → missing; no, n/a, na, not_applicable → none) and must then be in their domain.
 * Errors (with the file's line): a missing column, an empty response_id or rater, `judge:` without a name, an
 * unknown label, a response/rater pair twice. Any error empties `labels`.
 */
export function parseJudgeLabelsCsv(input: string | ImportSource): { labels: JudgeLabel[]; errors: LabelsIssue[] } {
  const errors: LabelsIssue[] = [];
  const emptyFile = {
    labels: [],
    errors: [{ line: 1, message: `the file is empty; expected a header ${LABEL_COLUMNS.join(",")}` }],
  };
  if (typeof input === "string" && input.replace(/^\uFEFF/, "").trim() === "") return emptyFile;
  // Record by record (a streamed file is never held whole; docs/reliability.md, "Bulk imports").
  const read = (typeof input === "string" ? textSource(input) : input).csvRecords();
  const records = read.records[Symbol.iterator]();
  const first = records.next();
  const csvError = () => {
    const error = read.error();
    return error ? { labels: [], errors: [{ line: error.line, message: `not valid CSV: ${error.message}` }] } : null;
  };
  if (first.done) return csvError() ?? emptyFile;
  const header = first.value;
  const body = { [Symbol.iterator]: () => records };
  const names = header.cells.map((h) => h.trim().toLowerCase());
  const missing = LABEL_COLUMNS.filter((c) => !names.includes(c));
  if (missing.length) {
    // The rest is read, so that a file that is not CSV further on is refused as such, as when read whole.
    for (const _ of body) void _;
    return (
      csvError() ?? {
        labels: [],
        errors: [
          {
            line: header.line,
            message: `missing column ${missing.join(", ")}: the header must name ${LABEL_COLUMNS.join(", ")}`,
          },
        ],
      }
    );
  }
  const at = (c: string) => names.indexOf(c);
  const actionAt = at("action");
  const labels: JudgeLabel[] = [];
  const seen = new Map<string, number>();
  for (const { line, cells: record } of body) {
    // judgeLabelsCsv neutralised formula-like cells for spreadsheets; read them back as they were.
    const cell = (i: number) => fromSpreadsheetCell(i >= 0 && i < record.length ? record[i]! : "");
    const responseId = cell(at("response_id")).trim();
    const rater = cell(at("rater")).trim();
    if (responseId === "" || rater === "") {
      errors.push({ line, message: `empty ${responseId === "" ? "response_id" : "rater"}` });
      continue;
    }
    if (rater.startsWith(JUDGE_PREFIX) && rater.slice(JUDGE_PREFIX.length).trim() === "") {
      errors.push({ line, message: `rater "${rater}" names no judge: write judge:NAME` });
      continue;
    }
    const problems: string[] = [];
    const label = <T extends string>(column: string, domain: readonly T[]): T | null => {
      const value = normaliseLabel(cell(at(column)));
      if (value === null) return null;
      if (!(domain as readonly string[]).includes(value)) {
        problems.push(`${column} "${cell(at(column)).trim()}" is not one of ${domain.join(", ")}`);
        return null;
      }
      return value as T;
    };
    const primaryAnswer = label("primary_answer", PRIMARY_ANSWERS);
    const infoRequest = label("info_request", INFO_REQUESTS);
    let action: Action | null = null;
    const actionText = normaliseLabel(cell(actionAt));
    if (actionText !== null) {
      action = parseAction(actionText);
      if (action === null) problems.push(`action "${cell(actionAt).trim()}" is not one of ${ACTIONS.join(", ")}`);
    }
    if (problems.length) {
      pushAll(
        errors,
        problems.map((message) => ({ line, message })),
      );
      continue;
    }
    const key = JSON.stringify([responseId, rater]);
    const before = seen.get(key);
    if (before !== undefined) {
      errors.push({ line, message: `response ${responseId} has a second row from ${rater} (first on line ${before})` });
      continue;
    }
    seen.set(key, line);
    labels.push({ responseId, rater, primaryAnswer, infoRequest, action });
  }
  const unreadable = csvError();
  if (unreadable) return unreadable;
  if (errors.length === 0 && labels.length === 0)
    errors.push({ line: header.line, message: "no labels: the file has a header but no rows" });
  return { labels: errors.length ? [] : labels, errors };
}
