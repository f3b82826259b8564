/**
 * The rubric-grading steps, one code for the command line and the browser (docs/rubric-grading.md; docs/evaluation.md,
 * "Running from the browser"): `respondStep` collects a candidate's responses (grade-respond), `gradeStep` grades
 * the stored responses with one judge synchronously (grade-run --mode sync). The job started from a page
 * (`runGradingJob`, on its worker thread) runs the candidate's step and then the judge's, with the configured
 * providers' connections; its result is the set, whose report page shows the scores.
 */
import { createKeepAliveFetch } from "../model-calls/keep-alive-fetch.server";
import { createOpenAiResultEndpoint, type MaxTokensParam } from "../model-calls/client";
import type { ProgressSink } from "../model-calls/progress";
import { findProvider, providerConnection } from "../model-calls/providers.server";
import { DEFAULT_RETRY_POLICY, realRetryDeps, type RetryPolicy } from "../model-calls/retry";
import { redactUrl } from "../evaluation/public.server";
import type { Db } from "../platform/db.server";
import type { JobView } from "../platform/jobs.server";
import { ServiceError } from "../platform/service-error";
import { jobProgressSink, startWorkerJob, type JobContext, type JobOutcome } from "../platform/worker-jobs.server";
import { gradeSync } from "./grade.server";
import { loadGraderText } from "./grader-text.server";
import { generateResponses, type CallSummary } from "./respond.server";
import { ensureModel, getGradingSetById, requireSubset, type GradingModel, type GradingSet } from "./sets.server";
import type { Scope } from "./work.server";

export interface StepEndpoint {
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  maxTokensParam: MaxTokensParam;
}

export interface StepSettings {
  temperature: number | null;
  maxTokens: number;
  concurrency: number;
  retry: RetryPolicy;
  limit: number | null;
}

/** The candidate's model row (made or checked), then the subset named, as grade-respond has always checked them. */
export function candidateOf(
  db: Db,
  input: { set: GradingSet; name: string; endpoint: StepEndpoint; settings: StepSettings; subset?: string },
): { candidate: GradingModel; subsetId: number | null } {
  const candidate = ensureModel(db, {
    set: input.set,
    role: "candidate",
    name: input.name,
    model: input.endpoint.model,
    baseUrl: redactUrl(input.endpoint.baseUrl),
    temperature: input.settings.temperature,
    maxTokens: input.settings.maxTokens,
    maxTokensParam: input.endpoint.maxTokensParam,
  });
  return { candidate, subsetId: input.subset ? requireSubset(db, input.set, input.subset).id : null };
}

/** grade-respond's work: one response per conversation of the scope from the candidate, resumable. */
export function respondStep(
  db: Db,
  input: {
    set: GradingSet;
    candidate: GradingModel;
    subsetId: number | null;
    endpoint: StepEndpoint;
    settings: StepSettings;
    signal?: AbortSignal;
  },
  progress: ProgressSink,
): Promise<CallSummary> {
  const endpoint = createOpenAiResultEndpoint({
    baseURL: input.endpoint.baseUrl,
    apiKey: input.endpoint.apiKey,
    model: input.candidate.model,
    timeoutMs: input.endpoint.timeoutMs,
    maxTokensParam: input.endpoint.maxTokensParam,
    label: "candidate",
    fetch: createKeepAliveFetch(),
  });
  const s = input.settings;
  return generateResponses(
    db,
    {
      setId: input.set.id,
      candidate: input.candidate,
      subsetId: input.subsetId,
      concurrency: s.concurrency,
      retry: s.retry,
      limit: s.limit,
      signal: input.signal,
    },
    { endpoint, retry: realRetryDeps, progress, now: Date.now },
  );
}

/** The judge's model row (made or checked), as grade-run and grade-batch-write have always made it. */
export function judgeOf(
  db: Db,
  input: {
    set: GradingSet;
    name: string;
    endpoint: StepEndpoint;
    settings: StepSettings;
    selfCandidate: string | null;
  },
): GradingModel {
  return ensureModel(db, {
    set: input.set,
    role: "judge",
    name: input.name,
    model: input.endpoint.model,
    baseUrl: redactUrl(input.endpoint.baseUrl),
    temperature: input.settings.temperature,
    maxTokens: input.settings.maxTokens,
    maxTokensParam: input.endpoint.maxTokensParam,
    selfCandidate: input.selfCandidate,
  });
}

/** grade-run --mode sync's work: every pending verdict of the scope from one judge, resumable. */
export function gradeStep(
  db: Db,
  input: {
    set: GradingSet;
    judge: GradingModel;
    scope: Scope;
    endpoint: StepEndpoint;
    settings: StepSettings;
    retryFailed: boolean;
    signal?: AbortSignal;
  },
  progress: ProgressSink,
): Promise<CallSummary> {
  const endpoint = createOpenAiResultEndpoint({
    baseURL: input.endpoint.baseUrl,
    apiKey: input.endpoint.apiKey,
    model: input.judge.model,
    timeoutMs: input.endpoint.timeoutMs,
    maxTokensParam: input.endpoint.maxTokensParam,
    label: "judge",
    fetch: createKeepAliveFetch(),
  });
  const s = input.settings;
  return gradeSync(
    db,
    {
      setId: input.set.id,
      judge: input.judge,
      scope: input.scope,
      concurrency: s.concurrency,
      retry: s.retry,
      limit: s.limit,
      retryFailed: input.retryFailed,
      signal: input.signal,
    },
    { endpoint, grader: loadGraderText(), retry: realRetryDeps, progress, now: Date.now },
  );
}

