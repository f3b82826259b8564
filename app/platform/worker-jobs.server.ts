/**
 * Resumable jobs on a worker thread (docs/architecture.md, "Background jobs"; docs/evaluation.md, "Running from the
 * browser"): the job's row is written by the request thread, the work runs on a worker thread with its own connection
 * to the database, which writes the job's progress (done of total and the counts of `JobProgress`) and its end. The
 * job's work is kept as it goes (responses, verdicts, run folders), so a cancelled, failed or interrupted job is
 * resumed by a new job with the same parameters (`resumeWorkerJob`), which skips everything finished.
 *
 * The request thread's side: `startWorkerJob`, `cancelWorkerJob`, `resumeWorkerJob`, `workerJobEnded`. The worker's
 * side: `runJobInWorker`, with `jobProgressSink` turning the model-call progress into job progress. Starts, cancels
 * and resumptions are audit events written in the same transaction as the job's row.
 */
import { parentPort, Worker, workerData } from "node:worker_threads";
import { setMaxListeners } from "node:events";
import { recordEvent } from "../audit/audit.server";
import { CLI_BUSY_TIMEOUT_MS, openDatabase, type Db } from "./db.server";
import { createJob, endJob, getJob, markJobRunning, reportJobProgress, type JobView } from "./jobs.server";
import { ServiceError } from "./service-error";
import { workerScript, type WorkerName } from "./worker-script.server";
import type { ProgressSink, ProgressState } from "../model-calls/progress";

/** A running job's counts, stored in the job's `detail`. */
export interface JobProgress {
  /** What the job does now, e.g. "responses", "verdicts", "items". */
  step: string;
  done: number;
  total: number;
  /** Calls answered since the job started (every step). */
  calls: number;
  retries: number;
  /** Calls recorded as failures. */
  failures: number;
  /** `done` when this step started: what earlier jobs had finished. */
  stepStartDone: number;
  /** When this step started (ms since the epoch). */
  stepStartedAt: number;
}

export type JobOutcome =
  | { status: "done"; result: Record<string, unknown> }
  | { status: "stopped"; message: string; result?: Record<string, unknown> };

export interface JobContext {
  signal: AbortSignal;
  progress(p: Omit<JobProgress, "stepStartDone" | "stepStartedAt"> & { stepStartDone?: number }): void;
}

interface WorkerJobData {
  dbPath: string;
  jobId: number;
}

export const CANCELLED_MESSAGE = "Cancelled. Everything it finished is kept; resume it to continue.";

const running = new Map<number, { worker: Worker | null; cancelled: boolean; ended: Promise<void> }>();

function activeStatus(job: JobView): boolean {
  return job.status === "queued" || job.status === "running";
}

/**
 * Starts the worker of a job whose row exists; its end (or its death) ends the job. The job is in `running` from
 * the call on, so `workerJobEnded` and `cancelWorkerJob` find it while the worker's script is still being found.
 */
function launch(db: Db, jobId: number, name: WorkerName): void {
  const fail = (message: string) => {
    try {
      endJob(db, jobId, { status: "failed", error: message });
    } catch {
      // The database refused even this: the next server start marks the job stopped.
    }
  };
  const entry: { worker: Worker | null; cancelled: boolean; ended: Promise<void> } = {
    worker: null,
    cancelled: false,
    ended: Promise.resolve(),
  };
  entry.ended = (async () => {
    try {
      if (db.$client.memory || !db.$client.name)
        return fail("A database in memory cannot run jobs on a worker thread.");
      let script: string;
      try {
        script = await workerScript(name);
      } catch (e) {
        return fail(`The job's worker could not start: ${(e as Error).message}`);
      }
      if (entry.cancelled) return endJob(db, jobId, { status: "cancelled", error: CANCELLED_MESSAGE });
      const worker = new Worker(script, { workerData: { dbPath: db.$client.name, jobId } satisfies WorkerJobData });
      entry.worker = worker;
      await new Promise<void>((resolve) => {
        worker.once("error", (e) =>
          fail(`The job stopped on an error: ${e.message}. Everything it finished is kept; resume it to continue.`),
        );
        worker.once("exit", (code) => {
          if (db.$client.open) {
            const job = getJob(db, jobId);
            if (job && activeStatus(job))
              fail(
                `The job's worker stopped (exit code ${code}). Everything it finished is kept; resume it to continue.`,
              );
          }
          resolve();
        });
      });
    } finally {
      running.delete(jobId);
    }
  })();
  running.set(jobId, entry);
}

