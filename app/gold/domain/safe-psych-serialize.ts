/**
 * Writing the Safe-Psych reference formats byte for byte: `data_gt.json` and `samples.json` as its preprocessing
 * writes them (Python `json.dump(…, ensure_ascii=False, indent=2)`, no trailing newline), and the released CSV
 * `data.csv` (Python `csv.writer`: CRLF, minimal quoting).
 */
import { formatCsv } from "../../formats/csv-text";
import { SECTION_KINDS, type SectionKind } from "../../annotation/domain/sections";
import type { DataGtRecord, SamplesRecord } from "./safe-psych-format";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue | undefined };

/**
 * Python's `json.dumps(value, ensure_ascii=False, indent=2)`: items on their own lines, separated by `,` and a
 * newline, keys followed by `: `, empty arrays and objects as `[]` / `{}`, non-ASCII characters raw, no trailing
 * newline. Object keys keep insertion order; undefined members are skipped. Strings are escaped as JSON.stringify
 * does, which equals Python's escaping for every well-formed string (both escape `"`, `\`, and U+0000–U+001F with
 * the same short forms and lower-case \u00XX; a lone surrogate, which Python could not write as UTF-8, is escaped).
 * Only safe integers are supported as numbers: Python writes floats differently (`1.0`, `1e-07`).
 */
export function pythonJsonDump(value: JsonValue | object, indent = 2): string {
  const pad = (depth: number) => " ".repeat(indent * depth);
  const write = (v: unknown, depth: number): string => {
    if (v === null) return "null";
    if (typeof v === "boolean") return v ? "true" : "false";
    if (typeof v === "number") {
      if (!Number.isSafeInteger(v)) throw new TypeError(`pythonJsonDump supports integers only, got ${v}`);
      return String(v);
    }
    if (typeof v === "string") return JSON.stringify(v);
    if (Array.isArray(v)) {
      if (v.length === 0) return "[]";
      const items = v.map((item) => pad(depth + 1) + write(item === undefined ? null : item, depth + 1));
      return `[\n${items.join(",\n")}\n${pad(depth)}]`;
    }
    if (typeof v === "object") {
      const members = Object.entries(v as Record<string, unknown>).filter(([, m]) => m !== undefined);
      if (members.length === 0) return "{}";
      const items = members.map(([k, m]) => `${pad(depth + 1)}${JSON.stringify(k)}: ${write(m, depth + 1)}`);
      return `{\n${items.join(",\n")}\n${pad(depth)}}`;
    }
    throw new TypeError(`pythonJsonDump cannot write a ${typeof v}`);
  };
  return write(value, 0);
}

/** The whole `data_gt.json` file, byte-identical to the reference's output for the same records. */
export function serializeDataGt(records: readonly DataGtRecord[]): string {
  return pythonJsonDump(records as unknown as JsonValue);
}

export function serializeSamples(records: readonly SamplesRecord[]): string {
  return pythonJsonDump(records as unknown as JsonValue);
}

/** The 13 columns of the released CSV, in the reference's order (INTEROP §1). */
export const DATA_CSV_COLUMNS = [
  "id",
  "age_group",
  "sex",
  ...SECTION_KINDS,
  "diagnosis_sufficiency",
  "diagnosis_sufficiency_agreement",
  "diagnosis",
  "diagnosis_agreement",
  "earliest_sufficient_section",
] as const;

export function releasedCsvRow(record: DataGtRecord): string[] {
  const content = (kind: SectionKind) => record.sections_metadata.find((m) => m.section_name === kind)?.content ?? "";
  return [
    record.id,
    record.age_group,
    record.sex,
    ...SECTION_KINDS.map(content),
    record.diagnosis_sufficiency,
    record.diagnosis_sufficiency_agreement,
    record.diagnosis,
    record.diagnosis_agreement,
    record.earliest_sufficient_section,
  ];
}

/**
 * The released CSV (`data.csv`): header and one row per record, as Python's `csv.writer` writes them (CRLF after
 * every row, fields quoted only when they hold a comma, a quote, CR or LF), UTF-8 without BOM. The reference's
 * preprocessing turns it back into the same reference fields.
 */
export function serializeReleasedCsv(records: readonly DataGtRecord[]): string {
  return formatCsv([[...DATA_CSV_COLUMNS], ...records.map(releasedCsvRow)]);
}
