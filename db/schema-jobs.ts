/**
 * Long work started from a page, run off the request thread (docs/architecture.md, "Background jobs"): one row per
 * job, its progress and its outcome. The result itself is stored where it always was (e.g. mentat_fits); the job
 * keeps a pointer to it.
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const JOB_STATUSES = ["queued", "running", "done", "failed", "cancelled"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const jobs = sqliteTable(
  "jobs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** What the job does, e.g. "mentat-fit". */
    kind: text("kind").notNull(),
    /** What it works on, e.g. "mentat_bank:3": at most one queued or running job per subject (the index below). */
    subject: text("subject").notNull(),
    status: text("status", { enum: JOB_STATUSES }).notNull(),
    /** The job's input, as JSON (e.g. the fit options). */
    params: text("params", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    progressDone: integer("progress_done").notNull().default(0),
    progressTotal: integer("progress_total").notNull().default(0),
    /**
     * JSON of a running job's counts beyond done / total (e.g. calls answered, retries, failed calls, the unit
     * counted), written with each progress report; null for jobs that report none.
     */
    detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>(),
    /** JSON of what the job produced (e.g. { fitId }), once done. */
    result: text("result", { mode: "json" }).$type<Record<string, unknown>>(),
    /** Why it failed or was cancelled, in words for the page. */
    error: text("error"),
    createdBy: text("created_by"),
    createdAt: integer("created_at").notNull(),
    startedAt: integer("started_at"),
    finishedAt: integer("finished_at"),
  },
  (t) => [
    uniqueIndex("jobs_one_active_per_subject")
      .on(t.subject)
      .where(sql`status in ('queued', 'running')`),
    index("jobs_subject").on(t.subject, t.id),
  ],
);
