/**
 * Annotation labels, dispute detection, gold labels and expert action labels (docs/safe-psych.md#annotation, docs/safe-psych.md#disagreement-and-adjudication, docs/safe-psych.md#gold-labels-and-expert-action-labels, docs/evaluation.md#stage-1-clarification-script, docs/evaluation.md#expert-labels-script).
 * A gold label has the same shape as an annotation label: it is either derived from two agreeing annotations
 * (`resolvePair`) or the adjudicator's decision.
 */
import { parseIcd10 } from "../../icd10/icd10";

/** The controlled list of missing information (docs/safe-psych.md#annotation), in display order; `other` carries free text. */
export const MISSING_INFO = [
  { key: "onset_duration", label: "Duration of symptoms / onset timeline" },
  { key: "prior_episodes", label: "Prior episodes, manic/hypomanic episodes or hospitalisations" },
  { key: "substance_use", label: "Substance use history" },
  { key: "medication_history", label: "Medication and treatment-response history" },
  { key: "psychological_tests", label: "Psychological test scores" },
  { key: "collateral_history", label: "Collateral history" },
  { key: "laboratory", label: "Laboratory findings" },
  { key: "imaging", label: "Imaging" },
  { key: "neurological_exam", label: "Neurological examination" },
  { key: "other", label: "Other" },
] as const;

export type MissingInfoKey = (typeof MISSING_INFO)[number]["key"];

export const MISSING_INFO_KEYS: readonly MissingInfoKey[] = MISSING_INFO.map((m) => m.key);

export function isMissingInfoKey(value: unknown): value is MissingInfoKey {
  return typeof value === "string" && (MISSING_INFO_KEYS as readonly string[]).includes(value);
}

export interface SufficientLabel {
  sufficiency: "sufficient";
  /** Canonical WHO ICD-10 chapter V code (`F32.1`, `F03`). */
  icd10: string;
  /** Earliest sufficient section s, compacted numbering 1..T (docs/safe-psych.md#cases-and-sections). */
  earliestSection: number;
}

export interface InsufficientLabel {
  sufficiency: "insufficient";
  /** In MISSING_INFO order, without duplicates. Non-empty for an annotation; may be empty for an imported gold label. */
  missingInfo: MissingInfoKey[];
  /** The free text of `other`: non-empty iff missingInfo includes `other`. */
  missingInfoOther: string | null;
}

/** An annotator's, the adjudicator's, or the gold label of a case. */
export type CaseLabel = SufficientLabel | InsufficientLabel;

export type DisputeReason = "sufficiency" | "diagnosis";

export interface AgreementFlags {
  /** The two annotators gave the same sufficiency. */
  sufficiency: boolean;
  /**
   * The two annotators gave the same diagnosis: both sufficient with equal diagnosis-level codes, or both
   * insufficient (neither gave a diagnosis, so there is nothing to disagree on). False when sufficiency differs.
   */
  diagnosis: boolean;
  /** Agreed on both (an "agreement case", docs/safe-psych.md#disagreement-and-adjudication); exactly the cases that are not disputed. */
  agreementCase: boolean;
}

export type PairOutcome =
  | { status: "agreed"; gold: CaseLabel; agreement: AgreementFlags }
  | { status: "disputed"; reason: DisputeReason; agreement: AgreementFlags };

/**
 * Whether two annotators' codes name the same diagnosis. docs/icd10.md#matching-a-prediction-against-a-reference defines matching against a reference code; with
 * two annotators neither is the reference, so they agree iff their diagnosis-level forms are equal: `F32.1` = `F32.1`,
 * `F31.1` = `F31.11`, but `F29` ≠ `F29.1` — a category against one of its subcategories is a difference of
 * specificity that the adjudicator settles. Symmetric; junk agrees with nothing.
 */
export function sameDiagnosis(a: string, b: string): boolean {
  const pa = parseIcd10(a);
  const pb = parseIcd10(b);
  return pa.ok && pb.ok && pa.diagnosisLevel === pb.diagnosisLevel;
}

export function agreementFlags(a: CaseLabel, b: CaseLabel): AgreementFlags {
  const sufficiency = a.sufficiency === b.sufficiency;
  let diagnosis = false;
  if (a.sufficiency === "sufficient" && b.sufficiency === "sufficient") diagnosis = sameDiagnosis(a.icd10, b.icd10);
  else if (a.sufficiency === "insufficient" && b.sufficiency === "insufficient") diagnosis = true;
  return { sufficiency, diagnosis, agreementCase: sufficiency && diagnosis };
}

