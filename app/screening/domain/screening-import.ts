/**
 * Reading the files of a screening review (docs/screening.md): the corpus (HealthBench JSONL conversations or plain-text items),
 * the automatic screen's labels and a recall screen's tiers, from CSV or JSONL. Each reader validates the whole file
 * and reports every bad line with its line (`FILE:LINE: reason` where printed); callers write nothing while `errors` is non-empty.
 */
import { isJsonObject, readJsonlLine } from "../../formats/jsonl";
import { textSource, type ImportSource } from "../../formats/import-source";
import { formatOf, MAX_FILE_BYTES, type ImportIssue } from "../../annotation/public";
import { decodeUtf8, idProblem, normaliseId, textWarning } from "../../formats/strict-text";
import { RECALL_TIERS, SCREEN_LABELS, type RecallTier, type ScreenLabel } from "./screening";
import { formulaWarning } from "../../formats/spreadsheet-safe";

export type { ImportIssue };
export type FileFormat = "csv" | "jsonl";

export const MAX_ITEM_CHARS = 200_000;
export const MAX_ID_CHARS = 200;
export const MAX_RATIONALE_CHARS = 20_000;

export interface FileOptions {
  filename?: string;
  format?: FileFormat;
}

interface RecordRow {
  line: number;
  fields: Record<string, unknown>;
}

interface Records {
  format: FileFormat;
  /** CSV header names (trimmed), read before the rows; null for JSONL. */
  header: string[] | null;
  /** The records, read from the file as they are iterated (once). */
  rows: Iterable<RecordRow>;
  /** Problems of single JSONL lines, added as the rows are read. */
  errors: ImportIssue[];
  /**
   * Once the rows have been read to their end: the problem that refuses the file as a whole (unreadable, empty, no
   * rows), which replaces every other error, or null.
   */
  fatal(): ImportIssue | null;
}

function fail(format: FileFormat, line: number, message: string): Records {
  return { format, header: null, rows: [], errors: [], fatal: () => ({ line, message }) };
}

/**
 * Decodes and splits a CSV (header row + one record per row) or JSONL (one object per line) file into records: bytes
 * or a text in memory (a page's upload), or a file the command line streams through the import contract (an
 * ImportSource, app/formats/import-source.ts: never held whole, each record handed on as it is read;
 * docs/reliability.md, "Memory bounded by the longest line").
 */
function readRecords(input: Uint8Array | string | ImportSource, options: FileOptions): Records {
  const format = formatOf(options.filename, options.format);
  if (!format)
    return fail(
      "csv",
      0,
      `cannot tell the format of "${options.filename}": name it .csv or .jsonl, or choose the format.`,
    );
  let source: ImportSource;
  if (typeof input === "string" || input instanceof Uint8Array) {
    let text: string;
    if (typeof input === "string") text = input;
    else {
      if (input.byteLength > MAX_FILE_BYTES)
        return fail(format, 0, `the file has ${input.byteLength} bytes; the limit is ${MAX_FILE_BYTES}. Split it.`);
      const decoded = decodeUtf8(input);
      if ("error" in decoded) return fail(format, decoded.error.line, decoded.error.message);
      text = decoded.text;
    }
    if (text.replace(/^\uFEFF/, "").trim() === "") return fail(format, 1, "the file is empty.");
    source = textSource(text);
  } else source = input; // A file through the import contract, which refuses an empty one.
  return format === "csv" ? readCsvFile(source) : readJsonlFile(source);
}

function readCsvFile(source: ImportSource): Records {
  const read = source.csvRecords();
  const records = read.records[Symbol.iterator]();
  const first = records.next();
  if (first.done) {
    const error = read.error();
    return fail("csv", error?.line ?? 1, error ? `the CSV cannot be read: ${error.reason}` : "the file is empty.");
  }
  const header = first.value.cells.map((h) => h.trim());
  let count = 0;
  function* rows(): Generator<RecordRow> {
    for (let next = records.next(); !next.done; next = records.next()) {
      const fields: Record<string, unknown> = {};
      header.forEach((name, i) => {
        if (name) fields[name] = next.value.cells[i] ?? "";
      });
      count++;
      yield { line: next.value.line, fields };
    }
  }
  return {
    format: "csv",
    header,
    rows: { [Symbol.iterator]: rows },
    errors: [],
    fatal() {
      const error = read.error();
      if (error) return { line: error.line, message: `the CSV cannot be read: ${error.reason}` };
      return count === 0 ? { line: 2, message: "the file has a header but no rows." } : null;
    },
  };
}

