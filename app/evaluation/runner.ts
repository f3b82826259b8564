/**
 * The evaluation runner (docs/evaluation.md): runs every (strategy, seed) of one model over the cases, through a
 * bounded pool of concurrent calls, writing the reference's run folders (docs/formats.md#run-folders) and resuming unfinished ones.
 *
 * Durability: each answered call is queued for the run's step log before it is applied (written at the end of the
 * event loop's turn, and always before the trajectory's own record: RunFolderWriter.appendEvent), and a trajectory's record
 * is appended to trajectories.jsonl as soon as it stops. A rerun replays the step log, so a kill loses only the calls
 * in flight. A dead endpoint (connection refused, unknown host, 401/403/404, or retries used up on rate limits,
 * server errors or malformed answers) stops the run, keeping everything finished.
 */
import type { ProviderSettings } from "./providers";
import { setMaxListeners } from "node:events";
import { join } from "node:path";
import {
  JUDGE_MAX_TOKENS,
  JUDGE_SEED,
  orderCases,
  Trajectory,
  type PromptSet,
  type RunnerCase,
  type RunSettings,
  type StoppingReason,
  type Strategy,
} from "./domain/runner-protocol";
import {
  buildTimingSummary,
  runFolderName,
  runFolderPrefix,
  serializeTiming,
  stepEventLine,
  trajectoryLine,
  type StepEvent,
} from "./domain/runner-records";
import { CallError, type ChatEndpoint, type ChatRequest } from "../model-calls/client";
import { runChains } from "../model-calls/pool";
import type { ProgressSink, ProgressState } from "../model-calls/progress";
import { RetriesExhausted, withRetry, type RetryDeps, type RetryPolicy } from "../model-calls/retry";
import {
  applyRepairs,
  findRunFolder,
  openExistingRun,
  resumeMismatches,
  RunFolderWriter,
  TIMING,
  type EndpointRecord,
  type ExistingRun,
  type RunJson,
  type SessionRecord,
} from "./run-folder";
import { pushAll } from "../stats/extremes";

export interface RunnerConfig {
  cases: RunnerCase[];
  strategies: Strategy[];
  seeds: number[];
  model: EndpointRecord;
  judge: EndpointRecord;
  temperature: number | null;
  topP: number | null;
  maxTokens: number;
  maxTokensParam: "max_tokens" | "max_completion_tokens";
  /**
   * A reference provider preset (providers.ts): temperature/topP above are what is sent; the seed is sent only when
   * the preset does, and the trajectories record the preset's values.
   */
  provider?: ProviderSettings;
  concurrency: number;
  outDir: string;
  limit: number | null;
  retry: RetryPolicy;
  timeoutMs: number;
  inputs: RunJson["inputs"];
}

export interface RunnerDeps {
  modelEndpoint: ChatEndpoint;
  judgeEndpoint: ChatEndpoint;
  prompts: PromptSet;
  /** sha256 per prompt file of each strategy (run.json). */
  promptHashes: (strategy: Strategy) => Record<string, string>;
  version: string;
  /** Monotonic milliseconds. */
  now: () => number;
  /** Local wall-clock time, for folder names and session records. */
  wallClock: () => Date;
  retry: RetryDeps;
  /** Aborting it interrupts the run as a dead endpoint would, keeping what finished. */
  signal?: AbortSignal;
  progress?: ProgressSink;
  /** Warnings and notes for the operator (counts and error codes only, never case content). */
  log?: (line: string) => void;
}

export interface RunFolderSummary {
  dir: string;
  strategy: Strategy;
  seed: number;
  cases: number;
  finished: number;
  finishedNow: number;
  complete: boolean;
  /** Already complete before this session: nothing was called. */
  skipped: boolean;
  stoppingReasons: Partial<Record<StoppingReason, number>>;
}

export interface RunnerResult {
  status: "complete" | "stopped" | "interrupted";
  message: string | null;
  folders: RunFolderSummary[];
  calls: number;
  retries: number;
  failures: number;
  wallSeconds: number;
}

/** A configuration error found before any call (e.g. an unfinished run made with other parameters). */
export class RunnerConfigError extends Error {}

