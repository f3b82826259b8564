/**
 * Reading a case file (docs/safe-psych.md#cases-and-sections, docs/formats.md#released-csv-datacsv): CSV (the Safe-Psych released CSV or any one-row-per-case CSV with
 * mappable column names) or JSONL, read as a stream (`CaseFileReader`) or whole (`parseCaseFile`). The whole file is
 * validated: the result lists every bad row as `line N: reason`, and nothing of a file with errors is imported.
 */
import { CsvRecordStream } from "../../formats/csv";
import { isJsonObject, readJsonlLine, splitJsonlLines, type JsonlEntry } from "../../formats/jsonl";
import { IdLineIndex, type IdLines } from "../../formats/id-index";
import { StrictUtf8Stream } from "../../formats/utf8-stream";
import {
  AGE_GROUPS,
  compactSections,
  MAX_SECTIONS,
  normaliseAgeGroup,
  SECTION_KINDS,
  type Section,
  type SectionKind,
} from "./sections";
import { pyStrip } from "../../python-compat/text";
import {
  REFERENCE_FLAG_COLUMNS,
  REFERENCE_LABEL_COLUMNS,
  REFERENCE_NAMES,
  type ReferenceLabelCells,
} from "../../labels/labels";
import { formulaWarning, looksLikeFormula } from "../../formats/spreadsheet-safe";
import { idProblem, normaliseId, textWarning } from "../../formats/strict-text";

/** The reference's label columns, in its order (app/labels/labels.ts, the one mapping to the reference format). */
export const LABEL_COLUMNS = REFERENCE_LABEL_COLUMNS;

/** Every column Concord reads, by its canonical (reference) name. */
export const CASE_COLUMNS = ["id", "age_group", "sex", ...SECTION_KINDS, ...LABEL_COLUMNS, "source_diagnosis"] as const;
export type CaseColumn = (typeof CASE_COLUMNS)[number];

export const MAX_SECTION_CHARS = 100_000;
export const MAX_FILE_BYTES = 50 * 1024 * 1024;

/** Labels shipped with a dataset: reference values, kept apart from annotators and adjudicators. */
export type ReferenceLabels = ReferenceLabelCells;

export interface ParsedCase {
  line: number;
  externalId: string;
  ageGroup: string;
  sex: string;
  sections: Section[];
  referenceLabels: ReferenceLabels | null;
  sourceDiagnosis: string | null;
}

export interface ImportIssue {
  line: number;
  message: string;
}

export interface ParseResult {
  format: "csv" | "jsonl";
  cases: ParsedCase[];
  errors: ImportIssue[];
  warnings: ImportIssue[];
  /** True when the file carries the reference label columns. */
  hasReferenceLabels: boolean;
}

export interface ParseOptions {
  format?: "csv" | "jsonl";
  filename?: string;
  /** Canonical column → the header used in the file, e.g. { presenting_symptoms: "Symptoms" }. */
  columnMap?: Partial<Record<CaseColumn, string>>;
  /** Returns the canonical WHO chapter V code, or null when the text is not one. */
  canonicalCode: (code: string) => string | null;
  /** Where the ids read so far are kept for the duplicate check (default: a compact index in memory). */
  ids?: IdLines;
}

export function formatOf(filename: string | undefined, explicit?: "csv" | "jsonl"): "csv" | "jsonl" | null {
  if (explicit) return explicit;
  const lower = (filename ?? "").toLowerCase();
  if (lower.endsWith(".csv")) return "csv";
  if (lower.endsWith(".jsonl") || lower.endsWith(".ndjson")) return "jsonl";
  return null;
}

/** What the reader reports about a whole file: its format, errors, warnings and whether it carries reference labels. */
export type CaseFileSummary = Omit<ParseResult, "cases">;

/** Reads a whole file (bytes or text) and returns its cases, or none when it has an error. */
export function parseCaseFile(input: Uint8Array | string, options: ParseOptions): ParseResult {
  const cases: ParsedCase[] = [];
  const reader = new CaseFileReader(
    options,
    (c) => cases.push(c),
    typeof input === "string" ? undefined : input.byteLength,
  );
  if (typeof input === "string") reader.writeText(input);
  else reader.write(input);
  const summary = reader.finish();
  return { ...summary, cases: summary.errors.length ? [] : cases };
}

