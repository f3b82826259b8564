/**
 * What the pages and other parts of Concord may use of the preparation protocol that runs anywhere
 * (docs/architecture.md, "Public modules"): its settings' readers, and the reviewer's workspace definition.
 * Its services are in public.server.ts.
 */
export { parseScoreTable } from "./domain/score-table";
export { DEFAULT_SETTINGS } from "./domain/review";
export { parseListFile } from "./domain/settings-files";
export { minimisationWorkspace } from "./ui/minimisation-workspace";
export { QualityCard, type QualityAnswer } from "./ui/quality-card";
export { correctionWorkspace } from "./ui/correction-workspace";
export { SettlementChoiceSchema, wholeReviewChoice } from "./domain/settlement";
export { CATEGORY_LABELS } from "./domain/detectors";
