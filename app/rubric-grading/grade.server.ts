/**
 * Synchronous grading (docs/rubric-grading.md, "Grading"): one independent judge call per (response, criterion),
 * the HealthBench grader template and system message, bounded concurrency, retries with back-off. A verdict is
 * written as soon as it is read, so a killed run resumes where it stopped and never repeats a finished call. An
 * answer with no readable verdict is re-requested within the retry bound; after it the verdict is recorded as
 * failed (excluded from scores, listed in the manifest).
 */
import { and, count, eq } from "drizzle-orm";
import { CallError, type ChatResultEndpoint } from "../model-calls/client";
import { runPool } from "../model-calls/pool";
import type { ProgressSink } from "../model-calls/progress";
import { withRetry, type RetryDeps, type RetryPolicy } from "../model-calls/retry";
import { gradingModels, gradingVerdicts } from "../../db/schema";
import type { Db } from "../platform/db.server";
import { graderMessages, type GraderText } from "./domain/grader";
import { readVerdict } from "./domain/verdict";
import { describeFailure, type CallSummary } from "./respond.server";
import { TEMPERATURE_NOTE, type GradingModel } from "./sets.server";
import { notPending } from "../platform/import-runs.server";
import {
  countPendingGrading,
  createContextLoader,
  pendingGradingPage,
  type GradingItem,
  type Scope,
} from "./work.server";

export interface GradeOptions {
  setId: number;
  judge: GradingModel;
  scope: Scope;
  concurrency: number;
  retry: RetryPolicy;
  limit: number | null;
  /** Forget this judge's failed verdicts first, so that they are tried again. */
  retryFailed: boolean;
  signal?: AbortSignal;
}

export interface GradeDeps {
  endpoint: ChatResultEndpoint;
  grader: GraderText;
  retry: RetryDeps;
  progress: ProgressSink;
  now: () => number;
}

/** Pages larger than the pool keep every slot busy; bounded so that memory does not grow with the run. */
const PAGE = 4096;

export function forgetFailedVerdicts(db: Db, judgeId: number): number {
  return db
    .delete(gradingVerdicts)
    .where(
      and(
        eq(gradingVerdicts.judgeId, judgeId),
        eq(gradingVerdicts.status, "failed"),
        notPending(gradingVerdicts.importRun),
      ),
    )
    .run().changes;
}

export async function gradeSync(db: Db, options: GradeOptions, deps: GradeDeps): Promise<CallSummary> {
  const { judge } = options;
  if (options.retryFailed) forgetFailedVerdicts(db, judge.id);
  const counts = countPendingGrading(db, judge.id, options.setId, options.scope);
  const state = {
    finished: counts.total - counts.pending,
    total: counts.total,
    calls: 0,
    retries: 0,
    failures: 0,
    unit: "verdicts",
  };
  const summary: CallSummary = { status: "complete", message: null, done: 0, failures: 0, retries: 0, special: 0 };
  const load = createContextLoader(db);
  const insert = db.$client.prepare(
    `INSERT OR IGNORE INTO grading_verdicts
       (judge_id, response_id, criterion_idx, status, criteria_met, explanation, via, attempts, error, prompt_tokens, completion_tokens, created_at)
     VALUES (?, ?, ?, ?, ?, ?, 'sync', ?, ?, ?, ?, ?)`,
  );
  // The client leaves out a temperature the API rejects (app/model-calls/client.ts, createRawCall), but only while
  // the judge has no stored verdict: one judge's verdicts are all made with the same parameters.
  let temperature = judge.temperature;
  const mayDropTemperature =
    // eslint-disable-next-line concord/visible-rows -- verdicts still being ingested count: they were made with the judge's parameters too
    db.select({ n: count() }).from(gradingVerdicts).where(eq(gradingVerdicts.judgeId, judge.id)).get()!.n === 0;
  deps.progress.start(state);
  let after: GradingItem | null = null;
  let budget = options.limit ?? Infinity;
  let fatal: CallError | null = null;
  try {
    while (budget > 0 && fatal === null && !options.signal?.aborted) {
      const page = pendingGradingPage(db, judge.id, options.setId, options.scope, after, Math.min(PAGE, budget));
      if (page.length === 0) break;
      after = page[page.length - 1];
      budget -= page.length;
      await runPool(
        page,
        options.concurrency,
        async (item) => {
          const ctx = load(item);
          const messages = graderMessages(deps.grader, ctx.prompt, ctx.response, ctx);
          let attempts = 0;
          try {
            const { verdict, result } = await withRetry(
              async (attempt) => {
                attempts = attempt + 1;
                const result = await deps.endpoint.call(
                  {
                    messages,
                    temperature,
                    topP: null,
                    maxTokens: judge.maxTokens,
                    seed: null,
                    keep: mayDropTemperature ? [] : ["temperature"],
                  },
                  options.signal,
                );
                if (result.dropped.includes("temperature") && !summary.temperatureDropped) {
                  // As for candidates (respond.server.ts): the judge runs at the provider's default, recorded.
                  temperature = null;
                  db.update(gradingModels)
                    .set({ temperature: null, note: TEMPERATURE_NOTE })
                    .where(eq(gradingModels.id, judge.id))
                    .run();
                  summary.temperatureDropped = true;
                }
                const verdict = readVerdict(result.text);
                if (!verdict) throw new CallError("malformed", "judge: no verdict in the answer");
                return { verdict, result };
              },
              options.retry,
              deps.retry,
              { signal: options.signal, onRetry: () => void (state.retries++, summary.retries++) },
            );
            insert.run(
              judge.id,
              item.responseId,
              item.criterionIdx,
              verdict.status,
              verdict.criteriaMet ? 1 : 0,
              verdict.explanation,
              attempts,
              null,
              result.promptTokens,
              result.completionTokens,
              deps.now(),
            );
            if (verdict.status === "recovered") summary.special++;
            summary.done++;
          } catch (e) {
            if (e instanceof CallError && e.kind === "aborted") return;
            if (e instanceof CallError && e.kind === "fatal") {
              fatal ??= e;
              return;
            }
            insert.run(
              judge.id,
              item.responseId,
              item.criterionIdx,
              "failed",
              null,
              "",
              attempts,
              describeFailure(e),
              null,
              null,
              deps.now(),
            );
            state.failures++;
            summary.failures++;
          } finally {
            state.finished++;
            state.calls++;
            deps.progress.update(state);
          }
        },
        () => fatal !== null || options.signal?.aborted === true,
      );
    }
  } finally {
    deps.progress.finish(state);
  }
  if (fatal) return { ...summary, status: "fatal", message: (fatal as CallError).message };
  if (options.signal?.aborted) return { ...summary, status: "stopped", message: "stopped" };
  return summary;
}
