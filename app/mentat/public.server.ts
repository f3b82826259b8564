/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of mentat's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/mentat/ is its
 * own.
 */
export { MENTAT_BANK_PARENT } from "./banks.server";
