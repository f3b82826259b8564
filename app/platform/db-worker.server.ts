/**
 * Work on the database run on a worker thread (docs/architecture.md, "Background jobs"): the worker opens its own
 * connection to the same file (with the web server's short busy timeout), does one piece of work and answers once;
 * the request thread only waits, so it keeps answering other requests meanwhile. `answerFromWorker` is the worker's
 * side, `runDbWorker` the request thread's. An error crosses as plain fields and comes back as what it was: a
 * ServiceError (a refusal with a message), a busy database (503), or an error with its name, message and code.
 */
import { parentPort, Worker, workerData } from "node:worker_threads";
import { DatabaseBusyError, isBusy, openDatabase, WEB_BUSY_TIMEOUT_MS, type Db } from "./db.server";
import { ServiceError } from "./service-error";
import { workerScript, type WorkerName } from "./worker-script.server";

/** What every database worker is given: the database file, and the work's own fields. */
export type DbWork<W> = W & { dbPath: string };

export type DbWorkerReply<R> =
  | { ok: true; result: R }
  | {
      ok: false;
      name: string;
      /** A ServiceError: a refusal with a message for the user. */
      service: boolean;
      message: string;
      code: string | null;
      status: number | null;
      field: string | null;
    };

/** The worker's side: runs `work` on its own connection and posts the one reply. */
export function answerFromWorker<W, R>(work: (db: Db, data: DbWork<W>) => R | Promise<R>): void {
  const port = parentPort;
  if (!port) return;
  const data = workerData as DbWork<W>;
  void (async () => {
    let reply: DbWorkerReply<R>;
    try {
      const db = openDatabase(data.dbPath, { busyTimeoutMs: WEB_BUSY_TIMEOUT_MS });
      try {
        reply = { ok: true, result: await work(db, data) };
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
  })();
}

/**
 * The request thread's side: runs worker `name` on `db`'s file and returns its result, or throws its error. A
 * database in memory (some tests) has no file a worker could open: `inline` then does the same work on this thread.
 */
export async function runDbWorker<W extends object, R>(
  name: WorkerName,
  db: Db,
  work: W,
  inline: (db: Db) => R | Promise<R>,
): Promise<R> {
  const dbPath = db.$client.name;
  if (db.$client.memory || !dbPath) return inline(db);
  const script = await workerScript(name);
  const reply = await new Promise<DbWorkerReply<R>>((resolve, reject) => {
    const worker = new Worker(script, { workerData: { ...work, dbPath } satisfies DbWork<W> });
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`The ${name} worker thread stopped (exit code ${code}).`)));
  });
  if (reply.ok) return reply.result;
  if (reply.service) throw new ServiceError(reply.message, reply.field ?? undefined, reply.status ?? 400);
  if (reply.code?.startsWith("SQLITE_BUSY")) throw new DatabaseBusyError();
  throw Object.assign(new Error(reply.message), { name: reply.name, code: reply.code ?? undefined });
}
