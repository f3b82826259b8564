/**
 * The Safe-Psych run, one code for the command line and the browser (docs/evaluation.md, "Running" and "Running from
 * the browser"): `runSafePsych` makes the model's and the judge's endpoints and runs `runEvaluation` — `concord run`
 * calls it with its options, the job's worker (`runSafePsychJob`) with the job's parameters and the configured
 * providers. `finishSafePsychJob` is the job's one end step: what it returns is the job's result, shown on the job
 * page (the run folders written and, when the job names an evaluation, their import into it).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { createOpenAiEndpoint, type MaxTokensParam } from "../model-calls/client";
import type { ProgressSink } from "../model-calls/progress";
import { findProvider, providerConnection } from "../model-calls/providers.server";
import { DEFAULT_RETRY_POLICY, realRetryDeps } from "../model-calls/retry";
import type { Db } from "../platform/db.server";
import { evalInputPath, evalRunsRoot } from "../platform/eval-files.server";
import { recordEvent } from "../audit/audit.server";
import { getJob, setJobResult, type JobView } from "../platform/jobs.server";
import { softwareVersion } from "../platform/paths.server";
import { ServiceError } from "../platform/service-error";
import { jobProgressSink, startWorkerJob, type JobContext, type JobOutcome } from "../platform/worker-jobs.server";
import {
  DEFAULT_MAX_TOKENS,
  DEFAULT_TEMPERATURE,
  DEFAULT_TOP_P,
  parseSamples,
  type Strategy,
} from "./domain/runner-protocol";
import { checkModelKey, modelKeyFromName } from "./domain/runner-records";
import { getEvaluation, importRunFolders } from "./evaluations.server";
import { loadPrompts, promptHashesOf } from "./prompts";
import { redactUrl } from "./run-folder";
import { runEvaluation, type RunnerConfig, type RunnerResult } from "./runner";

export interface SafePsychConnection {
  name: string;
  key: string;
  baseURL: string;
  apiKey: string;
}

/** What `runSafePsych` needs beyond the runner's configuration: the two connections (keys included). */
export type SafePsychSpec = Omit<RunnerConfig, "model" | "judge"> & {
  model: SafePsychConnection;
  judge: SafePsychConnection;
  judgeMaxTokensParam: MaxTokensParam;
};

export interface SafePsychHooks {
  /** Warnings for the operator (rejected parameters; never case content). */
  warn(line: string): void;
  log(line: string): void;
  progress: ProgressSink;
  signal?: AbortSignal;
}

/** Every (strategy, seed) run of one model, resumable; RunnerConfigError when a folder cannot be resumed. */
export function runSafePsych(spec: SafePsychSpec, hooks: SafePsychHooks): Promise<RunnerResult> {
  const loaded = loadPrompts();
  const endpoint = (c: SafePsychConnection, label: "model" | "judge") =>
    createOpenAiEndpoint({
      baseURL: c.baseURL,
      apiKey: c.apiKey,
      model: c.name,
      timeoutMs: spec.timeoutMs,
      maxTokensParam: label === "judge" ? spec.judgeMaxTokensParam : spec.maxTokensParam,
      label,
      onParameterDropped: (parameter) =>
        hooks.warn(`warning: the ${label}'s API rejects ${parameter}; every call is sent without it from now on`),
      onMaxTokensParamSwitched: (from, to) =>
        hooks.warn(`warning: the ${label}'s API rejects ${from}; every call sends ${to} instead from now on`),
    });
  const { model, judge, judgeMaxTokensParam: _judgeParam, ...config } = spec;
  return runEvaluation(
    {
      ...config,
      model: { name: model.name, key: model.key, base_url: redactUrl(model.baseURL) },
      judge: { name: judge.name, key: judge.key, base_url: redactUrl(judge.baseURL) },
    },
    {
      modelEndpoint: endpoint(model, "model"),
      judgeEndpoint: endpoint(judge, "judge"),
      prompts: loaded.prompts,
      promptHashes: (strategy) => promptHashesOf(loaded, strategy),
      version: softwareVersion(),
      now: () => performance.now(),
      wallClock: () => new Date(),
      retry: realRetryDeps,
      signal: hooks.signal,
      progress: hooks.progress,
      log: hooks.log,
    },
  );
}

// --- the job started from the browser --------------------------------------------------------------------------

export const SAFE_PSYCH_JOB_KIND = "safe-psych-run";

export interface SafePsychJobParams {
  provider: string;
  judgeProvider: string;
  samplesFile: string;
  strategies: Strategy[];
  seeds: number[];
  limit: number | null;
  concurrency: number;
  /** The evaluation the run folders are imported into when the job ends done; absent or null: none. */
  evaluationId?: number | null;
}

