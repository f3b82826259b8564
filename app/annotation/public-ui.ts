/**
 * What other protocols' pages may use of annotation's page parts (docs/architecture.md, "Public modules"): the case
 * label's fields, which the adjudicator's workspace shares with the annotator's, and the titles of a note's sections.
 */
export { LabelFields, useLabelFieldFocus } from "./ui/label-fields";
export { SECTION_TITLES, type SectionKind } from "./domain/sections";
