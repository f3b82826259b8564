/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of case-review's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/case-review/ is its
 * own.
 */
export { REVIEW_SET_PARENT } from "./case-review.server";
