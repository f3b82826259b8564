/**
 * Candidate responses (docs/rubric-grading.md, "Responses"): one per conversation per candidate, the conversation
 * sent verbatim with no system message, stored keyed by (candidate, conversation). An empty answer with an explicit
 * refusal is stored and graded as returned; an empty answer without one is a transport failure, re-requested and
 * never stored. Finished conversations are never requested again.
 */
import { CallError, type ChatResultEndpoint } from "../model-calls/client";
import { runPool } from "../model-calls/pool";
import type { ProgressSink } from "../model-calls/progress";
import { RetriesExhausted, withRetry, type RetryDeps, type RetryPolicy } from "../model-calls/retry";
import { eq } from "drizzle-orm";
import { gradingCallErrors, gradingModels, gradingResponses } from "../../db/schema";
import type { Db } from "../platform/db.server";
import type { Message } from "./domain/eval-set";
import { TEMPERATURE_NOTE, type GradingModel } from "./sets.server";
import { pendingResponsePage } from "./work.server";

export interface RespondOptions {
  setId: number;
  candidate: GradingModel;
  subsetId: number | null;
  concurrency: number;
  retry: RetryPolicy;
  limit: number | null;
  signal?: AbortSignal;
}

export interface RespondDeps {
  endpoint: ChatResultEndpoint;
  retry: RetryDeps;
  progress: ProgressSink;
  now: () => number;
}

export interface CallSummary {
  status: "complete" | "stopped" | "fatal";
  message: string | null;
  done: number;
  failures: number;
  retries: number;
  /** Responses stored as explicit refusals (respond) or verdicts recovered from malformed JSON (grade). */
  special: number;
  /** The API rejected the temperature parameter: the candidate now runs (and is recorded) at the provider default. */
  temperatureDropped?: boolean;
}

const PAGE = 2000;

export function describeFailure(e: unknown): string {
  if (e instanceof RetriesExhausted) return `${e.last.kind}: ${e.last.message} (${e.attempts} attempts)`;
  if (e instanceof CallError) return `${e.kind}: ${e.message}`;
  return (e as Error)?.name ?? "error";
}

export async function generateResponses(db: Db, options: RespondOptions, deps: RespondDeps): Promise<CallSummary> {
  const { candidate } = options;
  const remaining = db.$client
    .prepare(
      `SELECT COUNT(*) AS total, SUM(CASE WHEN EXISTS (SELECT 1 FROM grading_responses r WHERE r.candidate_id = ? AND r.conversation_id = g.id) THEN 1 ELSE 0 END) AS done
       FROM grading_conversations g WHERE g.set_id = ?
       ${options.subsetId !== null ? "AND g.id IN (SELECT conversation_id FROM grading_subset_members WHERE subset_id = ?)" : ""}`,
    )
    .get(...[candidate.id, options.setId, ...(options.subsetId !== null ? [options.subsetId] : [])]) as {
    total: number;
    done: number | null;
  };
  const state = {
    finished: remaining.done ?? 0,
    total: remaining.total,
    calls: 0,
    retries: 0,
    failures: 0,
    unit: "responses",
  };
  const summary: CallSummary = { status: "complete", message: null, done: 0, failures: 0, retries: 0, special: 0 };
  const insert = db.insert(gradingResponses);
  let temperature = candidate.temperature;
  // The client leaves out a temperature the API rejects (app/model-calls/client.ts, createRawCall), but only before
  // any response is stored: one candidate's responses are all made with the same parameters.
  const mayDropTemperature = (remaining.done ?? 0) === 0;
  deps.progress.start(state);
  let after = -1;
  let budget = options.limit ?? Infinity;
  let fatal: CallError | null = null;
  try {
    while (budget > 0 && fatal === null && !options.signal?.aborted) {
      const page = pendingResponsePage(
        db,
        options.setId,
        candidate.id,
        options.subsetId,
        after,
        Math.min(PAGE, budget),
      );
      if (page.length === 0) break;
      after = page[page.length - 1].position;
      budget -= page.length;
      await runPool(
        page,
        options.concurrency,
        async (item) => {
          const messages = JSON.parse(item.prompt) as Message[];
          try {
            const result = await withRetry(
              () =>
                deps.endpoint.call(
                  {
                    messages,
                    temperature,
                    topP: null,
                    maxTokens: candidate.maxTokens,
                    seed: null,
                    keep: mayDropTemperature ? [] : ["temperature"],
                  },
                  options.signal,
                ),
              options.retry,
              deps.retry,
              { signal: options.signal, onRetry: () => void (state.retries++, summary.retries++) },
            );
            if (result.dropped.includes("temperature") && !summary.temperatureDropped) {
              // The client learned that the API rejects the temperature and sent this call (and every later one)
              // without it: the candidate runs at the provider's default, recorded.
              temperature = null;
              db.update(gradingModels)
                .set({ temperature: null, note: TEMPERATURE_NOTE })
                .where(eq(gradingModels.id, candidate.id))
                .run();
              summary.temperatureDropped = true;
            }
            insert
              .values({
                candidateId: candidate.id,
                conversationId: item.conversationId,
                text: result.text,
                finishReason: result.finishReason,
                refusal: result.refusal,
                promptTokens: result.promptTokens,
                completionTokens: result.completionTokens,
                createdAt: deps.now(),
              })
              .onConflictDoNothing()
              .run();
            if (result.refusal) summary.special++;
            state.finished++;
            summary.done++;
          } catch (e) {
            if (e instanceof CallError && e.kind === "aborted") return;
            if (e instanceof CallError && e.kind === "fatal") {
              fatal ??= e;
              return;
            }
            db.insert(gradingCallErrors)
              .values({
                modelId: candidate.id,
                conversationId: item.conversationId,
                criterionIdx: null,
                error: describeFailure(e),
                createdAt: deps.now(),
              })
              .run();
            state.failures++;
            summary.failures++;
          } finally {
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