function connection(providerName: string, what: string): SafePsychConnection & { maxTokensParam: MaxTokensParam } {
  const p = providerConnection(providerName);
  const key = modelKeyFromName(p.model);
  const problem = checkModelKey(key, what);
  if (problem) throw new ServiceError(`${what} ${JSON.stringify(p.model)}: ${problem}`);
  return { name: p.model, key, baseURL: p.baseURL, apiKey: p.apiKey, maxTokensParam: p.maxTokensParam };
}

/** Reads and checks a samples.json named on a page: refusals as ServiceError, `FILE: reason`. */
export function readJobSamples(samplesFile: string) {
  const path = evalInputPath(samplesFile);
  const text = readFileSync(path, "utf8");
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    throw new ServiceError(`${samplesFile}: not valid JSON (${(e as Error).message})`, "samplesFile", 400);
  }
  const parsed = parseSamples(value);
  if (!parsed.ok) throw new ServiceError(`${samplesFile}: ${parsed.errors.slice(0, 5).join("; ")}`, "samplesFile", 400);
  return { path, cases: parsed.cases, sha256: createHash("sha256").update(text).digest("hex") };
}

/** The job's work on its worker thread: the model over the samples with every strategy and seed, judged. */
export async function runSafePsychJob(db: Db, job: JobView, ctx: JobContext): Promise<JobOutcome> {
  const p = job.params as unknown as SafePsychJobParams;
  const model = connection(p.provider, "model key");
  const judge = connection(p.judgeProvider, "judge key");
  const samples = readJobSamples(p.samplesFile);
  const outDir = join(evalRunsRoot(), "safe-psych", model.key);
  const result = await runSafePsych(
    {
      cases: samples.cases,
      strategies: p.strategies,
      seeds: p.seeds,
      model,
      judge,
      temperature: DEFAULT_TEMPERATURE,
      topP: DEFAULT_TOP_P,
      maxTokens: DEFAULT_MAX_TOKENS,
      maxTokensParam: model.maxTokensParam,
      judgeMaxTokensParam: judge.maxTokensParam,
      concurrency: p.concurrency,
      outDir,
      limit: p.limit,
      retry: DEFAULT_RETRY_POLICY,
      timeoutMs: 300_000,
      inputs: { samples: { path: resolve(samples.path), sha256: samples.sha256 }, gold: null },
    },
    { warn: () => {}, log: () => {}, progress: jobProgressSink(ctx, "trajectories"), signal: ctx.signal },
  );
  // A cancelled or stopped run imports nothing: its resume, which carries the same evaluation, imports when it ends.
  if (result.status !== "complete" || ctx.signal.aborted)
    return {
      status: "stopped",
      message: result.message ?? "the run was interrupted.",
      result: finishSafePsychJob(db, outDir, result, null),
    };
  const into = p.evaluationId ?? null;
  return {
    status: "done",
    result: finishSafePsychJob(db, outDir, result, into === null ? null : { evaluationId: into, actor: job.createdBy }),
  };
}

/** What the end step did with the run folders of a job that names an evaluation (part of the job's result). */
export interface SafePsychJobImport {
  evaluationId: number;
  evaluation: string | null;
  /** True when every folder was imported; false when the import was refused (nothing imported). */
  imported: boolean;
  runs: number;
  trajectories: number;
  /** The refusal, `FILE:LINE: reason` lines as `eval-import` prints them; empty when imported. */
  problems: string[];
  moreProblems: number;
}

/**
 * The end of a Safe-Psych job, its one end step: the run folders it wrote, with their counts, and — for a job that
 * ended done and names an evaluation — their import into it by `importRunFolders`, as `eval-import` imports them
 * (docs/evaluation.md, "Running from the browser"). A refused import is reported in the result (`import.problems`)
 * and leaves the folders on disk, to import once the problem is fixed. What it returns is the job's result.
 */
export function finishSafePsychJob(
  db: Db,
  outDir: string,
  result: RunnerResult,
  into: { evaluationId: number; actor: string | null } | null,
): Record<string, unknown> {
  const summary = {
    outDir,
    folders: result.folders.map((f) => ({
      dir: f.dir,
      strategy: f.strategy,
      seed: f.seed,
      finished: f.finished,
      cases: f.cases,
      complete: f.complete,
    })),
    calls: result.calls,
    failures: result.failures,
  };
  if (into === null) return summary;
  return {
    ...summary,
    import: importJobRuns(
      db,
      into,
      result.folders.map((f) => f.dir),
    ),
  };
}

