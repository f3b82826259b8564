/**
 * Background jobs (docs/architecture.md, "Background jobs"): long work started from a page runs off the request
 * thread, and its row in `jobs` says how far it is. At most one job is queued or running per subject (a bank, a
 * study): a second start is refused while one runs — checked in the same transaction as the insert, and by a partial
 * unique index. A server restart ends every job it finds running as failed, with a message; it can be started again.
 */
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { jobs, type JobStatus } from "../../db/schema";
import type { Db, DbOrTx } from "./db.server";
import { ServiceError } from "./service-error";

export interface JobView {
  id: number;
  kind: string;
  subject: string;
  status: JobStatus;
  params: Record<string, unknown>;
  progressDone: number;
  progressTotal: number;
  /** A running job's counts beyond done / total (calls, retries, failures, …), or null. */
  detail: Record<string, unknown> | null;
  result: Record<string, unknown> | null;
  error: string | null;
  createdBy: string | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

const ACTIVE: JobStatus[] = ["queued", "running"];

export const INTERRUPTED_MESSAGE =
  "Interrupted: the server stopped while this job ran. Nothing of it was saved; start it again.";

/**
 * The message of an interrupted job whose work is kept as it goes (params `resumable: true`, e.g. the evaluation
 * jobs: docs/evaluation.md, "Running from the browser").
 */
export const STOPPED_RESUMABLE_MESSAGE =
  "Stopped: the server restarted while this job ran. Everything it finished is kept; resume it to continue.";

/** Inserts a queued job, refusing (409) while another job of the same subject is queued or running. */
export function createJob(
  tx: DbOrTx,
  input: {
    kind: string;
    subject: string;
    params: Record<string, unknown>;
    total: number;
    actorId: string | null;
    now: number;
  },
): number {
  const active = tx
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.subject, input.subject), inArray(jobs.status, ACTIVE)))
    .get();
  if (active)
    throw new ServiceError(
      `A job is already running here (job ${active.id}): wait for it to finish or cancel it before starting another.`,
      "job",
      409,
    );
  return tx
    .insert(jobs)
    .values({
      kind: input.kind,
      subject: input.subject,
      status: "queued",
      params: input.params,
      progressTotal: input.total,
      createdBy: input.actorId,
      createdAt: input.now,
    })
    .returning({ id: jobs.id })
    .get().id;
}

export function markJobRunning(db: Db, id: number, now = Date.now()): void {
  db.update(jobs)
    .set({ status: "running", startedAt: now })
    .where(and(eq(jobs.id, id), eq(jobs.status, "queued")))
    .run();
}

/** Progress of a running job; a busy database skips this report (the next one catches up), never the job. */
export function reportJobProgress(
  db: Db,
  id: number,
  done: number,
  total: number,
  detail?: Record<string, unknown>,
): void {
  try {
    db.update(jobs)
      .set(detail ? { progressDone: done, progressTotal: total, detail } : { progressDone: done, progressTotal: total })
      .where(and(eq(jobs.id, id), eq(jobs.status, "running")))
      .run();
  } catch {
    // SQLITE_BUSY under the web server's short busy timeout: progress is advisory.
  }
}

/** Ends an active job: done with its result, or failed / cancelled with a message. */
export function endJob(
  tx: DbOrTx,
  id: number,
  outcome: { status: "done"; result: Record<string, unknown> } | { status: "failed" | "cancelled"; error: string },
  now = Date.now(),
): void {
  tx.update(jobs)
    .set(
      outcome.status === "done"
        ? { status: "done", result: outcome.result, finishedAt: now }
        : { status: outcome.status, error: outcome.error, finishedAt: now },
    )
    .where(and(eq(jobs.id, id), inArray(jobs.status, ACTIVE)))
    .run();
}

/** Replaces a finished job's result (a later step on its output, e.g. importing a Safe-Psych job's run folders). */
export function setJobResult(tx: DbOrTx, id: number, result: Record<string, unknown>): void {
  tx.update(jobs)
    .set({ result })
    .where(and(eq(jobs.id, id), eq(jobs.status, "done")))
    .run();
}

export function getJob(db: DbOrTx, id: number): JobView | null {
  return (db.select().from(jobs).where(eq(jobs.id, id)).get() as JobView | undefined) ?? null;
}

/** The newest job of a subject (running, or the last one that ended), or null. */
export function latestJob(db: DbOrTx, subject: string, kind: string): JobView | null {
  return (
    (db
      .select()
      .from(jobs)
      .where(and(eq(jobs.subject, subject), eq(jobs.kind, kind)))
      .orderBy(desc(jobs.id))
      .get() as JobView | undefined) ?? null
  );
}

/**
 * At server start: no job of an earlier process can still be running, so every queued or running one is marked
 * failed, with STOPPED_RESUMABLE_MESSAGE when its params say it is resumable (its work is kept as it goes), else
 * with INTERRUPTED_MESSAGE. Returns how many.
 */
export function interruptStaleJobs(db: Db, now = Date.now()): number {
  const resumable = sql`coalesce(json_extract(${jobs.params}, '$.resumable'), 0) = 1`;
  return db.transaction(
    (tx) =>
      tx
        .update(jobs)
        .set({ status: "failed", error: STOPPED_RESUMABLE_MESSAGE, finishedAt: now })
        .where(and(inArray(jobs.status, ACTIVE), resumable))
        .run().changes +
      tx
        .update(jobs)
        .set({ status: "failed", error: INTERRUPTED_MESSAGE, finishedAt: now })
        .where(inArray(jobs.status, ACTIVE))
        .run().changes,
  );
}

/** The newest jobs of these kinds, newest first (the evaluation jobs' list page). */
export function listJobsOfKinds(db: DbOrTx, kinds: readonly string[], limit = 50): JobView[] {
  return db
    .select()
    .from(jobs)
    .where(inArray(jobs.kind, [...kinds]))
    .orderBy(desc(jobs.id))
    .limit(limit)
    .all() as JobView[];
}

/** The id of the job that resumed this one (params `resumedFrom`), or null. */
export function resumingJobId(db: DbOrTx, id: number): number | null {
  return (
    db
      .select({ id: jobs.id })
      .from(jobs)
      .where(sql`json_extract(${jobs.params}, '$.resumedFrom') = ${id}`)
      .orderBy(desc(jobs.id))
      .get()?.id ?? null
  );
}
