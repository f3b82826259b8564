/**
 * The worker thread of a translation job started from a preparation project's page (docs/preparation.md,
 * "Translation"): runs `runTranslationJob` on its own connection. Compiled to build/workers/prep-translate.js by
 * `npm run build:cli`. Logs nothing.
 */
import { runJobInWorker } from "../platform/worker-jobs.server";
import { runTranslationJob } from "./translation.server";

runJobInWorker(runTranslationJob);
