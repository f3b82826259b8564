/**
 * The items a multiple-choice evaluation asks about (docs/mc-evaluation.md, "Items"): MENTAT evaluation records as
 * `mentat-export` writes them, or MentalBench items from JSONL or CSV. Both are read one record at a time and
 * validated with zod; every problem is reported as `line N: reason` and a file with any problem yields no items.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { importIdProblem } from "../../formats/import-contract";
import { readJsonlLine } from "../../formats/jsonl";
import { secondPass, textSource, type ImportSource, type PassKey } from "../../formats/import-source";
import { pushAll } from "../../stats/extremes";
import { formulaWarning } from "../../formats/spreadsheet-safe";
import { textWarning } from "../../formats/strict-text";
import { GENDERS, MENTAT_DOMAINS, VARIANT_DIMENSIONS } from "../../expert-panel/domain/expert-scales";

export const MENTAT_LETTERS = ["A", "B", "C", "D", "E"] as const;
export const MENTALBENCH_LETTERS = ["A", "B", "C", "D"] as const;
export const CASE_TYPES = ["I", "II", "III", "IV"] as const;
export type CaseType = (typeof CASE_TYPES)[number];

export interface MentatItem {
  kind: "mentat";
  id: string;
  questionId: string;
  dataset: (typeof VARIANT_DIMENSIONS)[number];
  domain: (typeof MENTAT_DOMAINS)[number];
  demographics: { gender: string | null; age: number | null; race: string | null };
  /** The record's multiple-choice prompt, sent as it is. */
  prompt: string;
  options: string[];
  labels: number[];
  labelSource: "preference" | "intended";
}

export interface MentalBenchItem {
  kind: "mentalbench";
  id: string;
  question: string;
  /** The options block as it goes into the prompt ("A. …\nB. …" when the file gives a list). */
  optionsText: string;
  /** Option texts by letter, for reading an answer that names an option instead of its letter. */
  options: string[] | null;
  /** The answer's letters, sorted. */
  answer: string[];
  answerText: string;
  type: CaseType;
  disease: string;
  cluster: string | null;
}

export type McItem = MentatItem | MentalBenchItem;

export interface ItemIssue {
  line: number;
  message: string;
}

export interface ItemsResult {
  items: McItem[];
  errors: ItemIssue[];
  warnings: ItemIssue[];
  format: "mentat" | "mentalbench";
}

const MentatRecordSchema = z.object({
  id: z.string().min(1),
  question_id: z.string().min(1),
  dataset: z.enum(VARIANT_DIMENSIONS),
  domain: z.enum(MENTAT_DOMAINS),
  demographics: z.object({
    gender: z.enum(GENDERS).nullable(),
    age: z.number().int().nullable(),
    race: z.string().nullable(),
  }),
  prompt: z.string().min(1),
  question: z.string(),
  options: z.array(z.string()).length(5),
  option_ids: z.array(z.string()).length(5),
  labels: z.array(z.number().min(0).max(1)).length(5),
  labels_lower: z.array(z.number()).length(5).optional(),
  labels_upper: z.array(z.number()).length(5).optional(),
  label_source: z.enum(["preference", "intended"]),
  intended_answer: z.number().int().min(0).max(4),
});

/** Type I–IV, also written 1–4, "Type 3", "type4". */
const CaseTypeSchema = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const text = String(value)
    .trim()
    .replace(/^type\s*/i, "")
    .toUpperCase();
  const byNumber: Record<string, CaseType> = { "1": "I", "2": "II", "3": "III", "4": "IV" };
  const type = byNumber[text] ?? (CASE_TYPES as readonly string[]).find((t) => t === text);
  if (!type) {
    ctx.addIssue({ code: "custom", message: `type must be I, II, III or IV (or 1–4), got ${JSON.stringify(value)}` });
    return z.NEVER;
  }
  return type as CaseType;
});

const OptionsSchema = z.union([
  z.string().min(1),
  z.array(z.string().min(1)).length(4),
  z.object({ A: z.string().min(1), B: z.string().min(1), C: z.string().min(1), D: z.string().min(1) }),
]);

const MentalBenchRecordSchema = z.object({
  id: z.union([z.string().min(1), z.number()]).transform(String),
  question: z.string().min(1),
  options: OptionsSchema,
  answer: z.string().min(1),
  type: CaseTypeSchema,
  disease: z.string().min(1),
  cluster: z.string().min(1).nullable().optional(),
});

/**
 * The letters of a MentalBench answer such as "C. Bipolar II", "A) Major Depressive" or "A & B) Both": the text
 * before the first "." or ")" and the stand-alone letters A–D in it (MentalBench's ground-truth rule).
 */
