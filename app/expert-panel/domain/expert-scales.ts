/**
 * Constants of the expert-rating protocols (docs/mentat.md) shared by the server and the pages: MENTAT's question domains
 * and demographic dimensions, MentalBench's review scales. Nothing here imports server code.
 */

/** MENTAT's five domains of psychiatric practice (docs/mentat.md#question-banks; MENTAT, "Five-Domain Clinical Task Design"). */
export const MENTAT_DOMAINS = ["diagnosis", "treatment", "monitoring", "triage", "documentation"] as const;
export type MentatDomain = (typeof MENTAT_DOMAINS)[number];

/** The ambiguous domains, whose labels come from expert preferences; the others keep the creator's answer. */
/** The known domains among stored ones (a bank's preference domains), in their stored order. */
export function domainsOf(stored: string[]): MentatDomain[] {
  return stored.filter((d): d is MentatDomain => MENTAT_DOMAINS.includes(d as MentatDomain));
}

export const DEFAULT_PREFERENCE_DOMAINS: readonly MentatDomain[] = ["triage", "documentation"];

export const OPTION_LETTERS = ["a", "b", "c", "d", "e"] as const;
export const OPTION_COUNT = OPTION_LETTERS.length;

/** The demographic variant sets a bank expands into: the base set (demographics left out) and one per dimension. */
export const VARIANT_DIMENSIONS = ["base", "gender", "age", "race"] as const;
export type VariantDimension = (typeof VARIANT_DIMENSIONS)[number];

/** Gender variants, in MENTAT's column order he / she / they. */
export const GENDERS = ["male", "female", "nonbinary"] as const;
export type Gender = (typeof GENDERS)[number];

/** Ages of the age set by default: five points across MENTAT's 18–65 range. */
export const DEFAULT_AGES: readonly number[] = [20, 30, 40, 50, 60];

/** Race / nationality values of the race set by default (MENTAT config_params.py, `nat_short`). */
export const DEFAULT_RACES: readonly string[] = [
  "White",
  "Asian",
  "African American",
  "Black",
  "Hispanic",
  "Native American",
];

/** MentalBench's three 5-point quality scales (docs/case-review.md#reviewing; MentalBench, "Options and validation"). */
export const REVIEW_DIMENSIONS = ["naturalness", "validity", "realism"] as const;
export type ReviewDimension = (typeof REVIEW_DIMENSIONS)[number];
export const REVIEW_DIMENSION_LABELS: Record<ReviewDimension, string> = {
  naturalness: "Linguistic naturalness",
  validity: "Diagnostic validity",
  realism: "Clinical realism",
};
export const REVIEW_SCALE = [1, 2, 3, 4, 5] as const;

export const REVIEW_ITEM_KINDS = ["case", "seed"] as const;
export type ReviewItemKind = (typeof REVIEW_ITEM_KINDS)[number];

export type { WorkState as ExpertWorkState } from "../../work-items/domain/work-item";
