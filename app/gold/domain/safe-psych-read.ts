/** Reading a `data_gt.json` back (import-gold): every record validated, each error naming its line and field. */
import {
  type CaseLabel,
  fromReferenceAgreement,
  fromReferenceLabel,
  isMissingInfoKey,
  MISSING_INFO_KEYS,
  type MissingInfoKey,
  REFERENCE_LABEL_COLUMNS,
  REFERENCE_NAMES,
  type ReferenceLabel,
} from "../../labels/labels";
import { expertActionLabels, stage1Label } from "./gold";
import { parseIcd10 } from "../../icd10/icd10";
import { MAX_SECTIONS, MIN_SECTIONS, SECTION_KINDS } from "../../annotation/public";
import { pyStrip } from "../../python-compat/text";
import { jsonElements } from "./json-with-lines";
import {
  type AnnotatorRecord,
  buildDataGtRecord,
  type DataGtOptions,
  type DataGtRecord,
  type Flag,
  type GoldCase,
} from "./safe-psych-format";

export interface DataGtError {
  /** 1-based line in the file. */
  line: number;
  /** 1-based position of the record in the array; null for errors of the file as a whole. */
  element: number | null;
  /** The offending field, if any. */
  field: string | null;
  message: string;
}

export type DataGtParse = { ok: true; records: DataGtRecord[] } | { ok: false; errors: DataGtError[] };

export interface DataGtReadOptions {
  /** Membership in the WHO table (`Icd10Index.isValidChapterVCode`); without it any chapter V code is accepted. */
  isValidCode?: (code: string) => boolean;
  /** Stop after this many errors (default 100). */
  maxErrors?: number;
}

/**
 * Parses and validates a `data_gt.json` text: the reference fields with the reference's types (docs/formats.md#data_gtjson) and
 * consistent values (flags "1"/"0", code and τ iff sufficient, τ in 1..T, T = number of present sections in 3..5,
 * five sections in column order, trimmed contents, unique ids), and Concord's fields, all or none, consistent with
 * the gold label. `original_row` is refused (the scripts would read the labels from it). A leading BOM is accepted.
 * Every error carries its line and element number; nothing is returned unless the whole file is valid.
 */
export function parseDataGtJson(text: string, options: DataGtReadOptions = {}): DataGtParse {
  const read = dataGtRecords([text], options);
  const records: DataGtRecord[] = [];
  for (const { record } of read.records) records.push(record);
  const errors = read.errors();
  return errors.length > 0 ? { ok: false, errors } : { ok: true, records };
}

/**
 * The records of a `data_gt.json` that arrives in pieces, as they are read (docs/reliability.md, "Memory bounded by
 * the longest line"), each with the line it starts on, validated as `parseDataGtJson` validates the whole text; a
 * leading BOM is dropped. `errors()`, once the records have been read to their end, gives `parseDataGtJson`'s errors
 * (an invalid JSON text or one that is not an array: only that); the file is valid when there are none. What is held
 * between records: the ids seen, for duplicates.
 */
export function dataGtRecords(
  pieces: Iterable<string>,
  options: DataGtReadOptions = {},
): { records: Iterable<{ record: DataGtRecord; line: number }>; errors(): DataGtError[] } {
  const maxErrors = options.maxErrors ?? 100;
  const errors: DataGtError[] = [];
  let done = false;
  function* withoutBom(): Generator<string> {
    let first = true;
    for (const piece of pieces) {
      yield first && piece.charCodeAt(0) === 0xfeff ? piece.slice(1) : piece;
      first = false;
    }
  }
  function* records(): Generator<{ record: DataGtRecord; line: number }> {
    const json = jsonElements(withoutBom());
    const seen = new Map<string, number>();
    let index = 0;
    for (const { value, line } of json.elements) {
      const element = ++index;
      // Past the limit the rest is still read, for an error of the JSON text, which would be the only one.
      if (errors.length >= maxErrors) continue;
      const report = (field: string | null, message: string) => {
        if (errors.length < maxErrors) errors.push({ line, element, field, message });
      };
      const record = checkRecord(value, report, options);
      if (record === null) continue;
      const first = seen.get(record.id);
      if (first !== undefined) report("id", `duplicate id ${JSON.stringify(record.id)} (first at element ${first})`);
      else seen.set(record.id, element);
      yield { record, line };
    }
    const end = json.end();
    const fileError = (line: number, message: string) =>
      errors.splice(0, errors.length, { line, element: null, field: null, message });
    if (!end.ok) fileError(end.line, end.message);
    else if (!end.array) fileError(1, "data_gt.json must be one JSON array");
    done = true;
  }
  return {
    records: { [Symbol.iterator]: records },
    errors() {
      if (!done) throw new Error("dataGtRecords: errors() asked before the records were all read");
      return errors;
    },
  };
}