export function answerLetters(answer: string): string[] {
  const prefix = answer.toUpperCase().trim().split(/[.)]/, 1)[0] ?? "";
  return [...new Set(prefix.match(/\b[A-D]\b/g) ?? [])].sort();
}

/** The letters an options block labels ("A. text" / "A) text" / "A: text" lines), sorted. */
export function blockLetters(block: string): string[] {
  const found = new Set<string>();
  for (const line of block.split(/\r?\n/)) {
    const m = /^\s*\(?([A-D])[.):]\s*\S/.exec(line);
    if (m) found.add(m[1]!);
  }
  return [...found].sort();
}

/** Option texts parsed out of an options block written "A. text" / "A) text" / "A: text", one per line. */
export function optionsFromBlock(block: string): string[] | null {
  const found: Record<string, string> = {};
  for (const line of block.split(/\r?\n/)) {
    const m = /^\s*\(?([A-D])[.):]\s*(.+?)\s*$/.exec(line);
    if (m && !(m[1]! in found)) found[m[1]!] = m[2]!;
  }
  const texts = MENTALBENCH_LETTERS.map((l) => found[l]);
  return texts.every((t): t is string => t !== undefined) ? texts : null;
}

function issueText(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message))
    .join("; ");
}

function mentalBenchItem(raw: unknown, line: number, errors: ItemIssue[], warnings: ItemIssue[]): McItem | null {
  const parsed = MentalBenchRecordSchema.safeParse(raw);
  if (!parsed.success) {
    errors.push({ line, message: issueText(parsed.error) });
    return null;
  }
  const r = parsed.data;
  let optionsText: string;
  let options: string[] | null;
  if (typeof r.options === "string") {
    optionsText = r.options;
    options = optionsFromBlock(r.options);
  } else {
    options = Array.isArray(r.options)
      ? r.options
      : MENTALBENCH_LETTERS.map((l) => (r.options as Record<string, string>)[l]!);
    optionsText = options.map((o, i) => `${MENTALBENCH_LETTERS[i]}. ${o}`).join("\n");
  }
  const answer = answerLetters(r.answer);
  if (answer.length === 0) {
    errors.push({
      line,
      message: `answer ${JSON.stringify(r.answer)} names no option letter A–D before its first "." or ")"`,
    });
    return null;
  }
  if (typeof r.options === "string") {
    // A block that labels its options must list the answer's letters (docs/mc-evaluation.md, "Items").
    const listed = blockLetters(r.options);
    const outside = answer.filter((l) => !listed.includes(l));
    if (listed.length > 0 && outside.length > 0) {
      errors.push({
        line,
        message: `answer ${JSON.stringify(r.answer)} names ${outside.join(", ")}, which the options block does not list (it lists ${listed.join(", ")})`,
      });
      return null;
    }
    if (listed.length > 0 && listed.length < MENTALBENCH_LETTERS.length)
      warnings.push({
        line,
        message: `the options block lists ${listed.length} options (${listed.join(", ")}), not ${MENTALBENCH_LETTERS.length}`,
      });
  }
  if (r.type === "III" && answer.length < 2) {
    warnings.push({ line, message: `a Type III case with a single answer (${answer.join("")})` });
  } else if (r.type !== "III" && answer.length > 1) {
    warnings.push({ line, message: `a Type ${r.type} case with several answers (${answer.join(" & ")})` });
  }
  return {
    kind: "mentalbench",
    id: r.id,
    question: r.question,
    optionsText,
    options,
    answer,
    answerText: r.answer,
    type: r.type,
    disease: r.disease,
    cluster: r.cluster ?? null,
  };
}

function mentatItem(raw: unknown, line: number, errors: ItemIssue[]): McItem | null {
  const parsed = MentatRecordSchema.safeParse(raw);
  if (!parsed.success) {
    errors.push({ line, message: issueText(parsed.error) });
    return null;
  }
  const r = parsed.data;
  const sum = r.labels.reduce((a, b) => a + b, 0);
  if (Math.abs(sum - 1) > 1e-6) {
    errors.push({ line, message: `labels must sum to 1, they sum to ${sum}` });
    return null;
  }
  return {
    kind: "mentat",
    id: r.id,
    questionId: r.question_id,
    dataset: r.dataset,
    domain: r.domain,
    demographics: r.demographics,
    prompt: r.prompt,
    options: r.options,
    labels: r.labels,
    labelSource: r.label_source,
  };
}

function looksLikeMentat(value: unknown): boolean {
  return typeof value === "object" && value !== null && "question_id" in value && "labels" in value;
}