function importJobRuns(
  db: Db,
  into: { evaluationId: number; actor: string | null },
  dirs: string[],
): SafePsychJobImport {
  const evaluation = getEvaluation(db, into.evaluationId);
  const refused = (problems: string[], moreProblems = 0): SafePsychJobImport => ({
    evaluationId: into.evaluationId,
    evaluation: evaluation?.name ?? null,
    imported: false,
    runs: 0,
    trajectories: 0,
    problems,
    moreProblems,
  });
  if (!evaluation) return refused([`no evaluation ${into.evaluationId}: it was removed while the job ran`]);
  let r;
  try {
    r = importRunFolders(db, {
      evaluation: evaluation.name,
      dirs,
      actor: into.actor,
    });
  } catch (e) {
    // Another import of the same evaluation running, or an import interrupted: nothing of this one was written.
    if (e instanceof ServiceError) return refused([e.message]);
    throw e;
  }
  if (r.problems.length > 0 || r.evaluationId === null) return refused(r.problems, r.moreProblems);
  return {
    evaluationId: r.evaluationId,
    evaluation: evaluation.name,
    imported: true,
    runs: r.runs.length,
    trajectories: r.trajectories,
    problems: [],
    moreProblems: 0,
  };
}

/**
 * Imports a finished Safe-Psych job's run folders into its evaluation again, after a refused import (docs/evaluation.md,
 * "The end of a Safe-Psych job"): the job page's *Import the run folders again*. The folders are the ones the job's
 * result lists, which the job wrote under its runs folder (`CONCORD_EVAL_RUNS/safe-psych/`, not the page import's
 * `CONCORD_RUNS_DIR`, so the evaluation page cannot name them); each is checked to be there. The import is
 * `importRunFolders`, as the job's end step runs it, all or nothing; its outcome replaces the job's `import` and is an
 * audit event (`job` · `import`) written with it.
 */
export function importJobRunsAgain(db: Db, input: { jobId: number; actorId: string | null }): SafePsychJobImport {
  const job = getJob(db, input.jobId);
  if (!job || job.kind !== SAFE_PSYCH_JOB_KIND) throw new ServiceError("No such job.", "job", 404);
  const result = job.result ?? {};
  const previous = result.import as SafePsychJobImport | undefined;
  if (job.status !== "done" || !previous)
    throw new ServiceError("Only a finished job that names an evaluation imports its run folders.", "job", 409);
  if (previous.imported) throw new ServiceError("This job's run folders are already imported.", "job", 409);
  const root = join(evalRunsRoot(), "safe-psych");
  const folders = Array.isArray(result.folders) ? (result.folders as { dir: unknown }[]) : [];
  const dirs = folders.map((f) => String(f.dir));
  for (const dir of dirs) {
    const rel = relative(root, resolve(dir));
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel))
      throw new ServiceError(`${dir}: not under the jobs' runs folder.`, "job", 409);
  }
  if (dirs.length === 0) throw new ServiceError("This job wrote no run folders.", "job", 409);
  const outcome = importJobRuns(db, { evaluationId: previous.evaluationId, actor: input.actorId }, dirs);
  db.transaction(
    (tx) => {
      setJobResult(tx, job.id, { ...result, import: outcome });
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "job",
        entityId: job.id,
        action: "import",
        changes: { evaluationId: outcome.evaluationId, imported: outcome.imported, runs: outcome.runs },
      });
    },
    { behavior: "immediate" },
  );
  return outcome;
}

/** Starts a Safe-Psych run on a worker thread, after the checks the worker makes (providers, samples). */
export function startSafePsychJob(db: Db, input: { params: SafePsychJobParams; actorId: string | null }): number {
  const p = input.params;
  for (const [field, name] of [
    ["provider", p.provider],
    ["judgeProvider", p.judgeProvider],
  ] as const)
    if (!findProvider(name)) throw new ServiceError(`No provider "${name}" is configured.`, field, 400);
  if (p.evaluationId != null && !getEvaluation(db, p.evaluationId))
    throw new ServiceError("No such evaluation: choose one from the list.", "evaluationId", 400);
  const model = findProvider(p.provider)!;
  const key = modelKeyFromName(model.model);
  const problem = checkModelKey(key);
  if (problem) throw new ServiceError(`model ${JSON.stringify(model.model)}: ${problem}`, "provider", 400);
  readJobSamples(p.samplesFile);
  return startWorkerJob(db, {
    kind: SAFE_PSYCH_JOB_KIND,
    subject: `safe_psych_run:${key}`,
    params: { ...p },
    worker: "safe-psych-job",
    actorId: input.actorId,
  });
}
