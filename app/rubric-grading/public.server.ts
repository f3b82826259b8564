/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of rubric-grading's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/rubric-grading/ is its
 * own.
 */
export { GRADING_SET_PARENT } from "./sets.server";
