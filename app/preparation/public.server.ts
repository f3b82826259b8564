/**
 * The preparation protocol's services, for the pages and other parts of Concord (docs/architecture.md, "Public
 * modules"). Who may call which: docs/security.md, "Source text".
 */
export {
  changeReviewers,
  getProject,
  importPreparationNotes,
  isNamedReviewer,
  listProjectNotes,
  listProjects,
  projectAgreement,
} from "./projects.server";
import type { NavEntry } from "../platform/registry.server";

/** The admin's link of the menu (docs/architecture.md, "Registration"). */
export const PREPARATION_NAV: readonly NavEntry[] = [{ to: "/admin/preparation", label: "Preparation", role: "admin" }];

export { getReviewNote, listReviewerNotes, MinimisationValuesSchema, saveMinimisationReview } from "./review.server";
export {
  DEFAULT_TRANSLATION_CONCURRENCY,
  PAPER_MAX_TOKENS,
  projectTranslationView,
  startTranslationJob,
  TRANSLATION_JOB_KIND,
} from "./translation.server";
export { computeProjectQuality, importCometScores, projectQualityState } from "./quality.server";
export { preparationReport, preparationReportCsv, preparationReportSvg } from "./report.server";
export {
  CorrectionValuesSchema,
  getCorrection,
  listCorrectionQueue,
  resolveCorrectionKey,
  saveCorrection,
} from "./correction.server";
export { countDifferingNotes, differingNotesWindow, getSettlementView, settleNote } from "./settlement.server";
export { missingLines, notesCsv, notesJsonl, readPlan, releaseToStudy } from "./release.server";