/** Records handed on one at a time; the problems are in `errors` once the iteration ends. */
interface RecordStream {
  records: Iterable<{ line: number; value: unknown }>;
  errors: ItemIssue[];
}

/** CSV columns of a MentalBench item file: the JSONL keys, options as one `options` cell or as columns A–D. */
function csvRecords(source: ImportSource): RecordStream {
  const errors: ItemIssue[] = [];
  return { records: csvRecordsInto(source, errors), errors };
}

function* csvRecordsInto(source: ImportSource, errors: ItemIssue[]): Generator<{ line: number; value: unknown }> {
  // The one CSV reading of every import, record by record: a file streamed by the command line is never held whole
  // (docs/reliability.md, "Memory bounded by the longest line"); each record keeps the line it starts on.
  const read = source.csvRecords();
  let count = 0;
  let header: string[] | null = null;
  let col: (name: string) => number = () => -1;
  let optionCols: number[] = [];
  let missing: string[] = [];
  for (const { line, cells } of read.records) {
    if (cells.length === 1 && cells[0] === "") continue;
    if (!header) {
      header = cells.map((h) => h.trim());
      const names = header.map((h) => h.toLowerCase());
      col = (name: string) => names.indexOf(name.toLowerCase());
      missing = ["id", "question", "answer", "type", "disease"].filter((c) => col(c) < 0);
      optionCols = MENTALBENCH_LETTERS.map((l) => col(l));
      if (col("options") < 0 && optionCols.some((i) => i < 0)) missing.push("options (or columns A, B, C, D)");
      continue;
    }
    if (missing.length) continue;
    const cell = (i: number) => (i >= 0 ? (cells[i] ?? "") : "");
    const clusterCell = cell(col("cluster"));
    count++;
    yield {
      line,
      value: {
        id: cell(col("id")),
        question: cell(col("question")),
        options: col("options") >= 0 ? cell(col("options")) : optionCols.map(cell),
        answer: cell(col("answer")),
        type: cell(col("type")),
        disease: cell(col("disease")),
        cluster: clusterCell === "" ? null : clusterCell,
      },
    };
  }
  // A problem of the whole file is its only error (the items already handed on are then refused with it).
  const error = read.error();
  if (error) errors.splice(0, errors.length, { line: error.line, message: `the CSV cannot be read: ${error.reason}` });
  else if (!header) errors.splice(0, errors.length, { line: 1, message: "the file is empty" });
  else if (missing.length)
    errors.splice(0, errors.length, { line: 1, message: `missing column(s): ${missing.join(", ")}` });
  // A header alone is refused naming the file, as an empty JSON Lines file is.
  else if (count === 0) errors.splice(0, errors.length, { line: 1, message: "the file has no items" });
}

function jsonlRecords(source: ImportSource): RecordStream {
  const errors: ItemIssue[] = [];
  return { records: jsonlRecordsInto(source, errors), errors };
}

function* jsonlRecordsInto(source: ImportSource, errors: ItemIssue[]): Generator<{ line: number; value: unknown }> {
  let count = 0;
  // The JSONL reader every import shares: a duplicate key, a lone surrogate or a number beyond a double is refused.
  // Line by line: a file streamed by the command line is never held whole (docs/reliability.md, "Bulk imports").
  for (const { line, text: raw } of source.jsonlLines()) {
    const entry = readJsonlLine(line, raw);
    if (!entry) continue;
    if ("invalid" in entry) errors.push({ line, message: `not valid JSON (${entry.invalid})` });
    else {
      count++;
      yield { line, value: entry.value };
    }
  }
  if (count === 0 && errors.length === 0) errors.push({ line: 1, message: "the file has no items" });
}

