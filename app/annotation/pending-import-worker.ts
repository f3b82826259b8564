/**
 * The worker thread of a case import confirmed on the admin page (docs/reliability.md, "Bulk imports"): on its own
 * connection to the same database it runs the same confirmation as the one-thread path, so the web server's thread
 * keeps answering other requests while the import writes its chunks. Compiled to build/workers/pending-import.js by
 * `npm run build:cli`; started by `confirmPendingImportOffThread`. Logs nothing.
 */
import { answerFromWorker } from "../platform/db-worker.server";
import { confirmPendingImport, type PendingImportWork } from "./pending-imports.server";

answerFromWorker<PendingImportWork, ReturnType<typeof confirmPendingImport>>((db, work) =>
  confirmPendingImport(db, { id: work.id, userId: work.userId }),
);
