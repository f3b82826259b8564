import type { LoaderFunctionArgs } from "@remix-run/node";
import { requireById, requireRole } from "~/accounts/guard.server";
import { getDb } from "~/platform/db.server";
import { getJob } from "~/platform/jobs.server";
import { jobProgressView } from "~/platform/job-progress";
import { EVAL_JOB_KINDS } from "~/protocols.server";

/**
 * A job's status and progress, polled by its page once a second while it runs (docs/evaluation.md, "Running from
 * the browser"). Admin only; counts and the status message only, no parameters or results.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const job = requireById(
    params.jobId,
    (id) => {
      const j = getJob(db, id);
      return j && EVAL_JOB_KINDS.includes(j.kind) ? j : null;
    },
    "No such job.",
  );
  return Response.json(
    { id: job.id, status: job.status, error: job.error, progress: jobProgressView(job, Date.now()) },
    { headers: { "Cache-Control": "no-store" } },
  );
}
