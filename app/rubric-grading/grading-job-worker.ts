/**
 * The worker thread of a grading job started from the browser (docs/evaluation.md, "Running from the browser"):
 * runs `runGradingJob` on its own connection. Compiled to build/workers/grading-job.js by `npm run build:cli`.
 * Logs nothing.
 */
import { runJobInWorker } from "../platform/worker-jobs.server";
import { runGradingJob } from "./grading-job.server";

runJobInWorker(runGradingJob);
