/**
 * The case-label vocabulary (docs/safe-psych.md#annotation): what an annotator, the adjudicator and a gold label say
 * of a case, the words the forms show, and the check of a submitted label. One module for the forms, the services,
 * the imports and the exports; the stored shapes themselves are in db/vocabulary.ts, which the schema types its
 * columns with.
 */
import { parseIcd10 } from "../icd10/icd10";
import {
  MISSING_INFO_KEYS as STORED_MISSING_INFO_KEYS,
  type CaseLabel,
  type InsufficientLabel,
  type MissingInfoKey,
  type SufficientLabel,
} from "../../db/vocabulary";

export { type CaseLabel, type InsufficientLabel, type MissingInfoKey, type SufficientLabel };

/** The controlled list of missing information (docs/safe-psych.md#annotation), in display order; `other` carries free text. */
const MISSING_INFO_LABELS: Record<MissingInfoKey, string> = {
  onset_duration: "Duration of symptoms / onset timeline",
  prior_episodes: "Prior episodes, manic/hypomanic episodes or hospitalisations",
  substance_use: "Substance use history",
  medication_history: "Medication and treatment-response history",
  psychological_tests: "Psychological test scores",
  collateral_history: "Collateral history",
  laboratory: "Laboratory findings",
  imaging: "Imaging",
  neurological_exam: "Neurological examination",
  other: "Other",
};

/** The missing-information keys, in display order (the list the schema stores). */
export const MISSING_INFO_KEYS: readonly MissingInfoKey[] = STORED_MISSING_INFO_KEYS;

/** The missing-information keys with their wording, in display order. */
export const MISSING_INFO: readonly { key: MissingInfoKey; label: string }[] = MISSING_INFO_KEYS.map((key) => ({
  key,
  label: MISSING_INFO_LABELS[key],
}));

export function isMissingInfoKey(value: unknown): value is MissingInfoKey {
  return typeof value === "string" && (MISSING_INFO_KEYS as readonly string[]).includes(value);
}

// ---------------------------------------------------------------------------------------------------------------
// Validation of a submitted label (annotation form, adjudication form, imports)

export interface LabelDraft {
  sufficiency?: unknown;
  icd10?: unknown;
  earliestSection?: unknown;
  missingInfo?: unknown;
  missingInfoOther?: unknown;
}

export type LabelField = keyof LabelDraft;

export type LabelCheck = { ok: true; label: CaseLabel } | { ok: false; errors: Partial<Record<LabelField, string>> };

export interface LabelCheckOptions {
  /** T of the case (compacted). */
  sectionCount: number;
  /** Membership in the WHO table (`Icd10Index.isValidChapterVCode`); without it any chapter V syntax is accepted. */
  isValidCode?: (code: string) => boolean;
  /** Annotations need at least one missing-information label; imported gold labels may have none. Default true. */
  requireMissingInfo?: boolean;
}

/**
 * Checks a submitted label and returns it in canonical form (code canonicalised, missing information deduplicated
 * and in list order, other text trimmed), or one message per faulty field. Fields that do not apply to the chosen
 * sufficiency are ignored.
 */
/** The message for a sufficient label without a code, in the annotation and the adjudication form alike. */
export const CHOOSE_CODE = "Choose an ICD-10 code.";

