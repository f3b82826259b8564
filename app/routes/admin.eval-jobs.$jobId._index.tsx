import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, redirect, useActionData, useFetcher, useLoaderData, useRevalidator } from "@remix-run/react";
import { useEffect } from "react";
import { z } from "zod";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { getEvaluation } from "~/evaluation/evaluations.server";
import { importJobRunsAgain, type SafePsychJobImport } from "~/evaluation/run-job.server";
import { formatDuration } from "~/model-calls/progress";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { jobProgressView, type JobProgressView } from "~/platform/job-progress";
import { getJob, resumingJobId } from "~/platform/jobs.server";
import { ServiceError } from "~/platform/service-error";
import { cancelWorkerJob, resumeWorkerJob } from "~/platform/worker-jobs.server";
import { EVAL_JOB_KINDS, EVAL_JOBS } from "~/protocols.server";
import { Csrf } from "~/ui/root-data";
import { Time } from "~/ui/time";

export const meta: MetaFunction = ({ params }) => [{ title: `Job ${params.jobId} · Evaluation jobs · Concord` }];

function evalJobOr404(param: string | undefined) {
  const db = getDb();
  return requireById(
    param,
    (id) => {
      const j = getJob(db, id);
      return j && EVAL_JOB_KINDS.includes(j.kind) ? j : null;
    },
    "No such job.",
  );
}

/** What the page shows of the job's parameters: providers by name, files by name; never a key. */
const SHOWN_PARAMS = [
  "provider",
  "judgeProvider",
  "samplesFile",
  "itemsFile",
  "strategies",
  "seeds",
  "subset",
  "limit",
  "project",
  "backTranslateOnly",
];

