/**
 * Bounded retries with exponential back-off and jitter (docs/evaluation.md#decoding-and-retries: at most 12 retries on rate limits, server
 * errors and empty answers; the reference waits min(60 s, 2^attempt s + U(0, 1) s)). Sleep and randomness are
 * injected so tests run instantly and deterministically.
 */
import { CallError } from "./client";

export interface RetryPolicy {
  /** Retries after the first attempt (the reference: 12). */
  maxRetries: number;
  /** The first back-off step; attempt k waits baseDelayMs · 2^k plus up to baseDelayMs of jitter. */
  baseDelayMs: number;
  /** Cap of one wait (the reference: 60 s). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 12, baseDelayMs: 1000, maxDelayMs: 60_000 };

export interface RetryDeps {
  /** Resolves after `ms`, or rejects when `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform in [0, 1). */
  random: () => number;
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CallError("aborted", "aborted"));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new CallError("aborted", "aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export const realRetryDeps: RetryDeps = { sleep: abortableSleep, random: Math.random };

/**
 * The wait before retry number `attempt` (0-based). Server trouble backs off exponentially, honouring a longer
 * Retry-After; an empty answer is not the server's load, so it is retried after a short jittered pause only.
 */
export function backoffDelay(error: CallError, attempt: number, policy: RetryPolicy, random: () => number): number {
  const jitter = random() * policy.baseDelayMs;
  if (error.kind === "empty") return Math.min(policy.maxDelayMs, jitter);
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt + jitter);
  return Math.min(policy.maxDelayMs, Math.max(exponential, error.retryAfterMs ?? 0));
}

const RETRIED = new Set(["retryable", "empty", "malformed"]);

export class RetriesExhausted extends Error {
  constructor(
    readonly last: CallError,
    readonly attempts: number,
  ) {
    super(`${last.message} (gave up after ${attempts} attempts)`);
  }
}

export interface RetryEvents {
  onRetry?: (error: CallError, attempt: number, delayMs: number) => void;
}

/**
 * Runs `call` until it succeeds, a non-retried CallError is thrown (rethrown as is), or the retries are used up
 * (RetriesExhausted carrying the last error). Anything else thrown is classified as retryable by the client first.
 */
export async function withRetry<T>(
  call: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
  deps: RetryDeps,
  options: RetryEvents & { signal?: AbortSignal } = {},
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call(attempt);
    } catch (e) {
      if (!(e instanceof CallError) || !RETRIED.has(e.kind)) throw e;
      if (options.signal?.aborted) throw new CallError("aborted", "aborted");
      if (attempt >= policy.maxRetries) throw new RetriesExhausted(e, attempt + 1);
      const delay = backoffDelay(e, attempt, policy, deps.random);
      options.onRetry?.(e, attempt, delay);
      await deps.sleep(delay, options.signal);
    }
  }
}
