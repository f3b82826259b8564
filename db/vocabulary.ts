/**
 * What the schema's columns hold, for the schema and the app alike (docs/architecture.md, "Layers"): the value sets
 * of the enumerated columns and the shapes of the JSON columns. db/ imports nothing from app/, so these live here and
 * the app re-exports them (app/accounts/roles.ts, app/labels/labels.ts, …); this file imports nothing.
 */

/** Roles (docs/architecture.md#roles-and-blinding). */
export const ROLES = ["admin", "annotator", "adjudicator", "rater"] as const;
export type Role = (typeof ROLES)[number];

/** Adjudication modes (docs/safe-psych.md#disagreement-and-adjudication). */
export const ADJUDICATION_MODES = ["two_phase", "reveal_only", "independent_only"] as const;
export type AdjudicationMode = (typeof ADJUDICATION_MODES)[number];

/** Where a case stands in a study (admin progress page, export refusals). */
export const CASE_STATES = ["unassigned", "in_annotation", "disputed", "agreed", "adjudicated", "reference"] as const;
export type CaseProgressState = (typeof CASE_STATES)[number];

/** Every kind of study that has guidelines (docs/guidelines.md). */
export const GUIDELINE_SCOPES = ["safe_psych", "judge_set", "screening", "mentat_bank", "review_set"] as const;
export type GuidelineScope = (typeof GUIDELINE_SCOPES)[number];

/** The controlled list of missing information (docs/safe-psych.md#annotation), in display order; `other` carries free text. */
export const MISSING_INFO_KEYS = [
  "onset_duration",
  "prior_episodes",
  "substance_use",
  "medication_history",
  "psychological_tests",
  "collateral_history",
  "laboratory",
  "imaging",
  "neurological_exam",
  "other",
] as const;
export type MissingInfoKey = (typeof MISSING_INFO_KEYS)[number];

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

/** An annotator's, the adjudicator's, or the gold label of a case (docs/safe-psych.md#annotation). */
export type CaseLabel = SufficientLabel | InsufficientLabel;

/** A MENTAT question's text(s) with placeholders: male/female/nonbinary, or neutral (docs/mentat.md#question-banks). */
export interface QuestionTexts {
  male?: string;
  female?: string;
  nonbinary?: string;
  neutral?: string;
}