interface Unit {
  dir: string;
  /** Calls answered and retries made in this session. */
  calls: number;
  retries: number;
  /** Tokens the servers reported for this session's calls; null while none reported any. */
  tokens: number | null;
  strategy: Strategy;
  seed: number;
  settings: RunSettings;
  writer: RunFolderWriter | null;
  runJson: RunJson;
  cases: number;
  /** Ids of this session's case list still to finish. */
  open: Set<string>;
  finishedIds: Set<string>;
  finishedNow: number;
  /** deps.now() when this session's first call of the unit started: its own clock (docs/safe-psych.md). */
  startedAtMs: number | null;
  /** Seconds of run time (over all sessions) at which each trajectory stopped. */
  times: Map<string, number>;
  offsetSeconds: number;
  completedAtSeconds: number | null;
  reasons: Partial<Record<StoppingReason, number>>;
}

/** Cases open at once per slot of concurrency: enough for the last rounds to stay full (docs/evaluation.md, "Scale"). */
const OPEN_CASES_PER_SLOT = 4;

interface Job {
  unit: Unit;
  trajectory: Trajectory;
}

export async function runEvaluation(config: RunnerConfig, deps: RunnerDeps): Promise<RunnerResult> {
  const sessionStart = deps.now();
  const startedAt = deps.wallClock();
  const log = deps.log ?? (() => {});
  const controller = new AbortController();
  // Every call in flight and every back-off listens to the run's signal (each removes its listener when done).
  setMaxListeners(Math.max(10, 4 * config.concurrency), controller.signal);
  const halted: { status: "stopped" | "interrupted"; message: string }[] = [];
  const halt = (status: "stopped" | "interrupted", message: string) => {
    if (halted.length === 0) halted.push({ status, message });
    controller.abort();
  };
  const onExternalAbort = () => halt("interrupted", "interrupted");

  const counters = { calls: 0, retries: 0, failures: 0 };
  // Each run folder's own time: from its first call in this session, not from the session's start, so that
  // `--strategy all` gives each timing.json the strategy's own elapsed time (docs/safe-psych.md, "Runner timing").
  const clock: UnitClock = (unit) => unit.offsetSeconds + (deps.now() - (unit.startedAtMs ?? deps.now())) / 1000;

  const units: Unit[] = [];
  const jobs: Job[] = [];
  try {
    for (const strategy of config.strategies) {
      for (const seed of config.seeds) {
        const { unit, existing } = prepareUnit(config, deps, strategy, seed, startedAt, log);
        units.push(unit);
        if (unit.writer) pushAll(jobs, replay(unit, existing, config, deps.prompts, log));
      }
    }
  } catch (e) {
    for (const u of units) u.writer?.close();
    throw e;
  }
  if (deps.signal?.aborted) onExternalAbort();
  deps.signal?.addEventListener("abort", onExternalAbort, { once: true });

  // One run folder after another (its own elapsed time), and within one the longest possible chain first, so that
  // the pool does not end waiting on one long trajectory.
  const unitOrder = new Map(units.map((u, i) => [u, i]));
  jobs.sort(
    (a, b) =>
      unitOrder.get(a.unit)! - unitOrder.get(b.unit)! || b.trajectory.remainingSteps - a.trajectory.remainingSteps,
  );
  const admission = new Map(jobs.map((j, i) => [j, i]));
  // The next call goes to the open case of the earliest run folder with the most calls possibly left (ties: the case
  // admitted first), so that the last rounds stay full (docs/evaluation.md, "Scale").
  const before = (a: Job, b: Job) => {
    const unit = unitOrder.get(a.unit)! - unitOrder.get(b.unit)!;
    if (unit !== 0) return unit < 0;
    const left = b.trajectory.remainingCalls - a.trajectory.remainingCalls;
    return left !== 0 ? left < 0 : admission.get(a)! < admission.get(b)!;
  };

  const total = units.reduce((n, u) => n + u.cases, 0);
  const state = (): ProgressState => ({
    finished: units.reduce((n, u) => n + (u.cases - u.open.size), 0),
    total,
    ...counters,
  });
  deps.progress?.start(state());

  /** One call of a case; true when the case has another. */
  const step = async ({ unit, trajectory }: Job): Promise<boolean> => {
    unit.startedAtMs ??= deps.now();
    const call = trajectory.nextCall();
    if (call === null || controller.signal.aborted) return false;
    const isModel = call.kind === "model";
    const request: ChatRequest = isModel
      ? {
          messages: call.messages,
          temperature: config.temperature,
          topP: config.topP,
          maxTokens: config.maxTokens,
          seed: config.provider && !config.provider.sent.seed ? null : unit.seed,
        }
      : { messages: call.messages, temperature: 0, topP: 1, maxTokens: JUDGE_MAX_TOKENS, seed: JUDGE_SEED };
    const endpoint = isModel ? deps.modelEndpoint : deps.judgeEndpoint;
    let output: string | null = null;
    let error: string | null = null;
    try {
      const usage = (tokens: number) => {
        unit.tokens = (unit.tokens ?? 0) + tokens;
      };
      output = await withRetry(() => callOnce(endpoint, request, controller.signal, usage), config.retry, deps.retry, {
        signal: controller.signal,
        onRetry: () => {
          counters.retries++;
          unit.retries++;
          deps.progress?.update(state());
        },
      });
    } catch (e) {
      if (controller.signal.aborted || (e instanceof CallError && e.kind === "aborted")) return false;
      if (e instanceof RetriesExhausted && e.last.kind === "empty") {
        error = e.message;
      } else if (e instanceof CallError && e.kind === "rejected") {
        error = e.message;
        log(`warning: ${e.message}; recorded as a failed call (case ${trajectory.sampleId}, step ${call.step})`);
      } else if (e instanceof RetriesExhausted || e instanceof CallError) {
        halt("stopped", e.message);
        return false;
      } else {
        throw e;
      }
      counters.failures++;
    }
    counters.calls++;
    unit.calls++;
    const event: StepEvent = {
      sample_id: trajectory.sampleId,
      step: call.step,
      call: call.kind,
      output: isModel ? (output ?? "") : output,
      error,
      seconds: clock(unit),
    };
    unit.writer!.appendEvent(stepEventLine(event));
    applyEvent(trajectory, event);
    if (!trajectory.finished) {
      // The case's next call goes out only after this answer's line is written (the writer flushes at the end of the
      // event loop's turn), so an answer not yet in the step log never has a successor in flight: a kill loses at
      // most one call per slot (docs/evaluation.md, "Scale").
      await new Promise<void>((resolve) => setImmediate(resolve));
      return true;
    }
    finishTrajectory(unit, trajectory, clock(unit));
    deps.progress?.update(state());
    return false;
  };

  try {
    await runChains(
      jobs,
      {
        concurrency: config.concurrency,
        // With one slot the order of calls cannot change the wall time: cases then run one after another.
        openLimit: config.concurrency === 1 ? 1 : OPEN_CASES_PER_SLOT * config.concurrency,
        before,
      },
      step,
      () => controller.signal.aborted,
    );
  } finally {
    deps.signal?.removeEventListener("abort", onExternalAbort);
    const endedAt = deps.wallClock().toISOString();
    for (const unit of units) {
      if (!unit.writer) continue;
      const complete = unit.open.size === 0;
      const session = unit.runJson.sessions[unit.runJson.sessions.length - 1];
      Object.assign(session, {
        ended_at: endedAt,
        status: complete ? "complete" : (halted[0]?.status ?? "stopped"),
        message: complete ? null : (halted[0]?.message ?? "stopped by an error"),
        calls: unit.calls,
        retries: unit.retries,
        tokens: unit.tokens,
        finished_trajectories: unit.finishedNow,
      });
      unit.runJson.status = complete ? "complete" : "incomplete";
      unit.runJson.finished_trajectories = unit.finishedIds.size;
      if (complete) writeTiming(unit, unit.completedAtSeconds ?? clock(unit));
      unit.writer.writeRunJson(unit.runJson);
      unit.writer.close();
    }
    deps.progress?.finish(state());
  }
  return {
    status: halted[0]?.status ?? "complete",
    message: halted[0]?.message ?? null,
    folders: units.map((u) => ({
      dir: u.dir,
      strategy: u.strategy,
      seed: u.seed,
      cases: u.cases,
      finished: u.cases - u.open.size,
      finishedNow: u.finishedNow,
      complete: u.open.size === 0,
      skipped: u.writer === null,
      stoppingReasons: u.reasons,
    })),
    ...counters,
    wallSeconds: (deps.now() - sessionStart) / 1000,
  };
}

