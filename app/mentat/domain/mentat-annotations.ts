/**
 * MENTAT's own rating exports (docs/mentat.md, "Importing MENTAT's annotation files"): the jsPsych CSV files of its
 * public `annotated_data/` folder, `x{rater}_annotation_data_{n}.csv`, read as MENTAT's `helper_functions.py` reads
 * them, so that a group can refit MENTAT's data in Concord:
 *
 * - the rater is `rater_id` of the second data row, lower-cased (MENTAT `import_raw_annotations`);
 * - the first four data rows (welcome, name entry, two instruction pages) and the last one (final instruction) are
 *   not ratings and are dropped by position;
 * - each remaining row is a `survey-slider` trial: `response` is JSON `{"Q0".."Q4": 0–100, "comment": text}` in the
 *   order the sliders were shown, `question_order` a JSON permutation of 0..4, and the score of option i (a–e) is
 *   `Q{question_order[i]}` — MENTAT's `a[q_order]` in `process_raw_data_annotations`; `q_no` is the question and
 *   `q_key` (`q_male`, `q_female`, `q_they`) the gender text shown.
 *
 * Pure: text in, rows or `line N` problems out.
 */
import { z } from "zod";
import { cell, columnIndex, csvRows, type CsvIssue, type CsvReport } from "../../expert-panel/domain/expert-csv";
import { pushAll } from "../../stats/extremes";
import { OPTION_COUNT, type Gender } from "../../expert-panel/domain/expert-scales";
import { formulaWarning } from "../../formats/spreadsheet-safe";
import { textWarning } from "../../formats/strict-text";
import type { ImportSource } from "../../formats/import-source";

/** MENTAT's jsPsych timeline: rows before the first rating and after the last. */
export const MENTAT_LEADING_ROWS = 4;
export const MENTAT_TRAILING_ROWS = 1;

export const MENTAT_GENDER_KEYS: Record<string, Gender> = { q_male: "male", q_female: "female", q_they: "nonbinary" };

export interface MentatAnnotationRow {
  line: number;
  /** MENTAT's question number, as written. */
  qNo: string;
  gender: Gender;
  /** Scores of options a–e (the options' original order). */
  scores: number[];
  /** optionOrder[shown] = original option index: the order the sliders were shown (Concord's convention). */
  optionOrder: number[];
  comment: string;
}

export interface MentatAnnotationFile {
  rater: string;
  participant: string;
  rows: MentatAnnotationRow[];
}

const COLUMNS = {
  response: ["response"],
  trialType: ["trial_type"],
  raterId: ["rater_id"],
  participant: ["participant_name"],
  questionOrder: ["question_order"],
  qNo: ["q_no"],
  qKey: ["q_key"],
} as const;

const Score = z.number().min(0).max(100);
const ResponseSchema = z
  .object({ Q0: Score, Q1: Score, Q2: Score, Q3: Score, Q4: Score, comment: z.string() })
  .strict();
const PermutationSchema = z
  .array(
    z
      .number()
      .int()
      .min(0)
      .max(OPTION_COUNT - 1),
  )
  .length(OPTION_COUNT)
  .refine((p) => new Set(p).size === OPTION_COUNT, "is not a permutation of 0..4");
const QuestionNumberSchema = z.string().regex(/^\d+$/, "q_no must be a whole number");

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function zodMessage(e: z.ZodError): string {
  const issue = e.issues[0]!;
  return `${issue.path.length ? `${issue.path.join(".")}: ` : ""}${issue.message}`;
}

/**
 * Reads one MENTAT annotation file. Errors name the line; warnings note rows MENTAT's positional rule drops that look
 * like ratings (the file then lost data in MENTAT's own processing too).
 */
export function parseMentatAnnotationCsv(
  text: string | ImportSource,
): { ok: true; file: MentatAnnotationFile; warnings: CsvIssue[] } | { ok: false; errors: CsvIssue[] } {
  const report: AnnotationReport = { errors: [], warnings: [], rater: "", participant: "" };
  const rows = [...mentatAnnotationRows(text, report)];
  if (report.errors.length) return { ok: false, errors: report.errors };
  return { ok: true, file: { rater: report.rater, participant: report.participant, rows }, warnings: report.warnings };
}

/** What one pass over an annotation file reports besides its rows: the rater (second row), errors and warnings. */
export interface AnnotationReport {
  errors: CsvIssue[];
  warnings: CsvIssue[];
  rater: string;
  participant: string;
}

/**
 * The ratings of one MENTAT annotation file as they are read, one row at a time (docs/reliability.md, "Memory
 * bounded by the longest line"): what `parseMentatAnnotationCsv` returns for the whole file, its issues reported
 * into `report` (complete once the last row is read; the file is valid when `report.errors` is then empty). MENTAT's
 * positional rule drops the last row, so a row is handed on once the next one is read: what is held is one row more
 * than the one being read.
 */
