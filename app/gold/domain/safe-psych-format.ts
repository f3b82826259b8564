/**
 * The Safe-Psych reference implementation's data formats: the `data_gt.json` and `samples.json` records as its
 * preprocessing builds them. Their serialisation (JSON as Python writes it, the released CSV `data.csv`) is in
 * safe-psych-serialize.ts and the validating `data_gt.json` reader in safe-psych-read.ts.
 *
 * A `data_gt.json` record holds the reference fields, in the reference's order and types, followed by Concord's own
 * fields (the reference scripts ignore them): `action_labels`, `presenting_symptoms_label` (left out
 * with `asReleased`), `adjudicated`, `adjudication_reason`, `missing_info`, `missing_info_other`, `annotators`.
 */
import {
  type CaseLabel,
  type MissingInfoKey,
  type ReferenceFlag,
  type ReferenceLabel,
  type ReferenceLabelRecord,
  toReferenceLabel,
  toReferenceRecord,
} from "../../labels/labels";
import { type DisputeReason, type ExpertAction, expertActionLabels, stage1Label } from "./gold";
import { SECTION_KINDS, type SectionKind } from "../../annotation/public";
import { pyStrip } from "../../python-compat/text";

/** The reference writes labels as the strings "1" and "0" (docs/formats.md#released-csv-datacsv). */
export type Flag = ReferenceFlag;

export interface SectionMetadata {
  section_name: SectionKind;
  /** 1..5, the column order. */
  original_order: number;
  present: boolean;
  /** 1..T among present sections, null if absent. */
  assigned_order: number | null;
  /** Trimmed; "" if absent. */
  content: string;
}

/** One annotator's label inside `annotators`, in the same conventions as the gold fields (app/labels/labels.ts). */
export interface AnnotatorRecord extends ReferenceLabel {
  missing_info: MissingInfoKey[];
  missing_info_other: string | null;
}

/** A record: the reference's fields (its five label columns from app/labels/labels.ts), then Concord's. */
export interface DataGtRecord extends ReferenceLabelRecord {
  id: string;
  age_group: string;
  sex: string;
  num_sections_in_input: number;
  last_section_order: number;
  sections_metadata: SectionMetadata[];
  // Concord's fields: all present or all absent (presenting_symptoms_label is also absent in `asReleased` form).
  /** T labels, expert actions in the reference's casing (gold.ts ExpertAction). */
  action_labels?: ExpertAction[];
  presenting_symptoms_label?: "Clarify" | "Diagnose";
  adjudicated?: boolean;
  adjudication_reason?: DisputeReason | null;
  missing_info?: MissingInfoKey[];
  missing_info_other?: string | null;
  /** Anonymised primary annotations; null when the labels were imported without them. */
  annotators?: { A: AnnotatorRecord; B: AnnotatorRecord } | null;
}

export interface SamplesRecord {
  sample_id: string;
  sections: { order: number; content: string }[];
}

/** What the export knows about a final case; the input of `buildDataGtRecord`. */
export interface GoldCase {
  id: string;
  /** Verbatim, "" if unknown. */
  ageGroup: string;
  sex: string;
  /** Raw section texts by kind; trimmed and compacted here exactly as the reference does. */
  sections: Partial<Record<SectionKind, string | null | undefined>>;
  gold: CaseLabel;
  /** From the two primary annotations (gold.ts agreementFlags), or as imported. */
  agreement: { sufficiency: boolean; diagnosis: boolean };
  adjudicated: boolean;
  adjudicationReason: DisputeReason | null;
  /**
   * The two primary labels under a stable, random A/B assignment chosen by the caller (the one the adjudicator saw);
   * never identities. Null for labels imported without annotations.
   */
  annotators: { A: CaseLabel; B: CaseLabel } | null;
}

export interface DataGtOptions {
  /** Leave out `presenting_symptoms_label`: the reference scripts then behave as released (docs/evaluation.md#stage-1-clarification-script). */
  asReleased?: boolean;
  /** Write the reference fields only, as the reference's own preprocessing does (no Concord fields). */
  referenceFieldsOnly?: boolean;
}

function sectionsMetadata(sections: GoldCase["sections"]): SectionMetadata[] {
  let assigned = 0;
  return SECTION_KINDS.map((kind, i) => {
    const content = pyStrip(sections[kind] ?? "");
    const present = content !== "";
    return {
      section_name: kind,
      original_order: i + 1,
      present,
      assigned_order: present ? ++assigned : null,
      content,
    };
  });
}

function annotatorRecord(label: CaseLabel): AnnotatorRecord {
  return {
    ...toReferenceLabel(label),
    missing_info: label.sufficiency === "insufficient" ? [...label.missingInfo] : [],
    missing_info_other: label.sufficiency === "insufficient" ? label.missingInfoOther : null,
  };
}

/**
 * One `data_gt.json` record. Keys are created in the reference's order, which serialisation keeps. Throws a
 * RangeError naming the case if its earliest section lies outside 1..T.
 */
export function buildDataGtRecord(c: GoldCase, options: DataGtOptions = {}): DataGtRecord {
  const metadata = sectionsMetadata(c.sections);
  const T = metadata.filter((m) => m.present).length;
  const gold = c.gold;
  const record: DataGtRecord = {
    id: c.id,
    age_group: c.ageGroup,
    sex: c.sex,
    ...toReferenceRecord(gold, c.agreement),
    num_sections_in_input: T,
    last_section_order: T,
    sections_metadata: metadata,
  };
  if (options.referenceFieldsOnly) return record;
  try {
    record.action_labels = expertActionLabels(gold, T);
  } catch (e) {
    throw new RangeError(`case ${JSON.stringify(c.id)}: ${(e as Error).message}`, { cause: e });
  }
  if (!options.asReleased) record.presenting_symptoms_label = stage1Label(gold);
  record.adjudicated = c.adjudicated;
  record.adjudication_reason = c.adjudicationReason;
  record.missing_info = gold.sufficiency === "insufficient" ? [...gold.missingInfo] : [];
  record.missing_info_other = gold.sufficiency === "insufficient" ? gold.missingInfoOther : null;
  record.annotators = c.annotators && { A: annotatorRecord(c.annotators.A), B: annotatorRecord(c.annotators.B) };
  return record;
}

/** The `samples.json` record of a case: its present sections, trimmed, numbered 1..T. */
export function buildSamplesRecord(record: DataGtRecord): SamplesRecord {
  return {
    sample_id: record.id,
    sections: record.sections_metadata
      .filter((m) => m.present)
      .map((m) => ({ order: m.assigned_order as number, content: m.content })),
  };
}