interface RawRow {
  line: number;
  values: Partial<Record<CaseColumn, string>>;
  /** Section texts given as a list (JSONL only), checked for count and kind. */
  sectionList?: { kind: string; content: string }[];
}

const BOM = [0xef, 0xbb, 0xbf];
const startsWithBom = (b: Uint8Array) => b.length >= 3 && b[0] === BOM[0] && b[1] === BOM[1] && b[2] === BOM[2];

/**
 * A case file read as a stream (docs/reliability.md, "Bulk imports"): `write` its bytes in chunks of any size (or
 * `writeText` a whole text), then `finish` once. Each case that passes every check is handed to `onCase` as soon as
 * its record is read; `refused` says whether the file has shown an error yet (an importer stops writing then), and
 * `finish` returns the report of the whole file — the same errors, warnings and order as reading the file at once:
 * a file that is not UTF-8, is empty or cannot be read as CSV reports only that; a header that cannot be used
 * reports only its own errors; otherwise every bad row, by line. Holds only what checks across records need: the
 * ids seen (for duplicates), the messages, and the bytes of the record being read.
 */
export class CaseFileReader {
  readonly format: "csv" | "jsonl" | null;
  /** An error that stops the reading of the file: unknown format, too large, not UTF-8. */
  private fatal: ImportIssue | null = null;
  private readonly utf8: StrictUtf8Stream;
  private readonly csv: CsvRecordStream | null = null;
  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  private started = false;
  private nonBlank = false;
  /** JSONL: physical lines before the piece being read. */
  private linesBefore = 0;
  /** CSV: the header's columns, once read. */
  private header: { index: Map<CaseColumn, number>; length: number } | null = null;
  private headerErrors: ImportIssue[] = [];
  private records = 0;
  private rows = 0;
  private hasLabels = false;
  private readonly rawErrors: ImportIssue[] = [];
  private readonly rawWarnings: ImportIssue[] = [];
  private readonly errors: ImportIssue[] = [];
  private readonly warnings: ImportIssue[] = [];
  /** Every id so far and the line it was first on (for duplicates): compact in memory, or on disk (ParseOptions.ids). */
  private readonly firstLine: IdLines;

  constructor(
    private readonly options: ParseOptions,
    private readonly onCase: (c: ParsedCase) => void,
    byteLength?: number,
  ) {
    this.firstLine = options.ids ?? new IdLineIndex();
    this.format = formatOf(options.filename, options.format);
    this.utf8 = new StrictUtf8Stream((piece) => this.piece(piece));
    if (!this.format)
      this.fatal = {
        line: 0,
        message: `cannot tell the format of "${options.filename}": name it .csv or .jsonl, or choose the format.`,
      };
    else if (byteLength !== undefined && byteLength > MAX_FILE_BYTES)
      this.fatal = { line: 0, message: `the file has ${byteLength} bytes; the limit is ${MAX_FILE_BYTES}. Split it.` };
    if (this.format === "csv") this.csv = new CsvRecordStream((r) => this.csvRecord(r.line, r.cells));
  }

  /** True once the file has shown an error: nothing of it may be imported. */
  get refused(): boolean {
    return (
      this.fatal !== null ||
      this.utf8.error !== null ||
      this.csv?.error != null ||
      this.headerErrors.length > 0 ||
      this.rawErrors.length > 0 ||
      this.errors.length > 0
    );
  }

  /** The next chunk of the file's bytes. */
  write(chunk: Uint8Array): void {
    if (!this.fatal) this.utf8.write(chunk);
  }

  /** The whole file as text (no UTF-8 check: it is a string already). */
  writeText(text: string): void {
    if (this.fatal) return;
    for (let i = 0; i < 2 && text.charCodeAt(0) === 0xfeff; i++) text = text.slice(1);
    this.nonBlank ||= text.trim() !== "";
    if (this.csv) this.csv.write(Buffer.from(text));
    else this.jsonlText(text);
  }