/** Formats a reader error for the command line: `data_gt.json:42: element 3, diagnosis: …`. */
export function formatDataGtError(error: DataGtError, fileName = "data_gt.json"): string {
  const where = [error.element !== null ? `element ${error.element}` : null, error.field].filter(Boolean).join(", ");
  return `${fileName}:${error.line}: ${where ? `${where}: ` : ""}${error.message}`;
}

const REFERENCE_KEYS = [
  "id",
  "age_group",
  "sex",
  ...REFERENCE_LABEL_COLUMNS,
  "num_sections_in_input",
  "last_section_order",
  "sections_metadata",
] as const;
const CONCORD_KEYS = [
  "action_labels",
  "presenting_symptoms_label",
  "adjudicated",
  "adjudication_reason",
  "missing_info",
  "missing_info_other",
  "annotators",
] as const;
const METADATA_KEYS = ["section_name", "original_order", "present", "assigned_order", "content"] as const;
const ANNOTATOR_KEYS = [
  REFERENCE_NAMES.sufficiency,
  REFERENCE_NAMES.icd10,
  REFERENCE_NAMES.earliestSection,
  "missing_info",
  "missing_info_other",
] as const;

type Report = (field: string | null, message: string) => void;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isFlag = (v: unknown): v is Flag => v === "1" || v === "0";
const show = (v: unknown) => (v === undefined ? "nothing" : JSON.stringify(v));

function checkKeys(obj: Record<string, unknown>, allowed: readonly string[], where: string, report: Report): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) report(where ? `${where}.${key}` : key, "unknown field");
  }
}

/** Label fields shared by the gold record and each annotator: sufficiency, code, τ. Returns whether they hold. */
function checkLabelFields(
  obj: Record<string, unknown>,
  prefix: string,
  T: number | null,
  report: Report,
  options: DataGtReadOptions,
): boolean {
  let errors = 0;
  const r: Report = (f, m) => {
    errors++;
    report(f, m);
  };
  const N = REFERENCE_NAMES;
  const sufficiency = obj[N.sufficiency];
  if (!isFlag(sufficiency)) {
    r(`${prefix}${N.sufficiency}`, `must be "1" or "0", got ${show(sufficiency)}`);
    return false;
  }
  const diagnosis = obj[N.icd10];
  const tau = obj[N.earliestSection];
  if (typeof diagnosis !== "string") r(`${prefix}${N.icd10}`, `must be a string, got ${show(diagnosis)}`);
  if (typeof tau !== "string") r(`${prefix}${N.earliestSection}`, `must be a string, got ${show(tau)}`);
  if (typeof diagnosis !== "string" || typeof tau !== "string") return false;
  if (sufficiency === "0") {
    if (diagnosis !== "") r(`${prefix}${N.icd10}`, `must be "" when insufficient, got ${show(diagnosis)}`);
    if (tau !== "") r(`${prefix}${N.earliestSection}`, `must be "" when insufficient, got ${show(tau)}`);
    return errors === 0;
  }
  const p = parseIcd10(diagnosis);
  if (!p.ok) r(`${prefix}${N.icd10}`, p.error);
  else if (p.code !== diagnosis) r(`${prefix}${N.icd10}`, `must be written ${p.code}, got ${show(diagnosis)}`);
  else if (options.isValidCode && !options.isValidCode(diagnosis)) {
    r(`${prefix}${N.icd10}`, `${diagnosis} is not a code of WHO ICD-10 chapter V`);
  }
  if (!/^[1-9][0-9]*$/.test(tau)) {
    r(`${prefix}${N.earliestSection}`, `must be a section number like "2" when sufficient, got ${show(tau)}`);
  } else if (T !== null && Number(tau) > T) {
    r(`${prefix}${N.earliestSection}`, `must be at most the number of sections (${T}), got ${show(tau)}`);
  }
  return errors === 0;
}

function checkMissingInfo(
  list: unknown,
  other: unknown,
  sufficient: boolean,
  prefix: string,
  report: Report,
): list is MissingInfoKey[] {
  const field = `${prefix}missing_info`;
  if (!Array.isArray(list)) {
    report(field, `must be an array, got ${show(list)}`);
    return false;
  }
  let ok = true;
  const bad = list.filter((k) => !isMissingInfoKey(k));
  if (bad.length > 0) {
    report(field, `unknown labels ${bad.map(show).join(", ")} (known: ${MISSING_INFO_KEYS.join(", ")})`);
    ok = false;
  } else {
    const canonical = MISSING_INFO_KEYS.filter((k) => list.includes(k));
    if (canonical.length !== list.length || canonical.some((k, i) => k !== list[i])) {
      report(field, `must list each label once, in the controlled list's order`);
      ok = false;
    }
    if (sufficient && list.length > 0) {
      report(field, "must be empty when sufficient");
      ok = false;
    }
  }
  const otherField = `${prefix}missing_info_other`;
  const hasOther = list.includes("other");
  if (hasOther && (typeof other !== "string" || other.trim() === "")) {
    report(otherField, `must be a non-empty string when missing_info includes "other", got ${show(other)}`);
    ok = false;
  } else if (!hasOther && other !== null) {
    report(otherField, `must be null unless missing_info includes "other", got ${show(other)}`);
    ok = false;
  }
  return ok;
}