function readJsonlFile(source: ImportSource): Records {
  const errors: ImportIssue[] = [];
  let content = false;
  let count = 0;
  function* rows(): Generator<RecordRow> {
    for (const { line, text: lineText } of source.jsonlLines()) {
      const entry = readJsonlLine(line, lineText);
      if (!entry) continue;
      content = true;
      if ("invalid" in entry) errors.push({ line, message: `not valid JSON (${entry.invalid}).` });
      else if (!isJsonObject(entry.value)) errors.push({ line, message: "each line must be one JSON object." });
      else {
        count++;
        yield { line, fields: entry.value };
      }
    }
  }
  return {
    format: "jsonl",
    header: null,
    rows: { [Symbol.iterator]: rows },
    errors,
    fatal() {
      if (!content) return { line: 1, message: "the file is empty." };
      return count === 0 && errors.length === 0 ? { line: 1, message: "the file has no records." } : null;
    },
  };
}

/**
 * A file's checked rows, read as they are iterated (once: `rows`), and once they are all read, its errors (in line
 * order) and warnings. A screening import reads its files through this twice — checked first, keeping each row's id
 * and hash, then written — so that it holds one row, never the file (docs/reliability.md, "Memory bounded by the
 * longest line"). A row with an error is not handed on; `rows` hands on nothing once the file has a header error.
 */
export interface StreamedParse<T> {
  format: FileFormat;
  rows: Iterable<T>;
  result(): { errors: ImportIssue[]; warnings: ImportIssue[] };
}

function streamedParse<T>(
  records: Records,
  columns: { needed: string[][]; used: string[] },
  check: (row: RecordRow, errors: ImportIssue[], warnings: ImportIssue[]) => T | null,
): StreamedParse<T> {
  const headerErrors = missingColumns(records, columns.needed);
  const headerWarnings = unusedColumns(records, columns.used);
  let outcome: { errors: ImportIssue[]; warnings: ImportIssue[] } | null = null;
  function* rows(): Generator<T> {
    const errors: ImportIssue[] = [...headerErrors];
    const warnings = [...headerWarnings];
    for (const row of records.rows) {
      // A header error refuses the file before its rows are checked; they are still read, for a later unreadable one.
      if (headerErrors.length) continue;
      const checked = check(row, errors, warnings);
      if (checked !== null) yield checked;
    }
    const fatal = records.fatal();
    if (fatal) outcome = { errors: [fatal], warnings: [] };
    else outcome = { errors: byLine([...records.errors, ...errors]), warnings };
  }
  return {
    format: records.format,
    rows: { [Symbol.iterator]: rows },
    result() {
      if (!outcome) throw new Error("result() asked before the rows were all read");
      return outcome;
    },
  };
}

/** Every row of a streamed parse, kept, with its errors and warnings (rows only when there is no error). */
function collect<T>(parse: StreamedParse<T>): { rows: T[]; errors: ImportIssue[]; warnings: ImportIssue[] } {
  const rows = [...parse.rows];
  const { errors, warnings } = parse.result();
  return { rows: errors.length ? [] : rows, errors, warnings };
}

/** The item id of a record: `prompt_id` (HealthBench) or `id`, as text. */
function idOf(fields: Record<string, unknown>): string | null {
  const id = fields.prompt_id ?? fields.id;
  if (typeof id === "number" && Number.isFinite(id)) return String(id);
  if (typeof id !== "string") return null;
  const trimmed = normaliseId(id.trim());
  return trimmed === "" ? null : trimmed;
}

