/**
 * Work on the database run on a worker thread (docs/architecture.md, "Background jobs"): the worker opens its own
 * connection to the same file (with the web server's short busy timeout) and answers each piece of work it is given;
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

/** Runs `work` on `db` and gives its reply: the result, or its error as plain fields. */
async function replyOf<W, R>(
  work: (db: Db, data: DbWork<W>) => R | Promise<R>,
  db: () => Db,
  data: DbWork<W>,
): Promise<DbWorkerReply<R>> {
  try {
    return { ok: true, result: await work(db(), data) };
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e));
    const code = (error as { code?: unknown }).code;
    return {
      ok: false,
      name: error.name,
      service: error instanceof ServiceError,
      message: error.message,
      code: isBusy(error) ? "SQLITE_BUSY" : typeof code === "string" ? code : null,
      status: error instanceof ServiceError ? error.status : null,
      field: error instanceof ServiceError ? (error.field ?? null) : null,
    };
  }
}

/**
 * The worker's side. Started for one piece of work (`workerData` holds it), it runs it on its own connection, posts
 * the one reply and closes the connection. Started to stay (`workerData.persistent`), it answers each message
 * `{ id, work }` with `{ id, reply }`, one at a time, keeping its connection to the last database file asked for.
 */
export function answerFromWorker<W, R>(work: (db: Db, data: DbWork<W>) => R | Promise<R>): void {
  const port = parentPort;
  if (!port) return;
  const open = (path: string) => openDatabase(path, { busyTimeoutMs: WEB_BUSY_TIMEOUT_MS });
  if (!(workerData as { persistent?: boolean } | null)?.persistent) {
    const data = workerData as DbWork<W>;
    let db: Db | null = null;
    void replyOf(work, () => (db = open(data.dbPath)), data).then((reply) => {
      db?.$client.close();
      port.postMessage(reply);
    });
    return;
  }
  let db: Db | null = null;
  let chain = Promise.resolve();
  port.on("message", ({ id, work: data }: { id: number; work: DbWork<W> }) => {
    chain = chain.then(async () => {
      const connection = () => {
        if (db?.$client.name !== data.dbPath) {
          db?.$client.close();
          db = open(data.dbPath);
        }
        return db;
      };
      const reply = await replyOf(work, connection, data);
      try {
        port.postMessage({ id, reply });
      } catch (e) {
        // A result that cannot cross threads: the request fails, the worker goes on answering.
        port.postMessage({ id, reply: await replyOf(() => Promise.reject(e), connection, data) });
      }
    });
  });
}

/** A worker that stays, with the requests it has not answered yet. */
interface Warm {
  worker: Worker;
  waiting: Map<number, { resolve: (reply: unknown) => void; reject: (e: Error) => void }>;
  next: number;
}

const warm = new Map<WorkerName, Warm>();

/** The worker `name` that stays (started on first use; started again after it fails). Never keeps the process up. */
function warmWorker(name: WorkerName, script: string): Warm {
  const known = warm.get(name);
  if (known) return known;
  const w: Warm = { worker: new Worker(script, { workerData: { persistent: true } }), waiting: new Map(), next: 0 };
  w.worker.unref();
  const fail = (e: Error) => {
    if (warm.get(name) === w) warm.delete(name);
    for (const { reject } of w.waiting.values()) reject(e);
    w.waiting.clear();
  };
  w.worker.on("message", ({ id, reply }: { id: number; reply: unknown }) => {
    const waiting = w.waiting.get(id);
    w.waiting.delete(id);
    waiting?.resolve(reply);
  });
  w.worker.on("error", fail);
  w.worker.on("exit", (code) => fail(new Error(`The ${name} worker thread stopped (exit code ${code}).`)));
  warm.set(name, w);
  return w;
}

/**
 * The request thread's side: runs worker `name` on `db`'s file and returns its result, or throws its error. By
 * default the worker stays for the next request (its modules loaded, its connection open: a worker started per
 * request spent most of a small study's statistics page loading the chart libraries); `oneOff` starts one for this
 * work alone, which runs beside any other (an import). A database in memory (some tests) has no file a worker could
 * open: `inline` then does the same work on this thread.
 */
export async function runDbWorker<W extends object, R>(
  name: WorkerName,
  db: Db,
  work: W,
  inline: (db: Db) => R | Promise<R>,
  options: { oneOff?: boolean } = {},
): Promise<R> {
  const dbPath = db.$client.name;
  if (db.$client.memory || !dbPath) return inline(db);
  const script = await workerScript(name);
  const data = { ...work, dbPath } satisfies DbWork<W>;
  const reply = await new Promise<DbWorkerReply<R>>((resolve, reject) => {
    if (!options.oneOff) {
      const w = warmWorker(name, script);
      const id = w.next++;
      w.waiting.set(id, { resolve: resolve as (reply: unknown) => void, reject });
      w.worker.postMessage({ id, work: data });
      return;
    }
    const worker = new Worker(script, { workerData: data });
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`The ${name} worker thread stopped (exit code ${code}).`)));
  });
  if (reply.ok) return reply.result;
  if (reply.service) throw new ServiceError(reply.message, reply.field ?? undefined, reply.status ?? 400);
  if (reply.code?.startsWith("SQLITE_BUSY")) throw new DatabaseBusyError();
  throw Object.assign(new Error(reply.message), { name: reply.name, code: reply.code ?? undefined });
}
