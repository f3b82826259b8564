/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of study-report's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/study-report/ is its
 * own.
 */
export { getRaterAgreement } from "./study-report.server";