export function checkCaseLabel(draft: LabelDraft, options: LabelCheckOptions): LabelCheck {
  const errors: Partial<Record<LabelField, string>> = {};
  const T = options.sectionCount;
  if (draft.sufficiency === "sufficient") {
    const p = parseIcd10(typeof draft.icd10 === "string" ? draft.icd10 : "");
    // Nothing chosen is a missing answer, not a malformed code: say what to do.
    if (!p.ok) errors.icd10 = p.reason === "empty" ? CHOOSE_CODE : p.error;
    else if (options.isValidCode && !options.isValidCode(p.code)) {
      errors.icd10 = `${p.code} is not a code of WHO ICD-10 chapter V`;
    }
    const s = draft.earliestSection;
    if (typeof s !== "number" || !Number.isInteger(s) || s < 1 || s > T) {
      errors.earliestSection = `the earliest sufficient section must be a section number from 1 to ${T}`;
    }
    if (Object.keys(errors).length > 0 || !p.ok) return { ok: false, errors };
    return { ok: true, label: { sufficiency: "sufficient", icd10: p.code, earliestSection: s as number } };
  }
  if (draft.sufficiency === "insufficient") {
    const raw = draft.missingInfo ?? [];
    const list = Array.isArray(raw) ? raw : [raw];
    const unknown = list.filter((k) => !isMissingInfoKey(k));
    const keys = new Set(list.filter(isMissingInfoKey));
    if (unknown.length > 0) {
      errors.missingInfo = `unknown missing-information labels: ${unknown.map(String).join(", ")}`;
    } else if (keys.size === 0 && options.requireMissingInfo !== false) {
      errors.missingInfo = "choose at least one kind of missing information";
    }
    const other = typeof draft.missingInfoOther === "string" ? draft.missingInfoOther.trim() : "";
    if (keys.has("other") && other === "") errors.missingInfoOther = "describe the other missing information";
    if (Object.keys(errors).length > 0) return { ok: false, errors };
    return {
      ok: true,
      label: {
        sufficiency: "insufficient",
        missingInfo: MISSING_INFO_KEYS.filter((k) => keys.has(k)),
        missingInfoOther: keys.has("other") ? other : null,
      },
    };
  }
  return { ok: false, errors: { sufficiency: "choose sufficient or insufficient" } };
}

// ---------------------------------------------------------------------------------------------------------------
// The reference format (docs/formats.md#data_gtjson, docs/formats.md#released-csv-datacsv)
//
// The one mapping between Concord's label fields and the Safe-Psych reference implementation's: its names, its
// strings ("1"/"0" flags, τ as text, "" when insufficient) and its column order. Every exporter and importer of the
// reference's files (data_gt.json, data.csv, the case import, the metrics' gold reading) goes through it; no other
// module spells the reference names in code (test/unit/label-reference-format.test.ts).

/** The reference writes its flags as the strings "1" and "0". */
export type ReferenceFlag = "1" | "0";

/** A flag in the reference's spelling. */
export function referenceFlag(yes: boolean): ReferenceFlag {
  return yes ? "1" : "0";
}

/** Concord's name of each reference label column → the reference's name. */
export const REFERENCE_NAMES = {
  sufficiency: "diagnosis_sufficiency",
  sufficiencyAgreement: "diagnosis_sufficiency_agreement",
  icd10: "diagnosis",
  diagnosisAgreement: "diagnosis_agreement",
  earliestSection: "earliest_sufficient_section",
} as const;

/** The reference's five label columns, in its column order (data.csv, data_gt.json). */
export const REFERENCE_LABEL_COLUMNS = [
  REFERENCE_NAMES.sufficiency,
  REFERENCE_NAMES.sufficiencyAgreement,
  REFERENCE_NAMES.icd10,
  REFERENCE_NAMES.diagnosisAgreement,
  REFERENCE_NAMES.earliestSection,
] as const;
export type ReferenceLabelColumn = (typeof REFERENCE_LABEL_COLUMNS)[number];

/** The reference's flag columns (the three that hold "1" or "0"). */
export const REFERENCE_FLAG_COLUMNS = [
  REFERENCE_NAMES.sufficiency,
  REFERENCE_NAMES.sufficiencyAgreement,
  REFERENCE_NAMES.diagnosisAgreement,
] as const;

/** One label in the reference's fields: an annotator's in data_gt.json, and the gold's. */
export interface ReferenceLabel {
  diagnosis_sufficiency: ReferenceFlag;
  /** The code, "" if insufficient. */
  diagnosis: string;
  /** τ as text ("2"), "" if insufficient. */
  earliest_sufficient_section: string;
}

/** Whether the two primary annotators agreed, in the reference's fields. */
export interface ReferenceAgreement {
  diagnosis_sufficiency_agreement: ReferenceFlag;
  diagnosis_agreement: ReferenceFlag;
}

/** The five label columns of a data_gt.json record or a data.csv row. */
export type ReferenceLabelRecord = ReferenceLabel & ReferenceAgreement;

