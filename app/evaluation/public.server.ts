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
