/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of adjudication's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/adjudication/ is its
 * own.
 */
export { ADJUDICATION_TIME } from "./adjudication.server";