type UnitClock = (unit: Unit) => number;

/**
 * One call under the run's signal. The chat client removes its listener from the signal when the call ends
 * (keep-alive-fetch.server.ts `postOnPool`), so the run's signal is handed over as it is: a controller of its own per
 * call cost an AbortController and a listener more per call (docs/evaluation.md, "Scale").
 */
export function callOnce(
  endpoint: ChatEndpoint,
  request: ChatRequest,
  run: AbortSignal,
  usage?: (tokens: number) => void,
): Promise<string> {
  return endpoint.complete(request, run, usage);
}

function applyEvent(trajectory: Trajectory, event: StepEvent): void {
  const call = trajectory.nextCall();
  if (call === null || call.kind !== event.call || call.step !== event.step) {
    throw new RunnerConfigError(
      `the step log does not match case ${event.sample_id}: it holds a ${event.call} call at step ${event.step}, ` +
        `but the case expects ${call ? `a ${call.kind} call at step ${call.step}` : "no call"}`,
    );
  }
  if (event.call === "model") trajectory.applyModelOutput(event.output ?? "");
  else trajectory.applyJudgeOutcome(event.output === null ? { ok: false } : { ok: true, raw: event.output });
}

function finishTrajectory(unit: Unit, trajectory: Trajectory, seconds: number, replayed = false): void {
  const record = trajectory.toRecord(unit.settings);
  unit.writer!.appendTrajectory(trajectoryLine(record));
  unit.finishedIds.add(trajectory.sampleId);
  unit.open.delete(trajectory.sampleId);
  unit.times.set(trajectory.sampleId, seconds);
  if (!replayed) unit.finishedNow++;
  unit.reasons[record.stopping_reason] = (unit.reasons[record.stopping_reason] ?? 0) + 1;
  if (unit.open.size === 0) unit.completedAtSeconds = seconds;
}

