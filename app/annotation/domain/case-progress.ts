/** Where a case stands in a study (admin progress page, export refusals). */
export const CASE_STATES = ["unassigned", "in_annotation", "disputed", "agreed", "adjudicated", "reference"] as const;
export type CaseProgressState = (typeof CASE_STATES)[number];
/** States whose case has a gold label and can be exported. */
export const FINAL_STATES: readonly CaseProgressState[] = ["agreed", "adjudicated", "reference"];