/** The five label cells as an imported case file gives them (each "" when absent; checked by the case import). */
export type ReferenceLabelCells = Record<ReferenceLabelColumn, string>;

/** A label in the reference's fields. */
export function toReferenceLabel(label: CaseLabel): ReferenceLabel {
  return label.sufficiency === "sufficient"
    ? {
        diagnosis_sufficiency: "1",
        diagnosis: label.icd10,
        earliest_sufficient_section: String(label.earliestSection),
      }
    : { diagnosis_sufficiency: "0", diagnosis: "", earliest_sufficient_section: "" };
}

/**
 * The gold label and the agreement flags as the reference's five columns, the keys in its order (a record built with
 * them keeps that order when serialised).
 */
export function toReferenceRecord(
  label: CaseLabel,
  agreement: { sufficiency: boolean; diagnosis: boolean },
): ReferenceLabelRecord {
  const l = toReferenceLabel(label);
  return {
    diagnosis_sufficiency: l.diagnosis_sufficiency,
    diagnosis_sufficiency_agreement: referenceFlag(agreement.sufficiency),
    diagnosis: l.diagnosis,
    diagnosis_agreement: referenceFlag(agreement.diagnosis),
    earliest_sufficient_section: l.earliest_sufficient_section,
  };
}

/**
 * A checked reference label back in Concord's form. The reference has no missing information: an insufficient label
 * takes it from `missing` (Concord's own fields in data_gt.json), empty when there are none.
 */
export function fromReferenceLabel(
  fields: ReferenceLabel,
  missing: { missingInfo: MissingInfoKey[]; missingInfoOther: string | null } = {
    missingInfo: [],
    missingInfoOther: null,
  },
): CaseLabel {
  return fields.diagnosis_sufficiency === "1"
    ? {
        sufficiency: "sufficient",
        icd10: fields.diagnosis,
        earliestSection: Number(fields.earliest_sufficient_section),
      }
    : {
        sufficiency: "insufficient",
        missingInfo: [...missing.missingInfo],
        missingInfoOther: missing.missingInfoOther,
      };
}

/** The agreement flags back in Concord's form. */
export function fromReferenceAgreement(fields: ReferenceAgreement): { sufficiency: boolean; diagnosis: boolean } {
  return { sufficiency: fields.diagnosis_sufficiency_agreement === "1", diagnosis: fields.diagnosis_agreement === "1" };
}

/** The five label cells of a record, in column order (a data.csv row's last five cells). */
export function referenceLabelCells(record: ReferenceLabelCells): string[] {
  return REFERENCE_LABEL_COLUMNS.map((c) => record[c]);
}

/**
 * A case's imported reference labels as the database stores them (the reference_labels table of db/schema.ts: the
 * reference's strings under Concord's column names, null when the case has none).
 */
export interface StoredReferenceLabels {
  diagnosisSufficiency: string | null;
  diagnosisSufficiencyAgreement: string | null;
  diagnosis: string | null;
  diagnosisAgreement: string | null;
  earliestSufficientSection: string | null;
}

/** Stored reference labels as the reference's cells ("" for null). */
export function storedReferenceCells(row: StoredReferenceLabels): ReferenceLabelCells {
  return {
    diagnosis_sufficiency: row.diagnosisSufficiency ?? "",
    diagnosis_sufficiency_agreement: row.diagnosisSufficiencyAgreement ?? "",
    diagnosis: row.diagnosis ?? "",
    diagnosis_agreement: row.diagnosisAgreement ?? "",
    earliest_sufficient_section: row.earliestSufficientSection ?? "",
  };
}

/** The reference's cells as stored (all null for a case without reference labels). */
export function storedReferenceColumns(cells: ReferenceLabelCells | null): StoredReferenceLabels {
  return {
    diagnosisSufficiency: cells?.diagnosis_sufficiency ?? null,
    diagnosisSufficiencyAgreement: cells?.diagnosis_sufficiency_agreement ?? null,
    diagnosis: cells?.diagnosis ?? null,
    diagnosisAgreement: cells?.diagnosis_agreement ?? null,
    earliestSufficientSection: cells?.earliest_sufficient_section ?? null,
  };
}
