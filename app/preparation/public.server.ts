/**
 * The preparation protocol's services, for the pages and other parts of Concord (docs/architecture.md, "Public
 * modules"). Who may call which: docs/security.md, "Source text".
 */
export {
  changeReviewers,
  getProject,
  importPreparationNotes,
  listProjectNotes,
  listProjects,
  projectAgreement,
} from "./projects.server";
export { getReviewNote, listReviewerNotes, MinimisationValuesSchema, saveMinimisationReview } from "./review.server";
