/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of mentat's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/mentat/ is its
 * own.
 */
import type { PanelKind } from "../expert-panel/cli";
import { requireBankByName } from "./banks.server";
import { addBankRaters, listBankPanel, removeBankRater } from "./panel.server";
export { MENTAT_BANK_PARENT } from "./banks.server";

/** A bank's panel, for the `expert-panel` command (app/expert-panel/cli.ts). */
export const BANK_PANEL: PanelKind = {
  requireByName: requireBankByName,
  list: listBankPanel,
  add: (db, bankId, raterIds) => addBankRaters(db, { bankId, raterIds, actorId: null }),
  remove: (db, bankId, raterId) => removeBankRater(db, { bankId, raterId, actorId: null }),
};
export { MENTAT_BANK_GUIDELINES } from "./registration.server";
