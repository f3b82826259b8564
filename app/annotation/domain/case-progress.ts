import type { CaseProgressState } from "../../../db/vocabulary";

/** Where a case stands in a study (admin progress page, export refusals): the list the schema stores. */
export { CASE_STATES, type CaseProgressState } from "../../../db/vocabulary";
/** States whose case has a gold label and can be exported. */
export const FINAL_STATES: readonly CaseProgressState[] = ["agreed", "adjudicated", "reference"];