function checkId(row: RecordRow, seen: Map<string, number>, errors: ImportIssue[]): string | null {
  const id = idOf(row.fields);
  if (id === null) {
    errors.push({ line: row.line, message: "missing id (`prompt_id` or `id`)." });
    return null;
  }
  const bad = idProblem(id);
  if (bad) {
    errors.push({ line: row.line, message: bad });
    return null;
  }
  if (id.length > MAX_ID_CHARS) {
    errors.push({ line: row.line, message: `the id has ${id.length} characters; at most ${MAX_ID_CHARS}.` });
    return null;
  }
  const first = seen.get(id);
  if (first !== undefined) {
    errors.push({ line: row.line, message: `duplicate id "${id}" (first on line ${first}).` });
    return null;
  }
  seen.set(id, row.line);
  return id;
}

/** Errors in line order (a stable sort keeps several errors of one line in the order found). */
function byLine(errors: ImportIssue[]): ImportIssue[] {
  return [...errors].sort((a, b) => a.line - b.line);
}

function missingColumns(records: Records, needed: string[][]): ImportIssue[] {
  if (!records.header) return [];
  const missing = needed.filter((alternatives) => !alternatives.some((a) => records.header!.includes(a)));
  return missing.map((alternatives) => ({
    line: 1,
    message: `missing column ${alternatives.map((a) => `"${a}"`).join(" or ")}.`,
  }));
}

function unusedColumns(records: Records, used: string[]): ImportIssue[] {
  if (!records.header) return [];
  const unused = records.header.filter((h) => h && !used.includes(h));
  return unused.length
    ? [
        {
          line: 1,
          message: `column${unused.length > 1 ? "s" : ""} ${unused.map((u) => `"${u}"`).join(", ")} not used.`,
        },
      ]
    : [];
}

export interface Message {
  role: string;
  content: string;
}

export interface ParsedItem {
  line: number;
  id: string;
  kind: "conversation" | "text";
  /** conversation: the messages; text: one element with role "text". */
  messages: Message[];
  tags: string[];
  /** The record as it will be released (compact JSON, keys in the file's order). */
  source: string;
}

export interface ItemsParse {
  format: FileFormat;
  items: ParsedItem[];
  errors: ImportIssue[];
  warnings: ImportIssue[];
}

/**
 * Reads a corpus. JSONL: HealthBench records (`prompt_id`, `prompt` = [{role, content}, …], `example_tags`,
 * `rubrics` and any other keys, all kept for the release but only the messages shown), or `{"id", "text"}` for plain
 * text. CSV: columns `id` and `text`, optional `tags` (separated by `;`).
 */
export function parseItemsFile(input: Uint8Array | string | ImportSource, options: FileOptions): ItemsParse {
  const parse = itemsOfFile(input, options);
  const { rows, errors, warnings } = collect(parse);
  return { format: parse.format, items: rows, errors, warnings };
}

