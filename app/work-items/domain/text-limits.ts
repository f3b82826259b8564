/**
 * The length limits of the workspaces' free-text fields, shared by the value schemas on the server and the counters
 * and checks on the page, so both refuse exactly the same text (docs/architecture.md, "The work-item engine"). A text
 * over its limit is refused with an error at its field and kept on the page: it is never cut or discarded.
 */

export const TEXT_LIMITS = {
  /** Free notes of an annotation, a response rating or a screening vote. */
  notes: 10_000,
  /** "Other" missing information of an annotation or an adjudication. */
  missingOther: 2_000,
  /** A case reviewer's reason and comment, an option rater's comment. */
  comment: 5_000,
  /** A rater's ICD-10 codes as typed. */
  icdCodes: 500,
  /** A rater's diagnosis names as typed. */
  diagnosisNames: 2_000,
  /** A screening vote's category. */
  category: 100,
} as const;

/** The counter appears once a text reaches this share of its limit. */
export const COUNTER_FROM = 0.8;

/** The one wording of a text over its limit: "Notes have at most 10,000 characters (123 too many)." */
export function tooLongMessage(what: string, max: number, length?: number): string {
  const over = length !== undefined && length > max ? ` (${(length - max).toLocaleString("en")} too many)` : "";
  return `${what} ${what.endsWith("s") ? "have" : "has"} at most ${max.toLocaleString("en")} characters${over}.`;
}
