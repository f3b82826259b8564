/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of case-review's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/case-review/ is its
 * own.
 */
import type { PanelKind } from "../expert-panel/cli";
import { addReviewRaters, listReviewPanel, removeReviewRater, requireReviewSetByName } from "./case-review.server";
export { REVIEW_SET_PARENT } from "./case-review.server";

/** A review set's panel, for the `expert-panel` command (app/expert-panel/cli.ts). */
export const REVIEW_SET_PANEL: PanelKind = {
  requireByName: requireReviewSetByName,
  list: listReviewPanel,
  add: (db, setId, raterIds) => addReviewRaters(db, { setId, raterIds, actorId: null }),
  remove: (db, setId, raterId) => removeReviewRater(db, { setId, raterId, actorId: null }),
};
export { REVIEW_SET_GUIDELINES } from "./registration.server";
