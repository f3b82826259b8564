/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of evaluation's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/evaluation/ is its
 * own.
 */
import type { NavEntry } from "../platform/registry.server";

export { type EndpointRecord, redactUrl } from "./run-folder";
export { callOnce } from "./runner";
export { EVALUATION_IMPORT_PARENT } from "./evaluations.server";
/**
 * The import of run folders under an evaluation (docs/evaluation.md, "Runs in the app"), for the jobs that run an
 * evaluation from the browser and import its runs when it ends.
 * @public
 */
export { importRunFolders, type RunImportInput, type RunImportResult } from "./evaluations.server";

/** The admin's link of the menu (docs/architecture.md, "Registration"). */
export const EVALUATIONS_NAV: readonly NavEntry[] = [{ to: "/admin/evaluations", label: "Evaluations", role: "admin" }];

/**
 * The reviewers' link of the menu: the psychiatrists' queue of model steps (docs/evaluation.md, "Clinician review of
 * model steps"), for annotators and adjudicators; a user with both roles sees it once (`navEntriesFor`).
 */
export const MODEL_REVIEW_NAV: readonly NavEntry[] = [
  {
    to: "/model-review",
    label: "Model steps",
    role: "annotator",
    listOf: { segments: ["model-review"], label: "My model steps" },
  },
  {
    to: "/model-review",
    label: "Model steps",
    role: "adjudicator",
    listOf: { segments: ["model-review"], label: "My model steps" },
  },
];