/** The corpus's items as `parseItemsFile` checks them, read as they are iterated (see `StreamedParse`). */
export function itemsOfFile(
  input: Uint8Array | string | ImportSource,
  options: FileOptions,
): StreamedParse<ParsedItem> {
  const records = readRecords(input, options);
  const seen = new Map<string, number>();
  const columns = { needed: [["id", "prompt_id"], ["text"]], used: ["id", "prompt_id", "text", "tags"] };
  return streamedParse(records, columns, (row, errors, warnings): ParsedItem | null => {
    const id = checkId(row, seen, errors);
    const f = row.fields;
    let messages: Message[] | null;
    let kind: ParsedItem["kind"] = "text";
    if (f.prompt !== undefined) {
      kind = "conversation";
      if (!Array.isArray(f.prompt) || f.prompt.length === 0) {
        errors.push({ line: row.line, message: '"prompt" must be a non-empty list of {role, content} messages.' });
        return null;
      }
      messages = [];
      for (const [k, m] of f.prompt.entries()) {
        const mo = (m ?? {}) as Record<string, unknown>;
        if (typeof mo.role !== "string" || mo.role.trim() === "" || typeof mo.content !== "string") {
          errors.push({ line: row.line, message: `message ${k + 1} of "prompt" needs a "role" and a text "content".` });
          messages = null;
          break;
        }
        messages.push({ role: mo.role.trim(), content: mo.content });
      }
      if (!messages) return null;
    } else if (typeof f.text === "string" && f.text.trim() !== "") {
      messages = [{ role: "text", content: f.text.trim() }];
    } else {
      errors.push({
        line: row.line,
        message: 'the item needs "prompt" (a list of {role, content} messages) or a non-empty "text".',
      });
      return null;
    }
    const size = messages.reduce((n, m) => n + m.content.length, 0);
    if (size > MAX_ITEM_CHARS) {
      errors.push({ line: row.line, message: `the item has ${size} characters of text; at most ${MAX_ITEM_CHARS}.` });
      return null;
    }
    let tags: string[] = [];
    const rawTags = f.example_tags ?? f.tags;
    if (Array.isArray(rawTags) && rawTags.every((t) => typeof t === "string")) tags = rawTags as string[];
    else if (typeof rawTags === "string")
      tags = rawTags
        .split(";")
        .map((t) => t.trim())
        .filter(Boolean);
    else if (rawTags !== undefined && rawTags !== null) {
      errors.push({ line: row.line, message: '"example_tags" must be a list of strings.' });
      return null;
    }
    if (id === null) return null;
    const source =
      records.format === "jsonl"
        ? JSON.stringify(f)
        : JSON.stringify(
            tags.length ? { id, text: messages[0]!.content, example_tags: tags } : { id, text: messages[0]!.content },
          );
    // Kept as given; the release's CSVs quote such text (docs/security.md, "Spreadsheet exports").
    const formula = formulaWarning({
      id,
      ...Object.fromEntries(messages.map((m, k) => [`message ${k + 1}`, m.content])),
      ...Object.fromEntries(tags.map((t, k) => [`example_tags[${k}]`, t])),
    });
    if (formula) warnings.push({ line: row.line, message: formula });
    for (const [k, m] of messages.entries()) {
      const w = textWarning(`message ${k + 1}`, m.content);
      if (w) warnings.push({ line: row.line, message: w });
    }
    return { line: row.line, id, kind, messages, tags, source };
  });
}

function text(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "string") return value.trim();
  return JSON.stringify(value);
}

/** "Not relevant", "not-relevant" and "NOT_RELEVANT" all read as not_relevant. */
function normaliseTerm(value: string): string {
  return value
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, "_");
}

/** The vocabulary's term for a category written in any case; null when it is not one. */
export function canonicalCategory(value: string, vocabulary: readonly string[]): string | null {
  const wanted = value.trim().toLowerCase();
  return vocabulary.find((v) => v.toLowerCase() === wanted) ?? null;
}

export interface ParsedLabel {
  line: number;
  id: string;
  label: ScreenLabel;
  category: string | null;
  confidence: string | null;
  rationale: string;
}

export interface LabelsParse {
  format: FileFormat;
  labels: ParsedLabel[];
  errors: ImportIssue[];
  warnings: ImportIssue[];
}

/**
 * Reads the automatic screen's labels: `id` (or `prompt_id`), `label` (relevant / borderline / not_relevant),
 * optional `category` (a term of the study's vocabulary, any case), `confidence` and `rationale`. Every id must name
 * an item of the study (or of the corpus file imported with it).
 */
export function parseLabelsFile(
  input: Uint8Array | string | ImportSource,
  options: FileOptions & { knownIds: ReadonlySet<string>; vocabulary: readonly string[] },
): LabelsParse {
  const parse = labelsOfFile(input, options);
  const { rows, errors, warnings } = collect(parse);
  return { format: parse.format, labels: rows, errors, warnings };
}

