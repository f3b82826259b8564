/**
 * What a job page shows of a running job's progress (docs/evaluation.md, "Running from the browser"), computed from
 * its stored row so the server's page and each poll agree: done of total in the current step, calls answered, retries
 * and failed calls, the rate (calls a second since the job started) and the time left (the step's remaining units at
 * the step's pace so far). Pure: the clock is passed in.
 */
export interface JobProgressRow {
  status: string;
  progressDone: number;
  progressTotal: number;
  detail: Record<string, unknown> | null;
  startedAt: number | null;
  finishedAt: number | null;
}

export interface JobProgressView {
  step: string | null;
  done: number;
  total: number;
  calls: number;
  retries: number;
  failures: number;
  /** Calls a second over the job's time so far; null before the first call. */
  rate: number | null;
  /** Seconds left in this step at its pace so far; null when nothing of it is done yet or the job has ended. */
  secondsLeft: number | null;
}

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);

export function jobProgressView(job: JobProgressRow, now: number): JobProgressView {
  const d = job.detail ?? {};
  const calls = num(d.calls);
  const end = job.finishedAt ?? now;
  const elapsed = job.startedAt === null ? 0 : Math.max(0, end - job.startedAt) / 1000;
  const running = job.status === "running";
  const stepStartDone = num(d.stepStartDone);
  const stepElapsed = Math.max(0, now - (num(d.stepStartedAt) || now)) / 1000;
  const doneNow = job.progressDone - stepStartDone;
  return {
    step: typeof d.step === "string" ? d.step : null,
    done: job.progressDone,
    total: job.progressTotal,
    calls,
    retries: num(d.retries),
    failures: num(d.failures),
    rate: calls > 0 && elapsed > 0 ? calls / elapsed : null,
    secondsLeft:
      running && doneNow > 0 && stepElapsed > 0
        ? ((job.progressTotal - job.progressDone) * stepElapsed) / doneNow
        : null,
  };
}
