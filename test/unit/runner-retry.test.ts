import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { describe, expect, it } from "vitest";
import { CallError, classifyError, completionText } from "../../app/model-calls/client";
import { runChains, runPool } from "../../app/model-calls/pool";
import { formatDuration, progressLine, createProgress } from "../../app/model-calls/progress";
import { backoffDelay, RetriesExhausted, withRetry, type RetryPolicy } from "../../app/model-calls/retry";

const policy: RetryPolicy = { maxRetries: 12, baseDelayMs: 1000, maxDelayMs: 60_000 };

function fakeDeps(random = 0.5) {
  const sleeps: number[] = [];
  return { sleeps, deps: { sleep: async (ms: number) => void sleeps.push(ms), random: () => random } };
}

describe("back-off (docs/evaluation.md#decoding-and-retries: ≤ 12 retries, min(60 s, 2^k s + jitter))", () => {
  it("doubles from the base step, adds up to one step of jitter, and caps at the maximum", () => {
    const e = new CallError("retryable", "HTTP 503");
    // attempt k waits 1000·2^k + 0.5·1000 ms, capped at 60 000 ms
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((k) => backoffDelay(e, k, policy, () => 0.5))).toEqual([
      1500, 2500, 4500, 8500, 16500, 32500, 60000, 60000,
    ]);
  });

  it("honours a longer Retry-After, within the cap", () => {
    expect(backoffDelay(new CallError("retryable", "429", 7000), 0, policy, () => 0)).toBe(7000);
    expect(backoffDelay(new CallError("retryable", "429", 500), 2, policy, () => 0)).toBe(4000);
    expect(backoffDelay(new CallError("retryable", "429", 600_000), 0, policy, () => 0)).toBe(60_000);
  });

  it("retries an empty answer after a short jittered pause, not an exponential one", () => {
    expect(backoffDelay(new CallError("empty", "empty"), 9, policy, () => 0.25)).toBe(250);
  });
});

describe("withRetry", () => {
  it("retries 429, 5xx, time-outs, empty and malformed answers until one succeeds", async () => {
    const { sleeps, deps } = fakeDeps();
    const errors = [
      new CallError("retryable", "HTTP 429"),
      new CallError("retryable", "HTTP 500"),
      new CallError("empty", "empty answer"),
      new CallError("malformed", "not JSON"),
    ];
    let calls = 0;
    const retried: number[] = [];
    const text = await withRetry(
      async () => {
        const e = errors[calls++];
        if (e) throw e;
        return "ok";
      },
      policy,
      deps,
      { onRetry: (_, attempt) => retried.push(attempt) },
    );
    expect(text).toBe("ok");
    expect(calls).toBe(5);
    expect(retried).toEqual([0, 1, 2, 3]);
    // 1000·2^0 + 500, 1000·2^1 + 500, empty: 0.5·1000, 1000·2^3 + 500
    expect(sleeps).toEqual([1500, 2500, 500, 8500]);
  });

  it("gives up after maxRetries retries with the last error", async () => {
    const { sleeps, deps } = fakeDeps(0);
    let calls = 0;
    const failing = withRetry(
      async () => {
        calls++;
        throw new CallError("retryable", "HTTP 503");
      },
      { ...policy, maxRetries: 3 },
      deps,
    );
    await expect(failing).rejects.toBeInstanceOf(RetriesExhausted);
    await failing.catch((e: RetriesExhausted) => {
      expect(e.last.kind).toBe("retryable");
      expect(e.attempts).toBe(4);
      expect(e.message).toBe("HTTP 503 (gave up after 4 attempts)");
    });
    expect(calls).toBe(4);
    expect(sleeps).toEqual([1000, 2000, 4000]);
  });

  it("does not retry a rejected request, a dead endpoint or an abort", async () => {
    for (const kind of ["rejected", "fatal", "aborted"] as const) {
      const { sleeps, deps } = fakeDeps();
      let calls = 0;
      await expect(
        withRetry(
          async () => {
            calls++;
            throw new CallError(kind, kind);
          },
          policy,
          deps,
        ),
      ).rejects.toMatchObject({ kind });
      expect(calls).toBe(1);
      expect(sleeps).toEqual([]);
    }
  });

  it("stops waiting when the run is aborted", async () => {
    const controller = new AbortController();
    const { deps } = fakeDeps();
    let calls = 0;
    const p = withRetry(
      async () => {
        calls++;
        controller.abort();
        throw new CallError("retryable", "HTTP 500");
      },
      policy,
      deps,
      { signal: controller.signal },
    );
    await expect(p).rejects.toMatchObject({ kind: "aborted" });
    expect(calls).toBe(1);
  });
});