  /** A piece of valid UTF-8 ending just after a line feed (or the file's last bytes). */
  private piece(piece: Uint8Array): void {
    if (!this.started) {
      // A BOM is dropped, and a second one after it (the file reader and the CSV or JSONL reader each dropped one).
      for (let i = 0; i < 2 && startsWithBom(piece); i++) piece = piece.subarray(3);
      this.started = true;
    }
    if (!this.nonBlank) this.nonBlank = this.decoder.decode(piece).trim() !== "";
    if (this.csv) this.csv.write(piece);
    else this.jsonlText(this.decoder.decode(piece));
  }

  finish(): CaseFileSummary {
    const format = this.format ?? "csv";
    const only = (error: ImportIssue): CaseFileSummary => ({
      format,
      errors: [error],
      warnings: [],
      hasReferenceLabels: false,
    });
    if (this.fatal) return only(this.fatal);
    this.utf8.finish();
    if (this.utf8.error) return only(this.utf8.error);
    if (!this.nonBlank) return only({ line: 1, message: "the file is empty." });
    if (this.csv) {
      this.csv.finish();
      const read = this.csv.error;
      if (read) return only({ line: read.line, message: `the CSV cannot be read: ${read.reason}` });
      if (this.records === 0) return only({ line: 1, message: "the file is empty." });
      if (this.headerErrors.length)
        return { format, errors: this.headerErrors, warnings: this.rawWarnings, hasReferenceLabels: false };
      if (this.rows === 0) return only({ line: 2, message: "the file has a header but no cases." });
    } else if (this.rows === 0 && this.rawErrors.length === 0) return only({ line: 1, message: "the file is empty." });
    return {
      format,
      errors: [...this.rawErrors, ...this.errors].sort((a, b) => a.line - b.line),
      warnings: [...this.rawWarnings, ...this.warnings],
      hasReferenceLabels: this.hasLabels,
    };
  }

  private csvRecord(line: number, record: string[]): void {
    if (this.records++ === 0) return this.csvHeader(record);
    if (this.headerErrors.length) return;
    const header = this.header!;
    if (record.length > header.length)
      this.rawWarnings.push({ line, message: `${record.length - header.length} cell(s) beyond the header ignored.` });
    const values: Partial<Record<CaseColumn, string>> = {};
    // Every cell is text, trimmed as the reference does; a short row reads as empty cells (docs/formats.md#released-csv-datacsv).
    for (const [column, at] of header.index) values[column] = pyStrip(record[at] ?? "");
    this.rows++;
    this.validate({ line, values });
  }

  private csvHeader(cells: string[]): void {
    const columnMap = this.options.columnMap ?? {};
    const header = cells.map((h) => h.trim());
    const errors = this.headerErrors;
    const index = new Map<CaseColumn, number>();
    for (const column of CASE_COLUMNS) {
      const name = columnMap[column] ?? column;
      const at = header.indexOf(name);
      if (at >= 0) index.set(column, at);
      else if (columnMap[column])
        errors.push({ line: 1, message: `column "${name}" (mapped to ${column}) is not in the header.` });
    }
    const required: CaseColumn[] = ["id", ...SECTION_KINDS];
    const missing = required.filter((c) => !index.has(c));
    if (missing.length) {
      errors.push({
        line: 1,
        message: `missing required column${missing.length > 1 ? "s" : ""} ${missing.map((c) => `"${columnMap[c] ?? c}"`).join(", ")}. The header must name id and the five section columns (${SECTION_KINDS.join(", ")}), or map your column names to them.`,
      });
    }
    const labelsPresent = LABEL_COLUMNS.filter((c) => index.has(c));
    if (labelsPresent.length > 0 && labelsPresent.length < LABEL_COLUMNS.length) {
      errors.push({
        line: 1,
        message: `label columns must all be present or all absent; missing ${LABEL_COLUMNS.filter((c) => !index.has(c)).join(", ")}.`,
      });
    }
    const used = new Set(index.values());
    const unused = header.filter((_, i) => !used.has(i) && header[i] !== "");
    if (unused.length)
      this.rawWarnings.push({
        line: 1,
        message: `column${unused.length > 1 ? "s" : ""} ${unused.map((u) => `"${u}"`).join(", ")} not used.`,
      });
    this.header = { index, length: header.length };
    this.hasLabels = labelsPresent.length === LABEL_COLUMNS.length;
  }