/** Rebuilds the unfinished trajectories of a resumed run from its step log; returns the work left. */
function replay(
  unit: Unit,
  existing: ExistingRun | null,
  config: RunnerConfig,
  prompts: PromptSet,
  log: (line: string) => void,
): Job[] {
  const pending = new Map<string, Trajectory>();
  for (const c of orderCases(config.cases, unit.seed, config.limit)) {
    if (!unit.finishedIds.has(c.sampleId)) pending.set(c.sampleId, new Trajectory(c, unit.strategy, prompts));
  }
  const lastSeconds = new Map<string, number>();
  for (const event of existing?.events ?? []) {
    lastSeconds.set(event.sample_id, event.seconds);
    const trajectory = pending.get(event.sample_id);
    if (trajectory && !trajectory.finished) applyEvent(trajectory, event);
  }
  for (const id of unit.finishedIds) unit.times.set(id, lastSeconds.get(id) ?? unit.offsetSeconds);
  // A trajectory whose last call was logged but whose record was not written before the process stopped.
  const replayed = [...pending.values()].filter((t) => t.finished);
  replayed.sort((a, b) => (lastSeconds.get(a.sampleId) ?? 0) - (lastSeconds.get(b.sampleId) ?? 0));
  for (const t of replayed) finishTrajectory(unit, t, lastSeconds.get(t.sampleId) ?? unit.offsetSeconds, true);
  if (replayed.length > 0) log(`${unit.dir}: wrote ${replayed.length} trajectories completed in the step log`);
  const midway = [...pending.values()].filter(
    (t) => !t.finished && t.steps.length + (t.nextCall()?.kind === "judge" ? 1 : 0) > 0,
  );
  if (midway.length > 0) log(`${unit.dir}: resuming ${midway.length} trajectories where the step log left them`);
  return [...pending.values()].filter((t) => !t.finished).map((trajectory) => ({ unit, trajectory }));
}

function writeTiming(unit: Unit, totalSeconds: number): void {
  const times = [...unit.times.entries()]
    .map(([sample_id, seconds]) => ({ sample_id, seconds }))
    .sort((a, b) => a.seconds - b.seconds);
  unit.writer!.writeFile(TIMING, serializeTiming(buildTimingSummary(totalSeconds, unit.finishedIds.size, times)));
}

