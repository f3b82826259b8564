/**
 * What other protocols may use of annotation that runs anywhere (docs/architecture.md, "Public modules"): pure
 * functions, types and constants, safe in a page, a command and another protocol's domain code. Its services are
 * in public.server.ts; everything else in app/annotation/ is its own.
 */
export { formatOf, type ImportIssue, MAX_FILE_BYTES } from "./domain/case-import";
export { CASE_STATES, type CaseProgressState, FINAL_STATES } from "./domain/case-progress";
export { MAX_SECTIONS, MIN_SECTIONS, SECTION_KINDS, SECTION_TITLES, type SectionKind } from "./domain/sections";