/** The label of a record or annotator whose label fields were checked (`checkLabelFields`). */
function labelOf(obj: Record<string, unknown>, missingInfo: MissingInfoKey[], other: string | null): CaseLabel {
  return fromReferenceLabel(obj as unknown as ReferenceLabel, { missingInfo, missingInfoOther: other });
}

function checkRecord(value: unknown, report: Report, options: DataGtReadOptions): DataGtRecord | null {
  if (!isObject(value)) {
    report(null, `must be a JSON object, got ${Array.isArray(value) ? "an array" : show(value)}`);
    return null;
  }
  let errors = 0;
  const r: Report = (f, m) => {
    errors++;
    report(f, m);
  };
  if ("original_row" in value) r("original_row", "is not supported: put the label fields at the top level");
  checkKeys(value, [...REFERENCE_KEYS, ...CONCORD_KEYS, "original_row"], "", r);
  for (const key of REFERENCE_KEYS) if (!(key in value)) r(key, "is missing");
  if (errors > 0) return null;

  for (const key of ["id", "age_group", "sex"] as const) {
    const v = value[key];
    if (typeof v !== "string") r(key, `must be a string, got ${show(v)}`);
    else if (pyStrip(v) !== v) r(key, `must be trimmed, got ${show(v)}`);
  }
  if (value.id === "") r("id", "must not be empty");

  // Sections: five objects in column order; T = present count.
  let T: number | null = null;
  const metadata = value.sections_metadata;
  if (!Array.isArray(metadata) || metadata.length !== SECTION_KINDS.length) {
    r("sections_metadata", `must be an array of ${SECTION_KINDS.length} objects, one per section kind`);
  } else {
    let assigned = 0;
    let sectionErrors = 0;
    const rs: Report = (f, m) => {
      sectionErrors++;
      r(f, m);
    };
    metadata.forEach((m: unknown, i) => {
      const where = `sections_metadata[${i}]`;
      if (!isObject(m)) return rs(where, `must be an object, got ${show(m)}`);
      checkKeys(m, METADATA_KEYS, where, rs);
      if (m.section_name !== SECTION_KINDS[i]) rs(`${where}.section_name`, `must be ${show(SECTION_KINDS[i])}`);
      if (m.original_order !== i + 1) rs(`${where}.original_order`, `must be ${i + 1}, got ${show(m.original_order)}`);
      if (typeof m.content !== "string") return rs(`${where}.content`, `must be a string, got ${show(m.content)}`);
      if (pyStrip(m.content) !== m.content) rs(`${where}.content`, "must be trimmed");
      const present = m.content !== "";
      if (m.present !== present) {
        rs(`${where}.present`, `must be ${present} (the content is ${present ? "not " : ""}empty)`);
      }
      const expected = present ? ++assigned : null;
      if (m.assigned_order !== expected) {
        rs(`${where}.assigned_order`, `must be ${show(expected)}, got ${show(m.assigned_order)}`);
      }
    });
    if (sectionErrors === 0) {
      T = assigned;
      if (T < MIN_SECTIONS || T > MAX_SECTIONS) {
        r("sections_metadata", `a case must have ${MIN_SECTIONS} to ${MAX_SECTIONS} non-empty sections, got ${T}`);
      }
      for (const key of ["num_sections_in_input", "last_section_order"] as const) {
        if (value[key] !== T) r(key, `must be ${T} (the number of present sections), got ${show(value[key])}`);
      }
    }
  }
  for (const key of [REFERENCE_NAMES.sufficiencyAgreement, REFERENCE_NAMES.diagnosisAgreement]) {
    if (!isFlag(value[key])) r(key, `must be "1" or "0", got ${show(value[key])}`);
  }
  const labelOk = checkLabelFields(value, "", T, r, options);

  // Concord's fields: all or none (presenting_symptoms_label may be absent: the `asReleased` form).
  const hasConcord = CONCORD_KEYS.some((k) => k in value);
  const missing = CONCORD_KEYS.filter((k) => k !== "presenting_symptoms_label" && !(k in value));
  if (hasConcord && missing.length > 0) {
    r(null, `Concord's fields must all be present or all absent; missing: ${missing.join(", ")}`);
  }
  if (T === null || (hasConcord && missing.length > 0)) return null;
  const record = value as unknown as DataGtRecord;
  if (!hasConcord) return errors > 0 ? null : canonicalRecord(record);

  const sufficient = value[REFERENCE_NAMES.sufficiency] === "1";
  const infoOk = checkMissingInfo(value.missing_info, value.missing_info_other, sufficient, "", r);
  if (labelOk && infoOk) {
    const gold = labelOf(value, value.missing_info as MissingInfoKey[], value.missing_info_other as string | null);
    const labels = expertActionLabels(gold, T);
    if (JSON.stringify(value.action_labels) !== JSON.stringify(labels)) {
      r("action_labels", `must be ${JSON.stringify(labels)} for this gold label, got ${show(value.action_labels)}`);
    }
    if ("presenting_symptoms_label" in value && value.presenting_symptoms_label !== stage1Label(gold)) {
      r(
        "presenting_symptoms_label",
        `must be ${show(stage1Label(gold))}, got ${show(value.presenting_symptoms_label)}`,
      );
    }
  }
  if (typeof value.adjudicated !== "boolean") r("adjudicated", `must be true or false, got ${show(value.adjudicated)}`);
  const reason = value.adjudication_reason;
  if (reason !== null && reason !== "sufficiency" && reason !== "diagnosis") {
    r("adjudication_reason", `must be "sufficiency", "diagnosis" or null, got ${show(reason)}`);
  } else if (reason !== null && value.adjudicated !== true) {
    r("adjudication_reason", "must be null when the case was not adjudicated");
  }
  const annotators = value.annotators;
  if (annotators !== null) {
    if (!isObject(annotators)) r("annotators", `must be an object {A, B} or null, got ${show(annotators)}`);
    else {
      checkKeys(annotators, ["A", "B"], "annotators", r);
      for (const who of ["A", "B"] as const) {
        const a = annotators[who];
        const prefix = `annotators.${who}.`;
        if (!isObject(a)) {
          r(`annotators.${who}`, `must be an object, got ${show(a)}`);
          continue;
        }
        checkKeys(a, ANNOTATOR_KEYS, `annotators.${who}`, r);
        const missingKeys = ANNOTATOR_KEYS.filter((k) => !(k in a));
        if (missingKeys.length > 0) {
          r(`annotators.${who}`, `is missing ${missingKeys.join(", ")}`);
          continue;
        }
        if (checkLabelFields(a, prefix, T, r, options)) {
          checkMissingInfo(a.missing_info, a.missing_info_other, a[REFERENCE_NAMES.sufficiency] === "1", prefix, r);
        }
      }
    }
  }
  return errors > 0 ? null : canonicalRecord(record);
}

