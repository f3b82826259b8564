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

/** The minimisation categories of a preparation project (docs/preparation.md, "Detectors"). */
export const PREP_CATEGORIES = [
  "date_time",
  "place",
  "name",
  "family",
  "quote",
  "physical",
  "surgery_injury",
  "age",
  "test_score",
] as const;
export type PrepCategory = (typeof PREP_CATEGORIES)[number];

/** One section of a source note (docs/preparation.md, "Projects"): its compacted number, kind and text. */
export interface PrepSection {
  order: number;
  kind: string;
  content: string;
}

/**
 * A detector's proposal on a source note: the span of section `section` (0-based index in the note's sections,
 * UTF-16 offsets) and what it becomes ("" removes it). `id` is stable for the note: `s<section>-<start>-<end>`.
 */
export interface PrepProposal {
  id: string;
  section: number;
  start: number;
  end: number;
  category: PrepCategory;
  replacement: string;
}

/** A reviewer's decision on one proposal: kept as proposed, edited (`text` in its place) or rejected (text kept). */
export interface PrepDecision {
  action: "accept" | "edit" | "reject";
  /** The edited replacement ("" removes the text); only with `edit`. */
  text?: string;
}

/** Text a reviewer marked that the detectors missed: a span of section `section` and what it becomes. */
export interface PrepMissedSpan {
  section: number;
  start: number;
  end: number;
  category: PrepCategory;
  replacement: string;
}

/** A project's detector settings (docs/preparation.md, "Detectors"); the score table is the default when null. */
export interface PrepDetectorSettings {
  places: string[];
  names: string[];
  institutions: string[];
  namePatterns: string[];
  scoreTable: { test: string; aliases: string[]; ranges: { from: number; to: number }[] }[] | null;
  /** The quality check's thresholds and test names (docs/preparation.md, "Quality"); the defaults when absent. */
  quality?: PrepQualitySettings;
}

/**
 * A project's quality settings (docs/preparation.md, "Quality"): a note whose BLEU, chrF or COMET is below its
 * threshold (null: not checked) goes to correction, and so does one whose back-translation loses a test name or score
 * of `tests` (matched as written).
 */
export interface PrepQualitySettings {
  minBleu: number | null;
  minChrf: number | null;
  minComet: number | null;
  tests: string[];
}