describe("classifying what the OpenAI client throws", () => {
  const headers = (h: Record<string, string> = {}) => new Headers(h);

  it("rate limits and server errors are retried, with Retry-After in milliseconds", () => {
    const e = classifyError(
      APIError.generate(
        429,
        { error: { message: "slow down", type: "rate_limit" } },
        undefined,
        headers({ "retry-after": "2" }),
      ),
      "model",
    );
    expect(e).toMatchObject({ kind: "retryable", retryAfterMs: 2000 });
    expect(e.message).toBe("model: HTTP 429 (rate_limit)");
    expect(classifyError(APIError.generate(500, undefined, undefined, headers()), "judge")).toMatchObject({
      kind: "retryable",
    });
    expect(classifyError(APIError.generate(503, undefined, undefined, headers()), "judge")).toMatchObject({
      kind: "retryable",
    });
    expect(classifyError(new APIConnectionTimeoutError(), "model")).toMatchObject({
      kind: "retryable",
      message: "model: timed out",
    });
  });

  it("a refused connection, an unknown host or bad credentials stop the run", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
    const e = classifyError(
      new APIConnectionError({ cause: new TypeError("fetch failed", { cause: refused }) }),
      "model",
    );
    expect(e).toMatchObject({ kind: "fatal", message: "model: cannot connect (ECONNREFUSED)" });
    const unknown = Object.assign(new Error("getaddrinfo ENOTFOUND x"), { code: "ENOTFOUND" });
    expect(classifyError(new APIConnectionError({ cause: unknown }), "model").kind).toBe("fatal");
    for (const status of [401, 403, 404]) {
      expect(classifyError(APIError.generate(status, undefined, undefined, headers()), "model").kind).toBe("fatal");
    }
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    expect(classifyError(new APIConnectionError({ cause: reset }), "model")).toMatchObject({ kind: "retryable" });
  });

  it("a rejected request (400, 413, 422) is recorded, not retried; never with the response body", () => {
    const e = classifyError(
      APIError.generate(400, { error: { message: "secret note text echoed back" } }, undefined, headers()),
      "model",
    );
    expect(e.kind).toBe("rejected");
    expect(e.message).not.toMatch(/note text/);
    expect(classifyError(APIError.generate(422, undefined, undefined, headers()), "model").kind).toBe("rejected");
  });

  it("a body that is not JSON is malformed; an abort is an abort", () => {
    expect(classifyError(new SyntaxError("Unexpected token <"), "model").kind).toBe("malformed");
    expect(classifyError(new APIUserAbortError(), "model").kind).toBe("aborted");
  });

  it("reads the text of a chat completion, and tells empty from malformed answers", () => {
    const ok = { choices: [{ message: { role: "assistant", content: "F32.1" } }] };
    expect(completionText(ok, "model")).toBe("F32.1");
    const kind = (v: unknown) => {
      try {
        completionText(v, "model");
        return "ok";
      } catch (e) {
        return (e as CallError).kind;
      }
    };
    expect(kind({ choices: [{ message: { content: "  " } }] })).toBe("empty");
    expect(kind({ choices: [{ message: { content: null } }] })).toBe("empty");
    expect(kind({ choices: [] })).toBe("empty");
    expect(kind({})).toBe("malformed");
    expect(kind("<html>")).toBe("malformed");
    expect(kind({ choices: [{ message: { content: 42 } }] })).toBe("malformed");
  });
});

describe("the pool", () => {
  it("keeps at most `concurrency` items in flight and does them all", async () => {
    let inFlight = 0;
    let peak = 0;
    const done: number[] = [];
    await runPool(
      Array.from({ length: 20 }, (_, i) => i),
      3,
      async (i) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setTimeout(r, 1 + (i % 3)));
        inFlight--;
        done.push(i);
      },
    );
    expect(peak).toBe(3);
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it("stops taking items after an error or a stop, waits for the others, and rethrows", async () => {
    const started: number[] = [];
    await expect(
      runPool([1, 2, 3, 4, 5, 6], 2, async (i) => {
        started.push(i);
        if (i === 2) throw new Error("boom");
        await new Promise((r) => setTimeout(r, 5));
      }),
    ).rejects.toThrow("boom");
    expect(started).toEqual([1, 2]);
    let stop = false;
    const seen: number[] = [];
    await runPool(
      [1, 2, 3],
      1,
      async (i) => {
        seen.push(i);
        stop = true;
      },
      () => stop,
    );
    expect(seen).toEqual([1]);
  });
});

/**
 * Runs chains of unit-time calls in lock-step rounds: every call started in a round answers at the round's end.
 * Returns the rounds used and the largest number of calls in flight and of chains open at once.
 */
