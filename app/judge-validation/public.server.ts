/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of judge-validation's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/judge-validation/ is its
 * own.
 */
export { JUDGE_SET_PARENT } from "./judge-responses.server";
export { JUDGE_SET_GUIDELINES, JUDGE_VALIDATION_NAV } from "./registration.server";
