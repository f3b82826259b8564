/**
 * Run folders on disk (docs/formats.md#run-folders): `trajectories.jsonl`, `timing.json`, `_tmp/` and Concord's `run.json`.
 * Both JSON Lines files are append-only; a resumed run repairs a last line torn by a kill and finds where it stopped.
 * They are logs, the one exception to the output layer (docs/reliability.md, "Atomic files"): each answer must be on
 * disk as soon as it arrives, so that a kill loses at most the calls in flight, which a whole-file rename cannot do.
 * The JSON files (run.json, timing.json) are final files and go through the layer.
 */
import type { ProviderRecord } from "./providers";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  appendFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../platform/output-files.server";
import { isRunFolderOf, isStepEvent, readJsonLines, STEP_LOG, type StepEvent } from "./domain/runner-records";
import type { Strategy } from "./domain/runner-protocol";

export const TRAJECTORIES = "trajectories.jsonl";
export const TIMING = "timing.json";
export const RUN_JSON = "run.json";

export interface EndpointRecord {
  /** The model name sent to the server. */
  name: string;
  /** The key in records and folder names. */
  key: string;
  /** Without credentials. */
  base_url: string;
}

export interface SessionRecord {
  started_at: string;
  ended_at: string | null;
  status: "running" | "complete" | "stopped" | "interrupted";
  message: string | null;
  calls: number;
  retries: number;
  /**
   * Tokens of this session's model and judge calls as the servers reported them (`usage.total_tokens`); null when no
   * call reported any. Absent in run.json files written before Concord recorded it.
   */
  tokens?: number | null;
  finished_trajectories: number;
}

/** Concord's record of a run: everything needed to repeat or resume it. */
export interface RunJson {
  format: "concord-run/1";
  software: { name: "concord"; version: string };
  model: EndpointRecord;
  judge: EndpointRecord;
  strategy: Strategy;
  seed: number;
  judge_seed: number;
  decoding: { temperature: number | null; top_p: number | null; max_tokens: number; max_tokens_param: string };
  /** The reference provider preset the run imitates, when `--provider` was given (providers.ts). */
  provider?: ProviderRecord;
  judge_decoding: { temperature: 0; top_p: 1; max_tokens: number; seed: number };
  /** sha256 of each prompt file the run uses (docs/evaluation.md#strategies; test/unit/reference-data.test.ts pins them). */
  prompts: Record<string, string>;
  inputs: { samples: { path: string; sha256: string }; gold: { path: string; sha256: string } | null };
  limit: number | null;
  num_samples: number;
  concurrency: number;
  retry: { max_retries: number; base_delay_seconds: number; max_delay_seconds: number; timeout_seconds: number };
  status: "running" | "complete" | "incomplete";
  finished_trajectories: number;
  sessions: SessionRecord[];
}

/** Fields that must match for a run folder to be resumed: anything that changes what a call would have been. */
export function resumeMismatches(existing: RunJson, wanted: RunJson): string[] {
  const fields: [string, unknown, unknown][] = [
    ["model name", existing.model?.name, wanted.model.name],
    ["judge model name", existing.judge?.name, wanted.judge.name],
    ["decoding", existing.decoding, wanted.decoding],
    ["provider", existing.provider ?? null, wanted.provider ?? null],
    ["judge decoding", existing.judge_decoding, wanted.judge_decoding],
    ["prompt files", existing.prompts, wanted.prompts],
    ["samples file content", existing.inputs?.samples?.sha256, wanted.inputs.samples.sha256],
  ];
  return fields
    .filter(([, a, b]) => JSON.stringify(a) !== JSON.stringify(b))
    .map(([name, a, b]) => `${name}: ${JSON.stringify(a)} then, ${JSON.stringify(b)} now`);
}

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return url;
  }
}

/** The newest folder of `outDir` named `<prefix>_<YYYYMMDD>_<HHMMSS>`, or null. */
export function findRunFolder(outDir: string, prefix: string): string | null {
  if (!existsSync(outDir)) return null;
  const names = readdirSync(outDir)
    .filter((name) => isRunFolderOf(name, prefix) && statSync(join(outDir, name)).isDirectory())
    .sort();
  return names.length > 0 ? join(outDir, names[names.length - 1]) : null;
}

export interface Repair {
  path: string;
  /** Keep the file up to here (bytes). */
  truncateTo: number;
  appendNewline: boolean;
  /** For the log; empty when only a missing final newline is added. */
  note: string;
}

