/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of screening's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/screening/ is its
 * own.
 */
export { SCREENING_STUDY_PARENT } from "./screening-import.server";
export { SCREENING_GUIDELINES, SCREENING_NAV } from "./registration.server";
export { setInclusionCriterion } from "./screening.server";
