/**
 * The worker thread of a gold export downloaded from the progress page (docs/architecture.md, "Background jobs"): on
 * its own connection it runs the export (`streamGold`, one read transaction) and writes the one file asked for into
 * the private file the request thread made for it, so that a big study's export never holds up this server's other
 * requests. Compiled to build/workers/gold-export.js by `npm run build:cli`; started by `goldFileOffThread`. Logs
 * nothing.
 */
import { answerFromWorker } from "../platform/db-worker.server";
import { writeGoldFile, type GoldFileWork } from "./gold-export.server";

answerFromWorker<GoldFileWork, ReturnType<typeof writeGoldFile>>((db, work) => writeGoldFile(db, work));
