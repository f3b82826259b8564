/**
 * What other parts of Concord may use of the preparation protocol that runs anywhere (docs/architecture.md, "Public
 * modules"): its categories and pure rules. Its services are in public.server.ts.
 */
export { CATEGORIES, CATEGORY_LABELS, type Category } from "./domain/detectors";
export { DEFAULT_SCORE_TABLE } from "./domain/score-table";