async function roundsFor(lengths: number[], concurrency: number, openLimit: number) {
  const chains = lengths.map((length, id) => ({ id, left: length }));
  let waiting: (() => void)[] = [];
  let peakInFlight = 0;
  const opened = new Set<number>();
  const finished = new Set<number>();
  let peakOpen = 0;
  const order: number[] = [];
  const run = runChains(
    chains,
    { concurrency, openLimit, before: (a, b) => a.left > b.left || (a.left === b.left && a.id < b.id) },
    async (chain) => {
      opened.add(chain.id);
      peakOpen = Math.max(peakOpen, opened.size - finished.size);
      order.push(chain.id);
      await new Promise<void>((resolve) => waiting.push(resolve));
      chain.left--;
      if (chain.left === 0) finished.add(chain.id);
      return chain.left > 0;
    },
  );
  let rounds = 0;
  let done = false;
  void run.then(() => (done = true));
  for (;;) {
    // Let every slot that can start do so, then end the round.
    for (let i = 0; i < 5; i++) await Promise.resolve();
    if (done) break;
    peakInFlight = Math.max(peakInFlight, waiting.length);
    const now = waiting;
    waiting = [];
    rounds++;
    now.forEach((resolve) => resolve());
  }
  await run;
  return { rounds, peakInFlight, peakOpen, order };
}

describe("chains scheduled call by call", () => {
  it("fills the last rounds by serving first the chain with the most calls left", async () => {
    // Chains of 3, 3, 2, 2, 2 calls on 2 slots: 12 calls, so no schedule beats 6 rounds. One slot per chain (runPool's
    // way, longest first) takes 7: 3+2+2 on one slot. Highest level first, by hand: (A,B) (A,B) (C,D) (E,A) (B,C) (D,E).
    const open = await roundsFor([3, 3, 2, 2, 2], 2, 8);
    expect(open.rounds).toBe(6);
    expect(open.peakInFlight).toBe(2);
    expect(open.order).toEqual([0, 1, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4]);
    // With only as many chains open as slots it is one slot per chain again.
    const perSlot = await roundsFor([3, 3, 2, 2, 2], 2, 2);
    expect(perSlot.rounds).toBe(7);
    expect(perSlot.peakOpen).toBe(2);
  });

  it("keeps at most openLimit chains open and concurrency calls in flight, and finishes every chain", async () => {
    const lengths = Array.from({ length: 40 }, (_, i) => 1 + ((i * 7) % 5));
    const r = await roundsFor(lengths, 4, 6);
    expect(r.peakInFlight).toBe(4);
    expect(r.peakOpen).toBeLessThanOrEqual(6);
    expect(r.order.length).toBe(lengths.reduce((a, b) => a + b, 0));
  });

  it("stops taking calls after an error, waits for those in flight, and rethrows", async () => {
    const started: number[] = [];
    let settled = 0;
    await expect(
      runChains([1, 2, 3, 4], { concurrency: 2, openLimit: 4, before: (a, b) => a < b }, async (i) => {
        started.push(i);
        if (i === 2) throw new Error("boom");
        await new Promise((r) => setTimeout(r, 5));
        settled++;
        return true;
      }),
    ).rejects.toThrow("boom");
    expect(started).toEqual([1, 2]);
    expect(settled).toBe(1);
  });
});

describe("progress", () => {
  it("shows the bar, the rate and the ETA", () => {
    // 50 of 200 done, 20 of them in 10 s this session: 150 left at 2/s → 75 s
    const line = progressLine({ finished: 50, total: 200, calls: 80, retries: 2, failures: 0 }, 30, 10, 10);
    expect(line).toBe("[███░░░░░░░] 50/200 trajectories 25% · 8.0 calls/s · ETA 1m15s · 2 retries");
    expect(formatDuration(3725)).toBe("1h02m");
    expect(formatDuration(Infinity)).toBe("?");
  });

  it("redraws in place on a terminal, prints plain lines every 10% otherwise", () => {
    let t = 0;
    const out: string[] = [];
    const plain = createProgress(
      (s) => out.push(s),
      false,
      () => t,
    );
    plain.start({ finished: 0, total: 100, calls: 0, retries: 0, failures: 0 });
    for (let i = 1; i <= 100; i++) {
      t += 10;
      plain.update({ finished: i, total: 100, calls: 2 * i, retries: 0, failures: 0 });
    }
    plain.finish({ finished: 100, total: 100, calls: 200, retries: 0, failures: 0 });
    expect(out).toHaveLength(11);
    expect(out.every((l) => l.startsWith("progress: ") && l.endsWith("\n"))).toBe(true);
    const tty: string[] = [];
    const bar = createProgress(
      (s) => tty.push(s),
      true,
      () => t,
    );
    bar.start({ finished: 0, total: 10, calls: 0, retries: 0, failures: 0 });
    bar.finish({ finished: 10, total: 10, calls: 20, retries: 0, failures: 0 });
    expect(tty[0].startsWith("\r\x1b[2K[")).toBe(true);
    expect(tty[tty.length - 1]).toBe("\n");
  });
});