/**
 * Starts a job on a worker thread and returns its id at once. Refused (409) while another job of the same subject
 * is queued or running. `params` must hold no secret: they are stored and shown (providers are named, never keyed).
 */
export function startWorkerJob(
  db: Db,
  input: {
    kind: string;
    subject: string;
    params: Record<string, unknown>;
    worker: WorkerName;
    actorId: string | null;
    now?: number;
  },
): number {
  const now = input.now ?? Date.now();
  const params = { ...input.params, worker: input.worker, resumable: true };
  const jobId = db.transaction(
    (tx) => {
      const id = createJob(tx, {
        kind: input.kind,
        subject: input.subject,
        params,
        total: 0,
        actorId: input.actorId,
        now,
      });
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "job",
        entityId: id,
        action: "start",
        changes: { kind: input.kind, subject: input.subject, ...input.params },
        at: now,
      });
      return id;
    },
    { behavior: "immediate" },
  );
  launch(db, jobId, input.worker);
  return jobId;
}

/**
 * Resumes a job that ended without finishing (cancelled, failed, stopped by a restart): a new job with the same
 * kind, subject and parameters, which skips what is finished. Returns the new job's id.
 */
export function resumeWorkerJob(db: Db, input: { jobId: number; actorId: string | null; now?: number }): number {
  const now = input.now ?? Date.now();
  const old = getJob(db, input.jobId);
  if (!old || old.params.resumable !== true) throw new ServiceError("No such job.", "job", 404);
  if (old.status === "done") throw new ServiceError("This job finished: there is nothing to resume.", "job", 409);
  if (activeStatus(old)) throw new ServiceError("This job is still running.", "job", 409);
  const worker = old.params.worker as WorkerName;
  const jobId = db.transaction(
    (tx) => {
      const id = createJob(tx, {
        kind: old.kind,
        subject: old.subject,
        params: { ...old.params, resumedFrom: old.id },
        total: old.progressTotal,
        actorId: input.actorId,
        now,
      });
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "job",
        entityId: id,
        action: "resume",
        changes: { kind: old.kind, resumedFrom: old.id },
        at: now,
      });
      return id;
    },
    { behavior: "immediate" },
  );
  launch(db, jobId, worker);
  return jobId;
}

/**
 * Cancels a queued or running job: its worker stops asking for new calls and aborts those in flight, keeps what
 * finished and ends the job as cancelled. A job no worker of this process runs is marked cancelled at once.
 * Refused (409) when the job is not running.
 */
export async function cancelWorkerJob(db: Db, input: { jobId: number; actorId: string | null }): Promise<void> {
  const job = getJob(db, input.jobId);
  if (!job || job.params.resumable !== true) throw new ServiceError("No such job.", "job", 404);
  if (!activeStatus(job)) throw new ServiceError("This job is not running.", "job", 409);
  db.transaction(
    (tx) => {
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "job",
        entityId: job.id,
        action: "cancel",
        changes: { kind: job.kind },
      });
      if (!running.has(job.id)) endJob(tx, job.id, { status: "cancelled", error: CANCELLED_MESSAGE });
    },
    { behavior: "immediate" },
  );
  const r = running.get(job.id);
  if (!r) return;
  r.cancelled = true;
  r.worker?.postMessage({ type: "cancel" });
  await r.ended;
}