export interface ExistingRun {
  runJson: RunJson;
  /** Finished trajectories' ids, in file order. */
  finished: string[];
  events: StepEvent[];
  /** Torn last lines left by a kill, repaired by `applyRepairs` once the run is known to be resumed. */
  repairs: Repair[];
}

function loadLines(path: string, label: string, repairs: Repair[]): unknown[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  const lines = readJsonLines(text);
  if (lines.badLines.length > 0) {
    throw new Error(
      `${path}: line ${lines.badLines[0]} is not valid JSON; the file is damaged (not by an interrupted write)`,
    );
  }
  if (lines.tornTail !== "" || lines.missingNewline) {
    repairs.push({
      path,
      truncateTo: lines.validBytes,
      appendNewline: lines.missingNewline,
      note: lines.tornTail !== "" ? `${label}: removed an incomplete last line left by an interrupted write` : "",
    });
  }
  return lines.values;
}

export function applyRepairs(repairs: readonly Repair[]): void {
  for (const r of repairs) {
    truncateSync(r.path, r.truncateTo);
    if (r.appendNewline) appendFileSync(r.path, "\n");
  }
}

/** Reads a Concord run folder for resuming (changing nothing). Throws if it is not Concord's or is damaged. */
export function openExistingRun(dir: string): ExistingRun {
  const runJsonPath = join(dir, RUN_JSON);
  if (!existsSync(runJsonPath)) {
    throw new Error(`${dir} has no ${RUN_JSON}: it was not written by Concord's runner and cannot be resumed`);
  }
  const runJson = JSON.parse(readFileSync(runJsonPath, "utf8")) as RunJson;
  const repairs: Repair[] = [];
  const records = loadLines(join(dir, TRAJECTORIES), TRAJECTORIES, repairs);
  const finished: string[] = [];
  for (const r of records) {
    const id = (r as { sample_id?: unknown })?.sample_id;
    if (typeof id !== "string") throw new Error(`${join(dir, TRAJECTORIES)}: a record has no sample_id`);
    finished.push(id);
  }
  const events = loadLines(join(dir, STEP_LOG), STEP_LOG, repairs);
  const bad = events.findIndex((e) => !isStepEvent(e));
  if (bad >= 0) throw new Error(`${join(dir, STEP_LOG)}: record ${bad + 1} is not a step event`);
  return { runJson, finished, events: events as StepEvent[], repairs };
}

/** Appends to a run folder's JSON Lines files and rewrites its JSON files atomically. */
export class RunFolderWriter {
  private readonly trajectoriesFd: number;
  private readonly eventsFd: number;

  constructor(readonly dir: string) {
    mkdirSync(join(dir, "_tmp"), { recursive: true });
    this.trajectoriesFd = openSync(join(dir, TRAJECTORIES), "a");
    this.eventsFd = openSync(join(dir, STEP_LOG), "a");
  }

  /** Step-log lines not yet written: the answers of one turn of the event loop, written together. */
  private pending: string[] = [];
  private flushScheduled: NodeJS.Immediate | null = null;

  /**
   * Appends a line to the step log. Lines are written at the end of the current turn of the event loop, all the
   * answers that arrived in it in one write (at 128 calls in flight, one write per call was a system call per call);
   * before any trajectory line and on close, so the step log never lags behind trajectories.jsonl. A kill between
   * an answer and that write loses the answer, as it would a call still in flight: the rerun asks again.
   */
  appendEvent(line: string): void {
    this.pending.push(line);
    this.flushScheduled ??= setImmediate(() => this.flushEvents());
  }

  /** Writes the step-log lines waiting (appendEvent). */
  private flushEvents(): void {
    if (this.flushScheduled !== null) clearImmediate(this.flushScheduled);
    this.flushScheduled = null;
    if (this.pending.length === 0) return;
    const text = this.pending.length === 1 ? this.pending[0]! : this.pending.join("");
    this.pending = [];
    writeSync(this.eventsFd, text);
  }

  appendTrajectory(line: string): void {
    this.flushEvents();
    writeSync(this.trajectoriesFd, line);
  }

  /** Through the output layer: written whole or not at all, so a kill or a full disk never leaves half a file. */
  writeFile(name: string, text: string): void {
    this.flushEvents();
    writeFileAtomic(join(this.dir, name), text);
  }

  writeRunJson(runJson: RunJson): void {
    this.writeFile(RUN_JSON, JSON.stringify(runJson, null, 2) + "\n");
  }

  close(): void {
    this.flushEvents();
    closeSync(this.trajectoriesFd);
    closeSync(this.eventsFd);
  }
}