/** As `parseLabelsFile` checks them, read as they are iterated (see `StreamedParse`). */
export function labelsOfFile(
  input: Uint8Array | string | ImportSource,
  options: FileOptions & { knownIds: ReadonlySet<string>; vocabulary: readonly string[] },
): StreamedParse<ParsedLabel> {
  const records = readRecords(input, options);
  const seen = new Map<string, number>();
  const columns = {
    needed: [["id", "prompt_id"], ["label"]],
    used: ["id", "prompt_id", "label", "category", "confidence", "rationale"],
  };
  return streamedParse(records, columns, (row, errors): ParsedLabel | null => {
    const id = checkId(row, seen, errors);
    if (id === null) return null;
    if (!options.knownIds.has(id)) {
      errors.push({ line: row.line, message: `no item "${id}" in the study: import the items first.` });
      return null;
    }
    const label = normaliseTerm(text(row.fields.label));
    if (!(SCREEN_LABELS as readonly string[]).includes(label)) {
      errors.push({
        line: row.line,
        message: `label "${text(row.fields.label)}" is not one of ${SCREEN_LABELS.join(", ")}.`,
      });
      return null;
    }
    const rawCategory = text(row.fields.category);
    let category: string | null = null;
    if (rawCategory) {
      category = canonicalCategory(rawCategory, options.vocabulary);
      if (category === null) {
        errors.push({
          line: row.line,
          message: `category "${rawCategory}" is not in the study's vocabulary (${options.vocabulary.join("; ")}).`,
        });
        return null;
      }
    }
    const confidence = text(row.fields.confidence);
    if (confidence.length > 40) {
      errors.push({ line: row.line, message: "the confidence has more than 40 characters." });
      return null;
    }
    const rationale = text(row.fields.rationale);
    if (rationale.length > MAX_RATIONALE_CHARS) {
      errors.push({ line: row.line, message: `the rationale has more than ${MAX_RATIONALE_CHARS} characters.` });
      return null;
    }
    return {
      line: row.line,
      id,
      label: label as ScreenLabel,
      category,
      confidence: confidence || null,
      rationale,
    };
  });
}

export interface ParsedTier {
  line: number;
  id: string;
  tier: RecallTier;
  rationale: string;
}

export interface TiersParse {
  format: FileFormat;
  tiers: ParsedTier[];
  errors: ImportIssue[];
  warnings: ImportIssue[];
}

/**
 * Reads a recall screen's tiers: `id` (or `prompt_id`), `tier` (clear / possible / no), optional `rationale`.
 * `ineligible(id)` says why an item cannot be tiered (unknown, or already reviewed in a round), or null.
 */
export function parseTiersFile(
  input: Uint8Array | string | ImportSource,
  options: FileOptions & { ineligible: (id: string) => string | null },
): TiersParse {
  const parse = tiersOfFile(input, options);
  const { rows, errors, warnings } = collect(parse);
  return { format: parse.format, tiers: rows, errors, warnings };
}

/** As `parseTiersFile` checks them, read as they are iterated (see `StreamedParse`). */
export function tiersOfFile(
  input: Uint8Array | string | ImportSource,
  options: FileOptions & { ineligible: (id: string) => string | null },
): StreamedParse<ParsedTier> {
  const records = readRecords(input, options);
  const seen = new Map<string, number>();
  const columns = { needed: [["id", "prompt_id"], ["tier"]], used: ["id", "prompt_id", "tier", "rationale"] };
  return streamedParse(records, columns, (row, errors): ParsedTier | null => {
    const id = checkId(row, seen, errors);
    if (id === null) return null;
    const why = options.ineligible(id);
    if (why !== null) {
      errors.push({ line: row.line, message: why });
      return null;
    }
    const tier = normaliseTerm(text(row.fields.tier));
    if (!(RECALL_TIERS as readonly string[]).includes(tier)) {
      errors.push({
        line: row.line,
        message: `tier "${text(row.fields.tier)}" is not one of ${RECALL_TIERS.join(", ")}.`,
      });
      return null;
    }
    const rationale = text(row.fields.rationale);
    if (rationale.length > MAX_RATIONALE_CHARS) {
      errors.push({ line: row.line, message: `the rationale has more than ${MAX_RATIONALE_CHARS} characters.` });
      return null;
    }
    return { line: row.line, id, tier: tier as RecallTier, rationale };
  });
}

/** Categories typed one per line (or separated by `;`), trimmed, blanks and repeats dropped. */
export function parseVocabulary(textValue: string): string[] {
  const out: string[] = [];
  for (const term of textValue.split(/[\n;]/).map((t) => t.trim())) {
    if (term && !out.some((o) => o.toLowerCase() === term.toLowerCase())) out.push(term);
  }
  return out;
}