/**
 * docs/safe-psych.md#disagreement-and-adjudication: the outcome once both annotations of a case are in. Symmetric in its arguments.
 * - sufficiency differs → dispute `sufficiency`;
 * - both sufficient, different diagnosis (`sameDiagnosis`) → dispute `diagnosis`;
 * - both sufficient, same diagnosis → gold code = the shared diagnosis-level form (identical to both codes whenever
 *   they are WHO codes, which have at most one character after the dot; `F31.11`/`F31.1` from an import give F31.1,
 *   the benchmark's level), earliest section = the earlier of the two (paper §2.3.1);
 * - both insufficient → missing information = union in MISSING_INFO order; distinct `other` texts joined by "; "
 *   in sorted order (so the result does not depend on which annotation came first).
 */
export function resolvePair(a: CaseLabel, b: CaseLabel): PairOutcome {
  const agreement = agreementFlags(a, b);
  if (!agreement.sufficiency) return { status: "disputed", reason: "sufficiency", agreement };
  if (a.sufficiency === "sufficient" && b.sufficiency === "sufficient") {
    if (!agreement.diagnosis) return { status: "disputed", reason: "diagnosis", agreement };
    const level = parseIcd10(a.icd10);
    const gold: SufficientLabel = {
      sufficiency: "sufficient",
      icd10: level.ok ? level.diagnosisLevel : a.icd10,
      earliestSection: Math.min(a.earliestSection, b.earliestSection),
    };
    return { status: "agreed", gold, agreement };
  }
  const [x, y] = [a, b] as [InsufficientLabel, InsufficientLabel];
  const keys = new Set([...x.missingInfo, ...y.missingInfo]);
  const texts = [
    ...new Set(
      [x, y]
        .filter((l) => l.missingInfo.includes("other"))
        .map((l) => l.missingInfoOther?.trim() ?? "")
        .filter(Boolean),
    ),
  ];
  texts.sort();
  const gold: InsufficientLabel = {
    sufficiency: "insufficient",
    missingInfo: MISSING_INFO_KEYS.filter((k) => keys.has(k)),
    missingInfoOther: texts.length > 0 ? texts.join("; ") : null,
  };
  return { status: "agreed", gold, agreement };
}

// ---------------------------------------------------------------------------------------------------------------
// Expert action labels (docs/safe-psych.md#gold-labels-and-expert-action-labels, docs/evaluation.md#expert-labels-script)

/**
 * Expert actions in the reference implementation's casing (its judge actions and its expert-label script use
 * `Clarify`/`Diagnose`/`Abstain`; docs/decisions/0001-exact-string-labels.md). One spelling everywhere: the same
 * strings are exported in `action_labels` and compared with judge actions.
 */
export type ExpertAction = "Clarify" | "Diagnose" | "Abstain";

function checkSectionCount(sectionCount: number): void {
  if (!Number.isInteger(sectionCount) || sectionCount < 1) {
    throw new RangeError(`the number of sections T must be a positive integer, got ${sectionCount}`);
  }
}

/** τ_exp: the gold earliest sufficient section, or T if the gold label is insufficient. Throws if s ∉ 1..T. */
export function expertStoppingStep(gold: CaseLabel, sectionCount: number): number {
  checkSectionCount(sectionCount);
  if (gold.sufficiency === "insufficient") return sectionCount;
  const s = gold.earliestSection;
  if (!Number.isInteger(s) || s < 1 || s > sectionCount) {
    throw new RangeError(`the earliest sufficient section must be in 1..${sectionCount}, got ${s}`);
  }
  return s;
}

/**
 * One label per section t = 1..T. Sufficient: Clarify for t < τ, Diagnose for t ≥ τ. Insufficient: Clarify for
 * t < T, Abstain at t = T.
 */
export function expertActionLabels(gold: CaseLabel, sectionCount: number): ExpertAction[] {
  const tau = expertStoppingStep(gold, sectionCount);
  return Array.from({ length: sectionCount }, (_, i): ExpertAction => {
    const t = i + 1;
    if (gold.sufficiency === "insufficient") return t < sectionCount ? "Clarify" : "Abstain";
    return t < tau ? "Clarify" : "Diagnose";
  });
}

/** docs/evaluation.md#stage-1-clarification-script: the expert stage-1 label, `Diagnose` iff the gold label is sufficient at section 1. */
export function stage1Label(gold: CaseLabel): "Clarify" | "Diagnose" {
  return gold.sufficiency === "sufficient" && gold.earliestSection === 1 ? "Diagnose" : "Clarify";
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
