/**
 * The runner's files in the reference's formats (docs/formats.md#run-folders): run folder names, `trajectories.jsonl` lines and
 * `timing.json` written as Python's `json.dumps` writes them, plus Concord's step log used to resume a run. Pure:
 * the caller passes times in and writes the strings.
 */
import { splitJsonlLines } from "../../formats/jsonl";
import { jsonDumps } from "../../python-compat/json";
import { STRATEGIES, type Strategy } from "./runner-protocol";

const TRAJECTORY_FLOAT_KEYS = new Set(["model_temperature", "model_top_p"]);

/** One `trajectories.jsonl` line, newline included, as the reference writes it (docs/formats.md#trajectoriesjsonl). */
export function trajectoryLine(record: object): string {
  return jsonDumps(record, { floatKeys: TRAJECTORY_FLOAT_KEYS }) + "\n";
}

// ---------------------------------------------------------------------------------------------------------------
// timing.json (docs/formats.md#timingjson)

export interface SampleTime {
  sample_id: string;
  seconds: number;
}

export interface TimingSummary {
  total_time_seconds: number;
  num_samples: number;
  avg_time_per_sample_seconds: number;
  sample_times: SampleTime[];
}

export function buildTimingSummary(totalSeconds: number, numSamples: number, sampleTimes: SampleTime[]): TimingSummary {
  return {
    total_time_seconds: totalSeconds,
    num_samples: numSamples,
    avg_time_per_sample_seconds: numSamples > 0 ? totalSeconds / numSamples : 0,
    sample_times: sampleTimes,
  };
}

const TIMING_FLOAT_KEYS = new Set(["total_time_seconds", "avg_time_per_sample_seconds", "seconds"]);

/** `timing.json` as the reference writes it: `json.dumps(…, ensure_ascii=False, indent=2)`, no final newline. */
export function serializeTiming(timing: TimingSummary): string {
  return jsonDumps(timing, { indent: 2, floatKeys: TIMING_FLOAT_KEYS });
}

// ---------------------------------------------------------------------------------------------------------------
// Run folders (docs/formats.md#run-folders)

/**
 * The model key written in records and folder names. The reference scripts take the model as the folder-name text
 * before `_<strategy>`, so a key must not contain a strategy name; it must also be usable as a folder name.
 */
export function checkModelKey(key: string, what = "model key"): string | null {
  if (key === "") return `the ${what} is empty`;
  if (!/^[A-Za-z0-9._+-]+$/.test(key)) {
    return `the ${what} "${key}" may only hold letters, digits, ".", "_", "+" and "-" (it names the run folder)`;
  }
  const strategy = STRATEGIES.find((s) => key.includes(s));
  if (strategy)
    return `the ${what} "${key}" contains the strategy name ${strategy}, which the reference scripts split on`;
  if (/_seed-\d/.test(key) || key.includes("_judge-")) {
    return `the ${what} "${key}" contains "_seed-" or "_judge-", which the reference scripts parse in folder names`;
  }
  return null;
}

/** A default key for a served model name: `meta-llama/Llama-3.1-8B` → `meta-llama-Llama-3.1-8B`, `qwen3:8b` → `qwen3-8b`. */
export function modelKeyFromName(name: string): string {
  return name
    .replace(/[^A-Za-z0-9._+-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .replace(/-{2,}/g, "-");
}

/** `<model>_<strategy>_judge-<judge>_seed-<seed>` without the time stamp. */
export function runFolderPrefix(modelKey: string, strategy: Strategy, judgeKey: string, seed: number): string {
  return `${modelKey}_${strategy}_judge-${judgeKey}_seed-${seed}`;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** The run folder name, with the local time of `startedAt` as `YYYYMMDD_HHMMSS` (the reference's `datetime.now()`). */
export function runFolderName(
  modelKey: string,
  strategy: Strategy,
  judgeKey: string,
  seed: number,
  startedAt: Date,
): string {
  const d = startedAt;
  const date = `${d.getFullYear()}${pad(d.getMonth() + 1)}${pad(d.getDate())}`;
  const time = `${pad(d.getHours())}${pad(d.getMinutes())}${pad(d.getSeconds())}`;
  return `${runFolderPrefix(modelKey, strategy, judgeKey, seed)}_${date}_${time}`;
}

/** Whether `name` is a run folder of `prefix` (prefix plus a time stamp). */
export function isRunFolderOf(name: string, prefix: string): boolean {
  return name.startsWith(prefix + "_") && /^\d{8}_\d{6}$/.test(name.slice(prefix.length + 1));
}

// ---------------------------------------------------------------------------------------------------------------
// JSON Lines reading with a torn last line

export interface JsonLines {
  values: unknown[];
  /** UTF-8 length of the text up to the end of the last complete, valid record: a resumed run truncates the file here. */
  validBytes: number;
  /** Text after the last newline that is not a record (a write cut short by a kill); "" if none. */
  tornTail: string;
  /** The last record parses but its newline is missing: a resumed run appends it. */
  missingNewline: boolean;
  /** 1-based numbers of complete lines that do not parse (a torn last line is not one of them). */
  badLines: number[];
}

/** UTF-8 length without Buffer, so that the core stays free of Node APIs. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * Splits an append-only JSON Lines file. A process killed mid-write leaves at most one incomplete last line: it is
 * reported as `tornTail` and left out. A complete line that does not parse is reported in `badLines`. Blank lines
 * are skipped.
 */
export function readJsonLines(text: string): JsonLines {
  const result: JsonLines = { values: [], validBytes: 0, tornTail: "", missingNewline: false, badLines: [] };
  let bytes = 0;
  let start = 0;
  for (const { line, text: content, end, terminated } of splitJsonlLines(text)) {
    let ok = true;
    if (content.trim() !== "") {
      try {
        result.values.push(JSON.parse(content));
      } catch {
        ok = false;
      }
    }
    if (!terminated) {
      if (!ok) result.tornTail = content;
      else if (content.trim() !== "") {
        result.missingNewline = true;
        result.validBytes = bytes + utf8Length(content);
      }
      break;
    }
    bytes += utf8Length(text.slice(start, end));
    start = end;
    if (ok) result.validBytes = bytes;
    else result.badLines.push(line);
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Concord's step log (`_tmp/concord-steps.jsonl`): every finished call, so that a resumed run replays them and an
// interrupted run loses only the calls in flight. The name avoids "trajectories", which the scripts glob for.

export const STEP_LOG = "_tmp/concord-steps.jsonl";

export interface StepEvent {
  sample_id: string;
  step: number;
  call: "model" | "judge";
  /** The output text; "" for a model failure, null for a judge failure. */
  output: string | null;
  /** Why the call failed, if it did (never the note text). */
  error: string | null;
  /** Seconds since the run started, over all sessions. */
  seconds: number;
}

const STEP_FLOAT_KEYS = new Set(["seconds"]);

export function stepEventLine(event: StepEvent): string {
  return jsonDumps(event, { floatKeys: STEP_FLOAT_KEYS }) + "\n";
}

export function isStepEvent(value: unknown): value is StepEvent {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.sample_id === "string" &&
    Number.isInteger(v.step) &&
    (v.call === "model" || v.call === "judge") &&
    (typeof v.output === "string" || v.output === null) &&
    (typeof v.error === "string" || v.error === null) &&
    typeof v.seconds === "number"
  );
}
