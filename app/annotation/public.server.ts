/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of annotation's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/annotation/ is its
 * own.
 */
export {
  getCaseSections,
  getStudy,
  importCases,
  type ImportPlan,
  requireStudyByName,
  StudyNameSchema,
  type StudySummary,
} from "./studies.server";
export { studyStateCounts } from "./study-counts.server";
