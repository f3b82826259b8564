/**
 * The worker thread of the agreement statistics page and its downloads (docs/architecture.md, "Background jobs"): on
 * its own connection it builds the report, agreement per pair and over time and their charts (or one download), so
 * that the web server's thread answers other requests meanwhile. Compiled to build/workers/study-report.js by
 * `npm run build:cli`; started by `getStatsPageOffThread` and `getStudyReportFileOffThread`. Logs nothing.
 */
import { answerFromWorker } from "../platform/db-worker.server";
import { reportWork, type ReportWork } from "./study-report.server";

answerFromWorker<ReportWork, Awaited<ReturnType<typeof reportWork>>>((db, work) => reportWork(db, work));