/** The valid items of a file, one at a time, with the problems and warnings in `issues` once the iteration ends. */
function* itemsOf(
  source: ImportSource,
  options: { csv: boolean; format?: "mentat" | "mentalbench" },
  issues: { errors: ItemIssue[]; warnings: ItemIssue[]; format: "mentat" | "mentalbench" },
): Generator<{ line: number; item: McItem }> {
  const { records, errors: recordErrors } = options.csv ? csvRecords(source) : jsonlRecords(source);
  const errors = issues.errors;
  const warnings = issues.warnings;
  const seen = new Map<string, number>();
  let format = options.format ?? "mentalbench";
  let first = true;
  for (const { line, value } of records) {
    if (first) {
      // The format is that of the first record when not given (MENTAT only in JSON Lines).
      format = options.format ?? (!options.csv && looksLikeMentat(value) ? "mentat" : "mentalbench");
      issues.format = format;
      first = false;
    }
    const item = format === "mentat" ? mentatItem(value, line, errors) : mentalBenchItem(value, line, errors, warnings);
    if (!item) continue;
    // The text policy of every import (docs/formats.md): ids without control characters, at most 256 characters;
    // the id, disease and cluster are cells of the report's CSVs (docs/security.md, "Spreadsheet exports").
    const idIssue = importIdProblem(item.id);
    if (idIssue) {
      errors.push({ line, message: idIssue });
      continue;
    }
    const odd =
      item.kind === "mentalbench"
        ? (formulaWarning({ id: item.id, disease: item.disease, cluster: item.cluster }) ??
          textWarning("question", item.question))
        : (formulaWarning({ id: item.id }) ?? textWarning("prompt", item.prompt));
    if (odd) warnings.push({ line, message: odd });
    const firstLine = seen.get(item.id);
    if (firstLine !== undefined) {
      errors.push({ line, message: `duplicate id ${JSON.stringify(item.id)} (first on line ${firstLine})` });
      continue;
    }
    seen.set(item.id, line);
    yield { line, item };
  }
  if (options.csv && recordErrors.length) {
    // A problem of the whole CSV is its only one, as when the CSV was read before its items were checked.
    errors.splice(0, errors.length, ...recordErrors);
    warnings.splice(0, warnings.length);
  } else pushAll(errors, recordErrors);
  if (options.csv && format === "mentat") {
    errors.push({ line: 1, message: "MENTAT records are JSON Lines (as mentat-export writes them), not CSV" });
  }
  issues.format = format;
}

/**
 * Reads an item file, a text or a file streamed through the import contract (never held whole). `csv` selects the
 * CSV reader (MentalBench only); otherwise JSON Lines — MENTAT records when the first object has `question_id`
 * and `labels`, MentalBench items otherwise (or as `format` says).
 */
export function parseItems(
  input: string | ImportSource,
  options: { csv: boolean; format?: "mentat" | "mentalbench" },
): ItemsResult {
  const source = typeof input === "string" ? textSource(input) : input;
  const issues = { errors: [] as ItemIssue[], warnings: [] as ItemIssue[], format: options.format ?? "mentalbench" };
  const items: McItem[] = [];
  for (const { item } of itemsOf(source, options, issues)) items.push(item);
  issues.errors.sort((a, b) => a.line - b.line);
  return {
    items: issues.errors.length ? [] : items,
    errors: issues.errors,
    warnings: issues.warnings,
    format: issues.format,
  };
}

/**
 * The items of a file a run reads twice (docs/reliability.md, "Memory bounded by the longest line"): the first pass
 * (`checkItemFile`) checks every item as `parseItems` does but keeps of each only its id, its question (MENTAT, for
 * the few-shot split) and a content hash; `read()` reads the file again through `secondPass`, handing the items on
 * one at a time, and throws `FileChangedError` if the file is not the one checked. A run holds the items it is
 * asking, never the file's.
 */
export interface McItemSource {
  readonly count: number;
  readonly index: readonly { id: string; questionId?: string }[];
  read(): Iterable<McItem>;
}

const itemHash = (item: McItem) => createHash("sha256").update(JSON.stringify(item)).digest("base64");

export function checkItemFile(
  source: ImportSource,
  options: { csv: boolean; format?: "mentat" | "mentalbench" },
): Omit<ItemsResult, "items"> & { items: McItemSource | null } {
  const issues = { errors: [] as ItemIssue[], warnings: [] as ItemIssue[], format: options.format ?? "mentalbench" };
  const first: PassKey[] = [];
  const index: { id: string; questionId?: string }[] = [];
  for (const { item } of itemsOf(source, options, issues)) {
    first.push({ key: item.id, hash: itemHash(item) });
    index.push(item.kind === "mentat" ? { id: item.id, questionId: item.questionId } : { id: item.id });
  }
  issues.errors.sort((a, b) => a.line - b.line);
  const { errors, warnings, format } = issues;
  if (errors.length) return { items: null, errors, warnings, format };
  const firstSha256 = source.sha256();
  const again = { errors: [] as ItemIssue[], warnings: [] as ItemIssue[], format };
  const items: McItemSource = {
    count: index.length,
    index,
    *read() {
      for (const batch of secondPass({
        source,
        records: () => itemsOf(source, { ...options, format }, again),
        keyOf: ({ item }) => ({ key: item.id, hash: itemHash(item) }),
        first,
        firstSha256,
        batchSize: 1,
      }))
        for (const { item } of batch) yield item;
    },
  };
  return { items, errors, warnings, format };
}
