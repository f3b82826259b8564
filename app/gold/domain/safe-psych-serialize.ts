/**
 * Writing the Safe-Psych reference formats byte for byte: `data_gt.json` and `samples.json` as its preprocessing
 * writes them (Python `json.dump(…, ensure_ascii=False, indent=2)`, no trailing newline), and the released CSV
 * `data.csv` (Python `csv.writer`: CRLF, minimal quoting).
 */
import { formatReferenceCsv } from "../../formats/csv-text";
import { jsonDumpsIndent2 } from "../../python-compat/json";
import { SECTION_KINDS, type SectionKind } from "../../annotation/public";
import { REFERENCE_LABEL_COLUMNS, referenceLabelCells } from "../../labels/labels";
import type { DataGtRecord, SamplesRecord } from "./safe-psych-format";

/** The whole `data_gt.json` file, byte-identical to the reference's output for the same records. */
export function serializeDataGt(records: readonly DataGtRecord[]): string {
  return jsonDumpsIndent2(records);
}

export function serializeSamples(records: readonly SamplesRecord[]): string {
  return jsonDumpsIndent2(records);
}

/** The 13 columns of the released CSV, in the reference's order (docs/formats.md#released-csv-datacsv). */
export const DATA_CSV_COLUMNS = ["id", "age_group", "sex", ...SECTION_KINDS, ...REFERENCE_LABEL_COLUMNS] as const;

export function releasedCsvRow(record: DataGtRecord): string[] {
  const content = (kind: SectionKind) => record.sections_metadata.find((m) => m.section_name === kind)?.content ?? "";
  return [record.id, record.age_group, record.sex, ...SECTION_KINDS.map(content), ...referenceLabelCells(record)];
}

/**
 * The released CSV (`data.csv`): header and one row per record, as Python's `csv.writer` writes them (CRLF after
 * every row, fields quoted only when they hold a comma, a quote, CR or LF), UTF-8 without BOM. The reference's
 * preprocessing turns it back into the same reference fields.
 */
export function serializeReleasedCsv(records: readonly DataGtRecord[]): string {
  return formatReferenceCsv("data.csv", [[...DATA_CSV_COLUMNS], ...records.map(releasedCsvRow)]);
}
