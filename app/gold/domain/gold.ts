/**
 * Dispute detection, gold labels and expert action labels (docs/safe-psych.md#annotation, docs/safe-psych.md#disagreement-and-adjudication, docs/safe-psych.md#gold-labels-and-expert-action-labels, docs/evaluation.md#stage-1-clarification-script, docs/evaluation.md#expert-labels-script).
 * A gold label has the same shape as an annotation label (`CaseLabel`, app/labels/labels.ts): it is either derived from two agreeing annotations
 * (`resolvePair`) or the adjudicator's decision.
 */
import { parseIcd10 } from "../../icd10/icd10";
import { MISSING_INFO_KEYS, type CaseLabel, type InsufficientLabel, type SufficientLabel } from "../../labels/labels";

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