  private jsonlText(text: string): void {
    const lines = splitJsonlLines(text);
    for (const { line, text: lineText } of lines) {
      const entry = readJsonlLine(this.linesBefore + line, lineText);
      if (entry) this.jsonlEntry(entry);
    }
    this.linesBefore += lines.length;
  }

  private jsonlEntry(entry: JsonlEntry): void {
    const { line } = entry;
    const errors = this.rawErrors;
    if ("invalid" in entry) {
      errors.push({ line, message: `not valid JSON (${entry.invalid}).` });
      return;
    }
    if (!isJsonObject(entry.value)) {
      errors.push({ line, message: "each line must be one JSON object." });
      return;
    }
    const o = entry.value;
    const values: Partial<Record<CaseColumn, string>> = {};
    // Nothing given is dropped silently (docs/formats.md, "Case JSONL"): a value of the wrong type is refused, and so
    // is text under a key Concord does not read — a misspelt section would otherwise vanish from the case.
    const problems: string[] = [];
    const id = o.id ?? o.sample_id;
    if (typeof id === "string") values.id = pyStrip(id);
    else if (typeof id === "number") {
      if (Number.isSafeInteger(id)) values.id = String(id);
      else
        problems.push(`the id ${JSON.stringify(id)} is a number that does not read back as written; give it as text.`);
    } else if (id !== undefined && id !== null) problems.push('"id" must be text or a whole number.');
    for (const key of ["age_group", "sex", "source_diagnosis"] as const) {
      const v = o[key];
      if (v === undefined || v === null) continue;
      if (typeof v === "string" || typeof v === "number") values[key] = pyStrip(String(v));
      else problems.push(`"${key}" must be text.`);
    }
    const unusedKeys: string[] = [];
    for (const [key, v] of Object.entries(o)) {
      if (JSONL_KEYS.has(key)) continue;
      if (typeof v === "string" && v.trim() !== "")
        problems.push(
          `the key "${key}" holds text but is not a case field, so its text would be dropped; rename it to a section (${SECTION_KINDS.join(", ")}) or remove it.`,
        );
      else unusedKeys.push(key);
    }
    if (unusedKeys.length)
      this.rawWarnings.push({
        line,
        message: `key${unusedKeys.length > 1 ? "s" : ""} ${unusedKeys.map((k) => `"${k}"`).join(", ")} not used.`,
      });
    let sectionList: RawRow["sectionList"];
    const sections = o.sections;
    if (Array.isArray(sections)) {
      sectionList = [];
      for (const s of sections) {
        const so = (s ?? {}) as Record<string, unknown>;
        const kind = so.kind ?? so.section_name;
        if (typeof kind !== "string" || typeof so.content !== "string") {
          errors.push({
            line,
            message: 'each element of "sections" needs "kind" (a section kind) and "content" (text).',
          });
          return;
        }
        sectionList.push({ kind, content: so.content });
      }
    } else {
      if (sections !== undefined && sections !== null && !isJsonObject(sections))
        problems.push('"sections" must be an object of section texts or a list of {kind, content}.');
      const source = (isJsonObject(sections) ? sections : o) as Record<string, unknown>;
      if (isJsonObject(sections)) {
        for (const key of Object.keys(sections))
          if (!(SECTION_KINDS as readonly string[]).includes(key))
            problems.push(`unknown section "${key}" in "sections"; use ${SECTION_KINDS.join(", ")}.`);
      }
      for (const kind of SECTION_KINDS) {
        const v = source[kind];
        if (v === undefined || v === null) continue;
        if (typeof v !== "string") {
          errors.push({ line, message: `section ${kind} must be text.` });
          return;
        }
        values[kind] = v;
      }
    }
    if (o.labels !== undefined && o.labels !== null && !isJsonObject(o.labels))
      problems.push(
        `"labels" must be an object of label fields (${REFERENCE_NAMES.sufficiency}, …), not a list or a value.`,
      );
    const labelSource = (isJsonObject(o.labels) ? o.labels : o) as Record<string, unknown>;
    if (isJsonObject(o.labels)) {
      for (const key of Object.keys(o.labels))
        if (!(LABEL_COLUMNS as readonly string[]).includes(key))
          problems.push(`unknown label "${key}" in "labels"; use ${LABEL_COLUMNS.join(", ")}.`);
    }
    for (const column of LABEL_COLUMNS) {
      const raw = labelSource[column];
      const v = labelText(raw);
      if (v !== undefined) {
        values[column] = v;
        this.hasLabels = true;
      } else if (raw !== undefined && raw !== null)
        problems.push(`label ${column} must be text, a number or true/false.`);
    }
    if (problems.length) {
      for (const message of problems) errors.push({ line, message });
      return;
    }
    this.rows++;
    this.validate({ line, values, sectionList });
  }