export function* mentatAnnotationRows(
  text: string | ImportSource,
  report: AnnotationReport,
): Generator<MentatAnnotationRow> {
  let header: string[] | null = null;
  let at = new Map<keyof typeof COLUMNS, number>();
  let missing: CsvIssue | null = null;
  const read: CsvReport = { errors: [], warnings: [] };
  const errors: CsvIssue[] = [];
  const leadingDropped: CsvIssue[] = [];
  const rowWarnings: CsvIssue[] = [];
  let seen = 0;
  let lastLine: number | null = null;
  let last: { line: number; cells: string[] } | null = null;
  const dropped = (row: { line: number; cells: string[] }, into: CsvIssue[]) => {
    if (cell(row.cells, at.get("trialType")) === "survey-slider")
      into.push({
        line: row.line,
        message: "a survey-slider row where MENTAT expects instructions: dropped, as MENTAT drops it.",
      });
  };
  // A header with no row is reported below, as a file too short; csvRows's own message for it is not used.
  const rows = csvRows(
    text,
    read,
    (cells) => {
      header = cells;
      at = columnIndex(header, COLUMNS);
      const absent = (Object.keys(COLUMNS) as (keyof typeof COLUMNS)[]).filter((c) => !at.has(c));
      if (absent.length)
        missing = {
          line: 1,
          message: `not a MENTAT annotation export: missing column${absent.length > 1 ? "s" : ""} ${absent.map((c) => COLUMNS[c][0]).join(", ")}.`,
        };
      return !missing;
    },
    "",
  );
  for (const row of rows) {
    seen++;
    lastLine = row.line;
    if (seen <= MENTAT_LEADING_ROWS) {
      if (seen === 2) {
        report.rater = cell(row.cells, at.get("raterId")).toLowerCase();
        report.participant = cell(row.cells, at.get("participant")).toLowerCase();
        if (!report.rater)
          errors.push({
            line: row.line,
            message: "rater_id is empty in the second row, where MENTAT reads the rater.",
          });
      }
      dropped(row, leadingDropped);
      continue;
    }
    // The row before this one is a rating: only the last row of the file is not.
    const rating = last;
    last = row;
    if (!rating) continue;
    const parsed = ratingOf(rating, at);
    if ("error" in parsed) errors.push({ line: rating.line, message: parsed.error });
    else {
      if (parsed.warning) rowWarnings.push({ line: rating.line, message: parsed.warning });
      yield parsed.row;
    }
  }
  // The issues of the whole-file reader, in its order: the file (unreadable, empty, too large), the header, too few
  // rows, then the rows; the warnings only of a file without errors.
  if (read.unreadable || !header) pushAll(report.errors, read.errors);
  else if (missing) report.errors.push(missing);
  else if (seen < MENTAT_LEADING_ROWS + MENTAT_TRAILING_ROWS + 1)
    report.errors.push({
      line: lastLine ?? 1,
      message: `a MENTAT export has ${MENTAT_LEADING_ROWS} rows of instructions, the ratings and a final row; this file has ${seen} data rows.`,
    });
  else if (errors.length) pushAll(report.errors, errors);
  else {
    const trailingDropped: CsvIssue[] = [];
    if (last) dropped(last, trailingDropped);
    pushAll(report.warnings, [...leadingDropped, ...trailingDropped, ...rowWarnings]);
  }
}

/** One rating row read as MENTAT reads it, or what is wrong with it. */
function ratingOf(
  { line, cells }: { line: number; cells: string[] },
  at: Map<keyof typeof COLUMNS, number>,
): { row: MentatAnnotationRow; warning: string | null } | { error: string } {
  const trialType = cell(cells, at.get("trialType"));
  if (trialType !== "survey-slider")
    return {
      error: `trial_type is "${trialType}": every row between the instructions and the last row must be a survey-slider rating.`,
    };
  const response = ResponseSchema.safeParse(parseJson(cell(cells, at.get("response"))));
  if (!response.success)
    return { error: `response must be JSON {"Q0".."Q4": 0–100, "comment": text}: ${zodMessage(response.error)}.` };
  const order = PermutationSchema.safeParse(parseJson(cell(cells, at.get("questionOrder"))));
  if (!order.success)
    return { error: `question_order must be a JSON permutation of 0..4: ${zodMessage(order.error)}.` };
  const qNo = QuestionNumberSchema.safeParse(cell(cells, at.get("qNo")));
  if (!qNo.success) return { error: `${zodMessage(qNo.error)} (got "${cell(cells, at.get("qNo"))}").` };
  const qKey = cell(cells, at.get("qKey"));
  const gender = MENTAT_GENDER_KEYS[qKey];
  if (!gender) return { error: `q_key "${qKey}" is not one of ${Object.keys(MENTAT_GENDER_KEYS).join(", ")}.` };
  const shown = [response.data.Q0, response.data.Q1, response.data.Q2, response.data.Q3, response.data.Q4];
  const permutation = order.data;
  const scores = permutation.map((slot) => shown[slot]!);
  // Option i sat in slot permutation[i]; Concord records, per slot, which option it showed.
  const optionOrder = new Array<number>(OPTION_COUNT);
  permutation.forEach((slot, option) => (optionOrder[slot] = option));
  const warning = formulaWarning({ comment: response.data.comment }) ?? textWarning("comment", response.data.comment);
  return {
    row: { line, qNo: String(Number(qNo.data)), gender, scores, optionOrder, comment: response.data.comment },
    warning,
  };
}

/**
 * The question creator as a pseudo-rater, as MENTAT's processing notebook adds it before the fit
 * (`process_annotated_data.ipynb`: `[int(x * 100) for x in creator_truth]` under rater id `crtr`): 100 on the
 * intended option, 0 on the others (docs/mentat.md, "MENTAT's released annotations").
 */
export const MENTAT_CREATOR_RATER = "crtr";
/** The questions MENTAT's notebook gives no creator row (`config_params.inds_bad_post_annotate`). */
export const MENTAT_NO_CREATOR_QUESTIONS: readonly string[] = ["92", "173", "175"];

export function creatorScores(intended: number): number[] {
  if (!(Number.isInteger(intended) && intended >= 0 && intended < OPTION_COUNT))
    throw new RangeError(`creatorScores: intended option ${intended} is not 0..${OPTION_COUNT - 1}`);
  return Array.from({ length: OPTION_COUNT }, (_, i) => (i === intended ? 100 : 0));
}
