/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of annotation's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/annotation/ is its
 * own.
 */
export {
  getCaseSections,
  getStudy,
  getStudyByName,
  importCases,
  type ImportPlan,
  requireStudyByName,
  StudyNameSchema,
  type StudySummary,
} from "./studies.server";
export { studyStateCounts } from "./study-counts.server";
export { settleDueLocks } from "./annotations.server";
import { settleDueLocks } from "./annotations.server";
import { submitGraceProblem } from "./submit-grace.server";
import type { PeriodicTask } from "../platform/registry.server";

/** Locks the pairs whose grace period is over, at start and every 10 s (docs/safe-psych.md, "Second chances"). */
export const GRACE_SWEEP: PeriodicTask = {
  name: "Locking pairs after their grace period",
  problem: submitGraceProblem,
  run: (db) => void settleDueLocks(db),
  everyMs: 10_000,
};
export { ANNOTATION_NAV, SAFE_PSYCH_GUIDELINES } from "./registration.server";