  /** The checks of one row, and those across rows (a duplicate id, in NFC); a case that passes goes to `onCase`. */
  private validate(row: RawRow): void {
    const { errors, warnings } = this;
    const v = row.values;
    const id = normaliseId(v.id ?? "");
    const fail = (message: string) => errors.push({ line: row.line, message: id ? `(id ${id}) ${message}` : message });
    if (!id) {
      fail("missing id: every case needs a non-empty id.");
      return;
    }
    const badId = idProblem(id);
    if (badId) {
      errors.push({ line: row.line, message: badId });
      return;
    }
    const seen = this.firstLine.add(id, row.line);
    if (seen !== undefined) {
      fail(`duplicate id "${id}" (first on line ${seen}).`);
      return;
    }

    let sections: Section[];
    if (row.sectionList) {
      // Counted before the kinds are checked: six or more sections always repeat a kind or name an unknown one.
      const nonEmpty = row.sectionList.filter((s) => pyStrip(s.content) !== "").length;
      if (nonEmpty > MAX_SECTIONS) {
        fail(`${nonEmpty} non-empty sections; a case needs 3 to 5.`);
        return;
      }
      const byKind: Partial<Record<SectionKind, string>> = {};
      let bad = false;
      for (const s of row.sectionList) {
        if (!(SECTION_KINDS as readonly string[]).includes(s.kind)) {
          fail(`unknown section kind "${s.kind}"; use one of ${SECTION_KINDS.join(", ")}.`);
          bad = true;
        } else if (byKind[s.kind as SectionKind] !== undefined) {
          fail(`section ${s.kind} appears twice.`);
          bad = true;
        } else byKind[s.kind as SectionKind] = s.content;
      }
      if (bad) return;
      sections = compactSections(byKind);
    } else {
      sections = compactSections(v);
    }
    let tooLong = false;
    for (const s of sections) {
      if (s.content.length > MAX_SECTION_CHARS) {
        fail(`section ${s.kind} has ${s.content.length} characters; the limit is ${MAX_SECTION_CHARS}.`);
        tooLong = true;
      }
    }
    if (tooLong) return;
    if (sections.length < 3 || sections.length > 5) {
      fail(`${sections.length} non-empty section${sections.length === 1 ? "" : "s"}; a case needs 3 to 5.`);
      return;
    }
    const ageGroup = v.age_group ?? "";
    if (ageGroup !== "" && normaliseAgeGroup(ageGroup) === null) {
      warnings.push({
        line: row.line,
        message: `(id ${id}) age group "${ageGroup}" is not one of ${AGE_GROUPS.join(", ")}; kept as given.`,
      });
    }
    // A JSONL row without label values reads as having none whether or not a later line has some, so only the CSV
    // header decides whether labels are read.
    const labels =
      this.format === "jsonl" || this.hasLabels
        ? readLabels(v, sections.length, this.options.canonicalCode)
        : { labels: null, problems: [] };
    if (labels.problems.length) {
      for (const p of labels.problems) fail(p);
      return;
    }
    // Kept as given; the CSVs for spreadsheets quote such text (docs/security.md, "Spreadsheet exports").
    // The fields are gathered only for a case that has something to warn of: this runs for every case of a file.
    const texts = [v.sex, ageGroup, v.source_diagnosis];
    const suspect = (t: string | undefined) => t !== undefined && (looksLikeFormula(t) || textWarning("", t) !== null);
    if (suspect(id) || texts.some(suspect) || sections.some((s) => suspect(s.content))) {
      const formula = formulaWarning({
        id,
        age_group: ageGroup,
        sex: v.sex,
        source_diagnosis: v.source_diagnosis,
        ...Object.fromEntries(sections.map((s) => [s.kind, s.content])),
      });
      if (formula) warnings.push({ line: row.line, message: `(id ${id}) ${formula}` });
      for (const [field, text] of [
        ["sex", v.sex],
        ["age_group", ageGroup],
        ["source_diagnosis", v.source_diagnosis],
        ...sections.map((s) => [s.kind, s.content]),
      ] as [string, string | undefined][]) {
        const warning = textWarning(field, text);
        if (warning) warnings.push({ line: row.line, message: `(id ${id}) ${warning}` });
      }
    }
    this.onCase({
      line: row.line,
      externalId: id,
      ageGroup,
      sex: v.sex ?? "",
      sections,
      referenceLabels: labels.labels,
      sourceDiagnosis: v.source_diagnosis ? v.source_diagnosis : null,
    });
  }
}

