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
