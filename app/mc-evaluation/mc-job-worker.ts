/**
 * The worker thread of a multiple-choice job started from the browser (docs/evaluation.md, "Running from the
 * browser"): runs `runMcJob` on its own connection. Compiled to build/workers/mc-job.js by `npm run build:cli`.
 * Logs nothing.
 */
import { runJobInWorker } from "../platform/worker-jobs.server";
import { runMcJob } from "./mc-job.server";

runJobInWorker(runMcJob);