// --- the job started from the browser --------------------------------------------------------------------------

export const GRADING_JOB_KIND = "grading-run";

export interface GradingJobParams {
  setId: number;
  /** The candidate's name in the set and its provider; null grades the responses already stored. */
  candidate: { name: string; provider: string } | null;
  judge: { name: string; provider: string };
  subset: string | null;
  limit: number | null;
}

/** grade-respond's and grade-run's defaults (docs/rubric-grading.md). */
const RESPOND_SETTINGS: StepSettings = {
  temperature: 0,
  maxTokens: 8192,
  concurrency: 16,
  retry: DEFAULT_RETRY_POLICY,
  limit: null,
};
const JUDGE_SETTINGS: StepSettings = {
  temperature: 0,
  maxTokens: 2048,
  concurrency: 64,
  retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 6 },
  limit: null,
};
const TIMEOUT_MS = 600_000;

function endpointOf(providerName: string): StepEndpoint {
  const p = providerConnection(providerName);
  return {
    baseUrl: p.baseURL,
    apiKey: p.apiKey,
    model: p.model,
    timeoutMs: TIMEOUT_MS,
    maxTokensParam: p.maxTokensParam,
  };
}

/** The job's work on its worker thread: the candidate's responses (when one is named), then the judge's verdicts. */
export async function runGradingJob(db: Db, job: JobView, ctx: JobContext): Promise<JobOutcome> {
  const p = job.params as unknown as GradingJobParams;
  const set = getGradingSetById(db, p.setId);
  if (!set) throw new ServiceError("The evaluation set is gone.");
  let subsetId: number | null = p.subset ? requireSubset(db, set, p.subset).id : null;
  let earlier = { calls: 0, retries: 0, failures: 0 };
  if (p.candidate) {
    const endpoint = endpointOf(p.candidate.provider);
    const settings = { ...RESPOND_SETTINGS, limit: p.limit };
    const c = candidateOf(db, { set, name: p.candidate.name, endpoint, settings, subset: p.subset ?? undefined });
    subsetId = c.subsetId;
    const r = await respondStep(
      db,
      { set, candidate: c.candidate, subsetId, endpoint, settings, signal: ctx.signal },
      jobProgressSink(ctx, "responses"),
    );
    earlier = { calls: r.done + r.failures, retries: r.retries, failures: r.failures };
    if (ctx.signal.aborted || r.status !== "complete")
      return { status: "stopped", message: r.message ?? "the candidate's responses did not all arrive." };
  }
  const endpoint = endpointOf(p.judge.provider);
  const judge = judgeOf(db, { set, name: p.judge.name, endpoint, settings: JUDGE_SETTINGS, selfCandidate: null });
  const r = await gradeStep(
    db,
    {
      set,
      judge,
      scope: { candidateIds: null, subsetId },
      endpoint,
      settings: { ...JUDGE_SETTINGS, limit: p.limit },
      retryFailed: false,
      signal: ctx.signal,
    },
    jobProgressSink(ctx, "verdicts", earlier),
  );
  if (ctx.signal.aborted || r.status !== "complete")
    return { status: "stopped", message: r.message ?? "not every verdict was given." };
  return { status: "done", result: finishGradingJob(set) };
}

/** The end of a grading job: the set whose report page shows the scores (docs/rubric-grading.md, "Reports"). */
export function finishGradingJob(set: GradingSet): Record<string, unknown> {
  return { gradingSetId: set.id, gradingSet: set.name };
}

/** Starts a grading job on a worker thread (refusals as ServiceError: no such set, provider, subset or name). */
export function startGradingJob(db: Db, input: { params: GradingJobParams; actorId: string | null }): number {
  const p = input.params;
  const set = getGradingSetById(db, p.setId);
  if (!set) throw new ServiceError("No such evaluation set.", "setId", 404);
  for (const [what, x] of [
    ["candidate", p.candidate],
    ["judge", p.judge],
  ] as const) {
    if (!x) continue;
    if (!findProvider(x.provider)) throw new ServiceError(`No provider "${x.provider}" is configured.`, what, 400);
    if (!/^[\w.+-]{1,64}$/.test(x.name))
      throw new ServiceError(`The ${what}'s name takes letters, digits, ".", "_", "+" or "-" (at most 64).`, what, 400);
  }
  if (p.subset) requireSubset(db, set, p.subset);
  return startWorkerJob(db, {
    kind: GRADING_JOB_KIND,
    subject: `grading_set:${set.id}`,
    params: { ...p },
    worker: "grading-job",
    actorId: input.actorId,
  });
}