/** Resolves when the job's worker has ended (at once when none runs); for tests and shutdown. */
export function workerJobEnded(jobId: number): Promise<void> {
  return running.get(jobId)?.ended ?? Promise.resolve();
}

/** Stops a job's worker thread as a crash or a kill would, without ending its row (tests of restarts). */
export async function killWorkerJob(jobId: number): Promise<void> {
  const r = running.get(jobId);
  if (!r?.worker) return;
  r.worker.removeAllListeners("exit");
  r.worker.removeAllListeners("error");
  await r.worker.terminate();
  running.delete(jobId);
}

// --- the worker's side -----------------------------------------------------------------------------------------

const PROGRESS_EVERY_MS = 500;

/**
 * The worker thread's side: opens its own connection, marks the job running, runs `work` with the job's params,
 * writes its progress at most twice a second (and the last), and ends the job: done with its result, cancelled
 * when the admin cancelled it, failed with the reason when it stopped or threw. Logs nothing.
 */
export function runJobInWorker(work: (db: Db, job: JobView, ctx: JobContext) => Promise<JobOutcome>): void {
  const port = parentPort;
  if (!port) return;
  const { dbPath, jobId } = workerData as WorkerJobData;
  // The command line's busy timeout, not the web server's: a job's writes wait out a page's save on this thread,
  // never on the request thread, and a verdict or response must not be lost to a moment's lock.
  const db = openDatabase(dbPath, { busyTimeoutMs: CLI_BUSY_TIMEOUT_MS });
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  port.on("message", (m: { type?: string }) => {
    if (m?.type === "cancel") controller.abort();
  });
  let last: JobProgress | null = null;
  let lastWrite = 0;
  let stepKey = "";
  const write = (p: JobProgress) => reportJobProgress(db, jobId, p.done, p.total, { ...p });
  const ctx: JobContext = {
    signal: controller.signal,
    progress(p) {
      const now = Date.now();
      const key = `${p.step}`;
      if (key !== stepKey || !last) {
        stepKey = key;
        last = { ...p, stepStartDone: p.stepStartDone ?? p.done, stepStartedAt: now };
      } else last = { ...last, ...p, stepStartDone: last.stepStartDone, stepStartedAt: last.stepStartedAt };
      if (now - lastWrite >= PROGRESS_EVERY_MS || p.done === p.total) {
        lastWrite = now;
        write(last);
      }
    },
  };
  const finish = (outcome: Parameters<typeof endJob>[2]) => {
    if (last) write(last);
    try {
      endJob(db, jobId, outcome);
    } finally {
      db.$client.close();
      port.close();
    }
  };
  void (async () => {
    const job = getJob(db, jobId);
    if (!job) return finish({ status: "failed", error: "The job's row is gone." });
    markJobRunning(db, jobId);
    try {
      const outcome = await work(db, job, ctx);
      if (controller.signal.aborted) finish({ status: "cancelled", error: CANCELLED_MESSAGE });
      else if (outcome.status === "done") finish({ status: "done", result: outcome.result });
      else
        finish({
          status: "failed",
          error: `Stopped: ${outcome.message} Everything it finished is kept; resume it to continue.`,
        });
    } catch (e) {
      if (controller.signal.aborted) finish({ status: "cancelled", error: CANCELLED_MESSAGE });
      else finish({ status: "failed", error: e instanceof Error ? e.message : String(e) });
    }
  })();
}

/** A model-call progress sink that reports to the job as `step` (what `finished` counts). */
export function jobProgressSink(ctx: JobContext, step: string, earlier = { calls: 0, retries: 0, failures: 0 }) {
  const report = (s: ProgressState) =>
    ctx.progress({
      step,
      done: s.finished,
      total: s.total,
      calls: earlier.calls + s.calls,
      retries: earlier.retries + s.retries,
      failures: earlier.failures + s.failures,
    });
  return { start: report, update: report, finish: report } satisfies ProgressSink;
}