/**
 * One evaluation job (docs/evaluation.md, "Running from the browser"): its progress, refreshed once a second while
 * it runs, cancel and resume, and, when it ends, the link to its results. Admin only.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const job = evalJobOr404(params.jobId);
  const kind = EVAL_JOBS[job.kind as keyof typeof EVAL_JOBS];
  const p = job.params;
  const shown: [string, string][] = SHOWN_PARAMS.filter((k) => p[k] !== undefined && p[k] !== null).map((k) => [
    k,
    Array.isArray(p[k]) ? (p[k] as unknown[]).join(", ") : String(p[k]),
  ]);
  for (const role of ["candidate", "judge"] as const) {
    const x = p[role] as { name: string; provider: string } | null | undefined;
    if (x) shown.push([role, `${x.name} (provider ${x.provider})`]);
  }
  if (typeof p.evaluationId === "number")
    shown.push(["evaluation", getEvaluation(getDb(), p.evaluationId)?.name ?? `${p.evaluationId} (removed)`]);
  const result = job.result;
  // A Safe-Psych job's import into its evaluation, when refused: the refusal's lines (finishSafePsychJob).
  const imported = result?.import as SafePsychJobImport | undefined;
  const importRefused =
    imported && !imported.imported
      ? { evaluation: imported.evaluation, problems: imported.problems, more: imported.moreProblems }
      : null;
  const folders = Array.isArray(result?.folders)
    ? (result.folders as {
        dir: string;
        strategy: string;
        seed: number;
        finished: number;
        cases: number;
        complete: boolean;
      }[])
    : null;
  return {
    job: {
      id: job.id,
      title: kind.title,
      status: job.status,
      error: job.error,
      createdAt: job.createdAt,
      startedAt: job.startedAt,
      finishedAt: job.finishedAt,
      resumedFrom: typeof p.resumedFrom === "number" ? p.resumedFrom : null,
    },
    params: shown,
    progress: jobProgressView(job, Date.now()),
    results: job.status === "done" && result ? kind.results(result) : null,
    folders,
    importRefused,
    resumedBy: resumingJobId(getDb(), job.id),
  };
}

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("cancel") }),
  z.object({ intent: z.literal("resume") }),
  z.object({ intent: z.literal("import") }),
]);

export async function action({ request, params }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const job = evalJobOr404(params.jobId);
  const parsed = parseIntent(form, ActionSchema);
  if (!parsed.ok) return { ok: false as const, message: parsed.message };
  try {
    if (parsed.data.intent === "cancel") {
      await cancelWorkerJob(getDb(), { jobId: job.id, actorId: me.id });
      return { ok: true as const, message: "Cancelled. Everything it finished is kept." };
    }
    if (parsed.data.intent === "import") {
      const outcome = importJobRunsAgain(getDb(), { jobId: job.id, actorId: me.id });
      return outcome.imported
        ? {
            ok: true as const,
            message: `Imported: ${outcome.runs} runs, ${outcome.trajectories} trajectories into "${outcome.evaluation}".`,
          }
        : { ok: false as const, message: "Refused again: nothing was imported (the reasons are listed below)." };
    }
    const id = resumeWorkerJob(getDb(), { jobId: job.id, actorId: me.id });
    return redirect(`/admin/eval-jobs/${id}`);
  } catch (e) {
    if (e instanceof ServiceError) return { ok: false as const, message: e.message };
    throw e;
  }
}

const POLL_MS = 1000;
type Polled = { id: number; status: string; error: string | null; progress: JobProgressView };
const activeStatus = (s: string | undefined) => s === "queued" || s === "running";

function ProgressCard({ progress, status }: { progress: JobProgressView; status: string }) {
  const { done, total } = progress;
  return (
    <div className="card" data-testid="job-progress" data-status={status}>
      <p>
        <strong>{progress.step ?? "Starting"}</strong>: {done} of {total} done
      </p>
      <div
        className="progress"
        role="progressbar"
        aria-label="Progress"
        aria-valuemin={0}
        aria-valuemax={Math.max(total, 1)}
        aria-valuenow={done}
        aria-valuetext={`${done} of ${total}`}
      >
        <div style={{ width: `${total ? (100 * done) / total : 0}%` }} />
      </div>
      <dl className="kv">
        <dt>Calls answered</dt>
        <dd data-testid="job-calls">{progress.calls}</dd>
        <dt>Failed calls</dt>
        <dd>{progress.failures}</dd>
        <dt>Retries</dt>
        <dd>{progress.retries}</dd>
        <dt>Rate</dt>
        <dd>{progress.rate === null ? "—" : `${progress.rate.toFixed(1)} calls/s`}</dd>
        <dt>Time left</dt>
        <dd>
          {activeStatus(status)
            ? progress.secondsLeft === null
              ? "—"
              : `about ${formatDuration(progress.secondsLeft)}`
            : "—"}
        </dd>
      </dl>
    </div>
  );
}

export default function EvalJob() {
  const { job, params, progress, results, folders, importRefused, resumedBy } = useLoaderData<typeof loader>();
  const acted = useActionData<typeof action>();
  const fetcher = useFetcher<Polled>();
  const revalidator = useRevalidator();
  const polled = fetcher.data && fetcher.data.id === job.id ? fetcher.data : null;
  const status = polled?.status ?? job.status;
  const running = activeStatus(job.status);

  useEffect(() => {
    if (!running) return;
    if (polled && !activeStatus(polled.status)) {
      if (revalidator.state === "idle") revalidator.revalidate();
      return;
    }
    const timer = setTimeout(() => {
      if (fetcher.state === "idle") fetcher.load(`/admin/eval-jobs/${job.id}/progress`);
    }, POLL_MS);
    return () => clearTimeout(timer);
    // fetcher and revalidator change identity on every render; their states are what matters.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [running, polled, job.id, fetcher.state, revalidator.state]);

  return (
    <section>
      <p>
        <Link to="/admin/eval-jobs">Evaluation jobs</Link>
      </p>
      <h1>
        Job {job.id}: {job.title}
      </h1>
      <p className="muted">
        Status <strong data-testid="job-status">{status}</strong> · started <Time at={job.createdAt} />
        {job.finishedAt ? (
          <>
            {" "}
            · ended <Time at={job.finishedAt} />
          </>
        ) : null}
        {job.resumedFrom ? (
          <>
            {" "}
            · resumes <Link to={`/admin/eval-jobs/${job.resumedFrom}`}>job {job.resumedFrom}</Link>
          </>
        ) : null}
      </p>
      {acted ? (
        <p className={`notice ${acted.ok ? "ok" : "warn"}`} role={acted.ok ? "status" : "alert"}>
          {acted.message}
        </p>
      ) : null}
      <ProgressCard progress={polled?.progress ?? progress} status={status} />
      {running ? (
        <Form method="post">
          <Csrf />
          <button type="submit" name="intent" value="cancel" className="secondary">
            Cancel the job
          </button>{" "}
          <span className="muted">The job runs in the background: you may leave this page and come back.</span>
        </Form>
      ) : null}
      {job.status === "failed" || job.status === "cancelled" ? (
        <div className="card stale" data-testid="job-stopped">
          <p>{job.error}</p>
          {resumedBy ? (
            <p>
              Resumed as <Link to={`/admin/eval-jobs/${resumedBy}`}>job {resumedBy}</Link>.
            </p>
          ) : (
            <Form method="post">
              <Csrf />
              <button type="submit" name="intent" value="resume">
                Resume
              </button>
            </Form>
          )}
        </div>
      ) : null}
      {results ? (
        <p className="notice ok" data-testid="job-results">
          Finished. <Link to={results.href}>{results.label}</Link>
        </p>
      ) : null}
      {importRefused ? (
        <div className="notice warn" role="alert" data-testid="job-import-refused">
          <p>
            The run finished, but its run folders were not imported into the evaluation
            {importRefused.evaluation ? ` "${importRefused.evaluation}"` : ""}: nothing was imported. The run folders
            stay on disk; once the problem is fixed, import them here (or with <code>concord eval-import</code>).
          </p>
          <ul>
            {importRefused.problems.map((l, i) => (
              <li key={i}>
                <code>{l}</code>
              </li>
            ))}
            {importRefused.more > 0 ? <li>… and {importRefused.more} more</li> : null}
          </ul>
          <Form method="post">
            <Csrf />
            <button type="submit" name="intent" value="import">
              Import the run folders again
            </button>
          </Form>
        </div>
      ) : null}
      {folders ? (
        <>
          <h2>Run folders</h2>
          <table data-testid="job-folders">
            <thead>
              <tr>
                <th>Folder</th>
                <th>Strategy</th>
                <th className="num">Seed</th>
                <th className="num">Trajectories</th>
                <th>Complete</th>
              </tr>
            </thead>
            <tbody>
              {folders.map((f) => (
                <tr key={f.dir}>
                  <td>
                    <code>{f.dir}</code>
                  </td>
                  <td>{f.strategy}</td>
                  <td className="num">{f.seed}</td>
                  <td className="num">
                    {f.finished} / {f.cases}
                  </td>
                  <td>{f.complete ? "yes" : "no"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      <h2>Parameters</h2>
      <dl className="kv">
        {params.map(([k, v]) => (
          <div key={k} style={{ display: "contents" }}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
