/**
 * The worker thread of a Safe-Psych run started from the browser (docs/evaluation.md, "Running from the browser"):
 * runs `runSafePsychJob` on its own connection. Compiled to build/workers/safe-psych-job.js by `npm run build:cli`.
 * Logs nothing.
 */
import { runJobInWorker } from "../platform/worker-jobs.server";
import { runSafePsychJob } from "./run-job.server";

runJobInWorker(runSafePsychJob);
