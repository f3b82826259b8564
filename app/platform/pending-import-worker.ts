/**
 * The worker thread of a case import confirmed on the admin page (docs/reliability.md, "Bulk imports"): it opens its
 * own connection to the same database and runs the same confirmation as the one-thread path, so the web server's
 * thread keeps answering other requests while the import writes its chunks. Compiled to
 * build/workers/pending-import.js by `npm run build:cli`; started by `confirmPendingImportOffThread`. Logs nothing.
 */
import { parentPort, workerData } from "node:worker_threads";
import { isBusy, openDatabase, WEB_BUSY_TIMEOUT_MS } from "./db.server";
import { confirmPendingImport, type PendingImportReply, type PendingImportWork } from "./pending-imports.server";
import { ServiceError } from "./service-error";

const port = parentPort;
if (port) {
  const work = workerData as PendingImportWork;
  let reply: PendingImportReply;
  try {
    const db = openDatabase(work.dbPath, { busyTimeoutMs: WEB_BUSY_TIMEOUT_MS });
    try {
      reply = { ok: true, result: confirmPendingImport(db, { id: work.id, userId: work.userId }) };
    } finally {
      db.$client.close();
    }
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e));
    const code = (error as { code?: unknown }).code;
    reply = {
      ok: false,
      name: error.name,
      service: error instanceof ServiceError,
      message: error.message,
      code: isBusy(error) ? "SQLITE_BUSY" : typeof code === "string" ? code : null,
      status: error instanceof ServiceError ? error.status : null,
      field: error instanceof ServiceError ? (error.field ?? null) : null,
    };
  }
  port.postMessage(reply);
}