function prepareUnit(
  config: RunnerConfig,
  deps: RunnerDeps,
  strategy: Strategy,
  seed: number,
  startedAt: Date,
  log: (line: string) => void,
): { unit: Unit; existing: ExistingRun | null } {
  const cases = orderCases(config.cases, seed, config.limit);
  const session: SessionRecord = {
    started_at: startedAt.toISOString(),
    ended_at: null,
    status: "running",
    message: null,
    calls: 0,
    retries: 0,
    tokens: null,
    finished_trajectories: 0,
  };
  const wanted: RunJson = {
    format: "concord-run/1",
    software: { name: "concord", version: deps.version },
    model: config.model,
    judge: config.judge,
    strategy,
    seed,
    judge_seed: JUDGE_SEED,
    decoding: {
      temperature: config.temperature,
      top_p: config.topP,
      max_tokens: config.maxTokens,
      max_tokens_param: config.maxTokensParam,
    },
    ...(config.provider ? { provider: config.provider.record } : {}),
    judge_decoding: { temperature: 0, top_p: 1, max_tokens: JUDGE_MAX_TOKENS, seed: JUDGE_SEED },
    prompts: deps.promptHashes(strategy),
    inputs: config.inputs,
    limit: config.limit,
    num_samples: cases.length,
    concurrency: config.concurrency,
    retry: {
      max_retries: config.retry.maxRetries,
      base_delay_seconds: config.retry.baseDelayMs / 1000,
      max_delay_seconds: config.retry.maxDelayMs / 1000,
      timeout_seconds: config.timeoutMs / 1000,
    },
    status: "running",
    finished_trajectories: 0,
    sessions: [session],
  };
  const base = {
    strategy,
    seed,
    settings: {
      modelKey: config.model.key,
      judgeKey: config.judge.key,
      strategy,
      seed,
      temperature: config.provider ? config.provider.recorded.temperature : config.temperature,
      topP: config.provider ? config.provider.recorded.topP : config.topP,
      maxTokens: config.maxTokens,
    },
    cases: cases.length,
    calls: 0,
    retries: 0,
    tokens: null,
    finishedNow: 0,
    startedAtMs: null,
    times: new Map<string, number>(),
    completedAtSeconds: null,
    reasons: {},
  };
  const prefix = runFolderPrefix(config.model.key, strategy, config.judge.key, seed);
  const existingDir = findRunFolder(config.outDir, prefix);
  if (existingDir === null) {
    const dir = join(config.outDir, runFolderName(config.model.key, strategy, config.judge.key, seed, startedAt));
    const writer = new RunFolderWriter(dir);
    writer.writeRunJson(wanted);
    const open = new Set(cases.map((c) => c.sampleId));
    return {
      unit: { ...base, dir, writer, runJson: wanted, open, finishedIds: new Set(), offsetSeconds: 0 },
      existing: null,
    };
  }
  let existing: ExistingRun;
  try {
    existing = openExistingRun(existingDir);
  } catch (e) {
    throw new RunnerConfigError((e as Error).message);
  }
  const mismatches = resumeMismatches(existing.runJson, wanted);
  if (mismatches.length > 0) {
    throw new RunnerConfigError(
      `${existingDir} holds a run of ${prefix} made with other parameters (${mismatches.join("; ")}). ` +
        `Use another --out folder, or move that run away.`,
    );
  }
  const finishedIds = new Set(existing.finished);
  const open = new Set(cases.map((c) => c.sampleId).filter((id) => !finishedIds.has(id)));
  const offsetSeconds = existing.events.reduce((m, e) => Math.max(m, e.seconds), 0);
  const unitBase = { ...base, dir: existingDir, open, finishedIds, offsetSeconds };
  if (open.size === 0 && existing.runJson.status === "complete" && existing.repairs.length === 0) {
    return { unit: { ...unitBase, writer: null, runJson: existing.runJson }, existing };
  }
  // A session still "running" on disk ended without closing the run: the process was killed.
  const previous = (existing.runJson.sessions ?? []).map((s) =>
    s.status === "running"
      ? { ...s, status: "interrupted" as const, message: "the process ended without closing the run" }
      : s,
  );
  const runJson: RunJson = { ...wanted, sessions: [...previous, session] };
  applyRepairs(existing.repairs);
  for (const repair of existing.repairs) if (repair.note) log(`${existingDir}: ${repair.note}`);
  const writer = new RunFolderWriter(existingDir);
  writer.writeRunJson(runJson);
  return { unit: { ...unitBase, writer, runJson }, existing };
}