const JSONL_KEYS = new Set<string>([
  "id",
  "sample_id",
  "age_group",
  "sex",
  "source_diagnosis",
  "sections",
  "labels",
  "concord_extras",
  ...SECTION_KINDS,
  ...LABEL_COLUMNS,
]);

function labelText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === true) return "1";
  if (value === false) return "0";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return pyStrip(value);
  return undefined;
}

const FLAG = new Set(["1", "0"]);

/**
 * Checks one row's reference labels against their domains (docs/formats.md#released-csv-datacsv: `1`/`0` flags, a chapter V code when
 * sufficient, τ a plain integer in 1..T). A row whose label cells are all empty has no reference labels.
 */
function readLabels(
  v: Partial<Record<CaseColumn, string>>,
  numSections: number,
  canonicalCode: ParseOptions["canonicalCode"],
): { labels: ReferenceLabels | null; problems: string[] } {
  const cells = Object.fromEntries(LABEL_COLUMNS.map((c) => [c, v[c] ?? ""])) as ReferenceLabels;
  if (LABEL_COLUMNS.every((c) => cells[c] === "")) return { labels: null, problems: [] };
  const problems: string[] = [];
  const N = REFERENCE_NAMES;
  for (const c of REFERENCE_FLAG_COLUMNS) {
    if (!FLAG.has(cells[c])) problems.push(`${c} is "${cells[c]}"; it must be 1 or 0.`);
  }
  if (cells[N.sufficiency] === "1") {
    if (cells[N.icd10] === "") problems.push(`${N.icd10} is empty but ${N.sufficiency} is 1; give the ICD-10 code.`);
    else {
      const code = canonicalCode(cells[N.icd10]);
      if (!code) problems.push(`${N.icd10} "${cells[N.icd10]}" is not a WHO ICD-10 chapter V code (F00–F99).`);
      else cells[N.icd10] = code;
    }
    const tau = cells[N.earliestSection];
    if (!/^\d+$/.test(tau) || Number(tau) < 1 || Number(tau) > numSections)
      problems.push(
        `${N.earliestSection} is "${tau}"; it must be a whole number from 1 to ${numSections} (the case's non-empty sections).`,
      );
    else cells[N.earliestSection] = String(Number(tau));
  } else if (cells[N.sufficiency] === "0") {
    if (cells[N.icd10] !== "")
      problems.push(`${N.icd10} is "${cells[N.icd10]}" but ${N.sufficiency} is 0; leave it empty.`);
    if (cells[N.earliestSection] !== "")
      problems.push(`${N.earliestSection} is "${cells[N.earliestSection]}" but ${N.sufficiency} is 0; leave it empty.`);
  }
  return { labels: problems.length ? null : cells, problems };
}
