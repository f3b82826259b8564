/**
 * What a job page shows of a running evaluation job (docs/evaluation.md, "Running from the browser";
 * app/platform/job-progress.ts:jobProgressView): the counts as stored, the rate over the job's time, and the time
 * left at the current step's pace — none before anything of the step is done, none once the job has ended.
 */
import { describe, expect, it } from "vitest";
import { jobProgressView } from "../../app/platform/job-progress";

const base = { status: "running", progressDone: 0, progressTotal: 0, detail: null, startedAt: 0, finishedAt: null };

describe("jobProgressView", () => {
  it("reads the stored counts and computes the rate and the time left of the step", () => {
    const v = jobProgressView(
      {
        ...base,
        progressDone: 30,
        progressTotal: 100,
        // The step started at 10 s with 10 done (an earlier job's work): 20 done in 20 s, 70 left.
        detail: { step: "items, seed 0", calls: 60, retries: 2, failures: 1, stepStartDone: 10, stepStartedAt: 10_000 },
      },
      30_000,
    );
    expect(v).toEqual({
      step: "items, seed 0",
      done: 30,
      total: 100,
      calls: 60,
      retries: 2,
      failures: 1,
      rate: 2,
      secondsLeft: 70,
    });
  });

  it("has no rate before the first call and no time left before the step's first unit", () => {
    const v = jobProgressView(
      { ...base, progressTotal: 9, detail: { step: "verdicts", calls: 0, stepStartedAt: 0 } },
      5_000,
    );
    expect(v.rate).toBeNull();
    expect(v.secondsLeft).toBeNull();
    expect(jobProgressView({ ...base, status: "queued", startedAt: null }, 5_000)).toMatchObject({
      step: null,
      calls: 0,
      rate: null,
      secondsLeft: null,
    });
  });

  it("measures an ended job's rate up to its end and gives no time left", () => {
    const v = jobProgressView(
      {
        ...base,
        status: "cancelled",
        progressDone: 5,
        progressTotal: 36,
        finishedAt: 10_000,
        detail: { step: "items, seed 0", calls: 5, stepStartDone: 0, stepStartedAt: 0 },
      },
      1_000_000,
    );
    expect(v.rate).toBe(0.5);
    expect(v.secondsLeft).toBeNull();
  });
});