/** A valid record rebuilt with the keys in the reference's order, whatever their order in the file. */
function canonicalRecord(record: DataGtRecord): DataGtRecord {
  const { goldCase, options } = readGoldCase(record);
  return buildDataGtRecord(goldCase, options);
}

/**
 * The Concord view of a valid record, and the options that write it back unchanged:
 * `buildDataGtRecord(goldCase, options)` deep-equals the record. For a reference-only record (no Concord fields)
 * `adjudicated: false`, `adjudicationReason: null` and `annotators: null` are placeholders, the gold missing
 * information is empty, and `options.referenceFieldsOnly` is true.
 */
export function readGoldCase(record: DataGtRecord): { goldCase: GoldCase; options: DataGtOptions } {
  const sections: GoldCase["sections"] = {};
  for (const m of record.sections_metadata) sections[m.section_name] = m.content;
  const gold = labelOf(
    record as unknown as Record<string, unknown>,
    record.missing_info ?? [],
    record.missing_info_other ?? null,
  );
  const annotator = (a: AnnotatorRecord) =>
    labelOf(a as unknown as Record<string, unknown>, a.missing_info, a.missing_info_other);
  const goldCase: GoldCase = {
    id: record.id,
    ageGroup: record.age_group,
    sex: record.sex,
    sections,
    gold,
    agreement: fromReferenceAgreement(record),
    adjudicated: record.adjudicated ?? false,
    adjudicationReason: record.adjudication_reason ?? null,
    annotators: record.annotators ? { A: annotator(record.annotators.A), B: annotator(record.annotators.B) } : null,
  };
  const options: DataGtOptions =
    record.action_labels === undefined
      ? { referenceFieldsOnly: true }
      : { asReleased: record.presenting_symptoms_label === undefined };
  return { goldCase, options };
}
