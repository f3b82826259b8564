/**
 * Runs a multiple-choice evaluation (docs/mc-evaluation.md, "Runs"): every item of a file through one model with one
 * seed, through the Safe-Psych runner's client, pool, retries and progress, into a run folder:
 *
 *   <out>/<model-key>_<mentat|mentalbench>_seed-<seed>/run.json        every parameter, hashes, sessions
 *   <out>/<model-key>_<mentat|mentalbench>_seed-<seed>/responses.jsonl one record per answered item, appended
 *
 * Rerunning the same command resumes: answered items are not asked again; a run whose parameters differ is refused.
 * Answers are streamed to disk, never held, so memory does not grow with the number of items. responses.jsonl is a
 * log, the one kind of file written outside the output layer (docs/reliability.md, "Atomic files"): each answer is
 * appended as it arrives so that a kill loses at most the calls in flight; run.json goes through the layer.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  truncateSync,
  appendFileSync,
  writeSync,
} from "node:fs";
import { writeFileAtomic } from "../platform/output-files.server";
import { setMaxListeners } from "node:events";
import { join } from "node:path";
import { forEachFileLine } from "../platform/line-file.server";
import { CallError, type ChatEndpoint } from "../model-calls/client";
import { runPool } from "../model-calls/pool";
import type { ProgressSink, ProgressState } from "../model-calls/progress";
import { RetriesExhausted, withRetry, type RetryDeps, type RetryPolicy } from "../model-calls/retry";
import type { EndpointRecord } from "../evaluation/public.server";
import { callOnce } from "../evaluation/public.server";
import type { McItem, McItemSource, MentatItem } from "./domain/items";
import {
  buildMessages,
  fewShotExamples,
  fewShotSplit,
  type McPromptTexts,
  type MentalBenchStyle,
} from "./domain/prompts";
import { responseRecord } from "./domain/records";

export const MC_RUN_JSON = "run.json";
export const MC_RESPONSES = "responses.jsonl";

export interface McDecoding {
  temperature: number | null;
  top_p: number | null;
  max_tokens: number;
  max_tokens_param: "max_tokens" | "max_completion_tokens";
  /** Sent as the sampling seed. */
  seed: number;
}

export interface McRunJson {
  format: "concord-mc-run/1";
  software: { name: "concord"; version: string };
  model: EndpointRecord;
  items_format: "mentat" | "mentalbench";
  seed: number;
  decoding: McDecoding;
  mentalbench_style: MentalBenchStyle;
  few_shot: { shots: number; fraction: number; held_out_questions: string[] } | null;
  prompts: Record<string, string>;
  inputs: { items: { path: string; sha256: string; count: number } };
  num_items: number;
  concurrency: number;
  retry: { max_retries: number; base_delay_seconds: number; max_delay_seconds: number; timeout_seconds: number };
  status: "running" | "complete" | "incomplete";
  answered: number;
  /**
   * Decoding parameters the model's API rejected, so that the calls were sent without them (the provider's default;
   * app/model-calls/client.ts, createRawCall). Absent when every parameter was sent.
   */
  parameters_not_sent?: string[];
  sessions: {
    started_at: string;
    ended_at: string | null;
    status: "running" | "complete" | "stopped";
    message: string | null;
    calls: number;
    retries: number;
    failed: number;
  }[];
}

export interface McRunConfig {
  /** The items, or a file of them read again for each run (`checkItemFile`): then only their ids are held. */
  items: readonly McItem[] | McItemSource;
  itemsFormat: "mentat" | "mentalbench";
  inputs: { path: string; sha256: string };
  model: EndpointRecord;
  seed: number;
  temperature: number | null;
  topP: number | null;
  maxTokens: number;
  maxTokensParam: "max_tokens" | "max_completion_tokens";
  style: MentalBenchStyle;
  /** Few-shot examples per MENTAT prompt; 0 = no few-shot split. */
  fewShot: number;
  fewShotFraction: number;
  concurrency: number;
  outDir: string;
  retry: RetryPolicy;
  timeoutMs: number;
}

export interface McRunDeps {
  endpoint: ChatEndpoint;
  texts: McPromptTexts;
  promptHashes: Record<string, string>;
  version: string;
  now: () => number;
  wallClock: () => Date;
  retry: RetryDeps;
  progress?: ProgressSink;
  log?: (line: string) => void;
  /** The decoding parameters the endpoint has stopped sending because the API rejects them. */
  parametersNotSent?: () => string[];
  /** Aborting it stops the run as a dead endpoint would, keeping every answer written (a cancelled job). */
  signal?: AbortSignal;
}

export interface McRunResult {
  dir: string;
  status: "complete" | "incomplete";
  answered: number;
  total: number;
  calls: number;
  retries: number;
  failed: number;
  message: string | null;
}

/** A run folder that cannot be resumed with these parameters, or a configuration that cannot run. */
export class McRunConfigError extends Error {}

export function mcRunFolderName(modelKey: string, format: string, seed: number): string {
  return `${modelKey}_${format}_seed-${seed}`;
}

const RESUME_FIELDS: (keyof McRunJson)[] = [
  "model",
  "items_format",
  "seed",
  "decoding",
  "mentalbench_style",
  "few_shot",
  "prompts",
];

function mismatches(existing: McRunJson, wanted: McRunJson): string[] {
  const out: string[] = [];
  for (const f of RESUME_FIELDS) {
    const a = f === "model" ? existing.model?.name : existing[f];
    const b = f === "model" ? wanted.model.name : wanted[f];
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${f}: ${JSON.stringify(a)} then, ${JSON.stringify(b)} now`);
  }
  if (existing.inputs?.items?.sha256 !== wanted.inputs.items.sha256) out.push("items file content differs");
  return out;
}

/** run.json through the output layer (docs/reliability.md, "Atomic files"); responses.jsonl is a log, appended. */
function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, JSON.stringify(value, null, 2) + "\n");
}

/**
 * The longest line a responses file may hold: a prompt with its few-shot examples and an answer capped at the
 * run's max tokens stay far below it. Reading a run holds at most one such line at a time.
 */
export const MAX_RESPONSE_LINE_BYTES = 16 << 20;

/**
 * The answered item ids of a run folder, repairing a last line torn by a kill; read a line at a time
 * (app/platform/line-file.server.ts), so a large file is never held whole.
 */
function answeredIds(path: string): Set<string> {
  const done = new Set<string>();
  if (!existsSync(path)) return done;
  let offset = 0;
  let validBytes = 0;
  let torn = false;
  let missingNewline = false;
  forEachFileLine(path, MAX_RESPONSE_LINE_BYTES, (l) => {
    offset += l.bytes;
    let value: unknown = undefined;
    if ("text" in l && l.text.trim() !== "") {
      try {
        value = JSON.parse(l.text);
      } catch {
        value = undefined;
      }
    }
    const blank = "text" in l && l.text.trim() === "";
    if (!blank && value === undefined) {
      // A last line without its line feed that is not a record: a write cut short by a kill, cut off below.
      if (!l.terminated) return void (torn = true);
      throw new McRunConfigError(
        `${path}:${l.line}: ${"problem" in l ? l.problem : "not valid JSON"}; the file is damaged`,
      );
    }
    validBytes = offset;
    if (!l.terminated && !blank) missingNewline = true;
    const id = (value as { item_id?: unknown } | undefined)?.item_id;
    if (typeof id === "string") done.add(id);
  });
  if (torn || missingNewline) {
    truncateSync(path, validBytes);
    if (missingNewline) appendFileSync(path, "\n");
  }
  return done;
}

export async function runMcEvaluation(config: McRunConfig, deps: McRunDeps): Promise<McRunResult> {
  const source: McItemSource = Array.isArray(config.items)
    ? {
        count: config.items.length,
        index: config.items as readonly McItem[],
        read: () => config.items as readonly McItem[],
      }
    : (config.items as McItemSource);
  if (source.count === 0) throw new McRunConfigError("there are no items to evaluate");
  // What the run holds is the items' ids (and MENTAT question ids), the few-shot examples and the items being
  // asked; the items themselves are read again as they are asked (docs/reliability.md, "Memory bounded by the
  // longest line").
  let asked: (id: string, questionId: string | undefined) => boolean = () => true;
  let numItems = source.count;
  let fewShot: McRunJson["few_shot"] = null;
  let examples: MentatItem[] = [];
  if (config.fewShot > 0) {
    if (config.itemsFormat !== "mentat") throw new McRunConfigError("--few-shot applies to MENTAT records only");
    const split = fewShotSplit(
      source.index.map((i) => i.questionId!),
      config.seed,
      config.fewShotFraction,
    );
    if (split.fewShotQuestions.length === 0) {
      throw new McRunConfigError(
        `the few-shot split holds out no question (${config.fewShotFraction} of the questions is under one)`,
      );
    }
    // The examples come from the first `fewShot` held-out questions only: their records are all that is read here.
    const exampleQuestions = new Set(split.fewShotQuestions.slice(0, config.fewShot));
    const candidates: MentatItem[] = [];
    for (const item of source.read())
      if (exampleQuestions.has((item as MentatItem).questionId)) candidates.push(item as MentatItem);
    examples = fewShotExamples(candidates, split, config.fewShot);
    asked = (_id, questionId) => split.evaluationQuestions.has(questionId!);
    numItems = source.index.filter((i) => asked(i.id, i.questionId)).length;
    fewShot = {
      shots: examples.length,
      fraction: config.fewShotFraction,
      held_out_questions: [...split.fewShotQuestions].sort(),
    };
  }

  const dir = join(config.outDir, mcRunFolderName(config.model.key, config.itemsFormat, config.seed));
  const runJsonPath = join(dir, MC_RUN_JSON);
  const responsesPath = join(dir, MC_RESPONSES);
  const wanted: McRunJson = {
    format: "concord-mc-run/1",
    software: { name: "concord", version: deps.version },
    model: config.model,
    items_format: config.itemsFormat,
    seed: config.seed,
    decoding: {
      temperature: config.temperature,
      top_p: config.topP,
      max_tokens: config.maxTokens,
      max_tokens_param: config.maxTokensParam,
      seed: config.seed,
    },
    mentalbench_style: config.style,
    few_shot: fewShot,
    prompts: deps.promptHashes,
    inputs: { items: { ...config.inputs, count: source.count } },
    num_items: numItems,
    concurrency: config.concurrency,
    retry: {
      max_retries: config.retry.maxRetries,
      base_delay_seconds: config.retry.baseDelayMs / 1000,
      max_delay_seconds: config.retry.maxDelayMs / 1000,
      timeout_seconds: config.timeoutMs / 1000,
    },
    status: "running",
    answered: 0,
    sessions: [],
  };
  let runJson = wanted;
  if (existsSync(runJsonPath)) {
    const existing = JSON.parse(readFileSync(runJsonPath, "utf8")) as McRunJson;
    if (existing.format !== "concord-mc-run/1")
      throw new McRunConfigError(`${runJsonPath}: not a Concord multiple-choice run`);
    const diff = mismatches(existing, wanted);
    if (diff.length) {
      throw new McRunConfigError(
        `${dir} was made with other parameters (${diff.join("; ")}); use another --out or remove the folder`,
      );
    }
    runJson = { ...existing, concurrency: config.concurrency, retry: wanted.retry, software: wanted.software };
  }
  mkdirSync(dir, { recursive: true });
  const done = answeredIds(responsesPath);
  // The items not yet answered, read one at a time as the pool's slots take them.
  const todo = (function* () {
    for (const item of source.read())
      if (!done.has(item.id) && asked(item.id, item.kind === "mentat" ? item.questionId : undefined)) yield item;
  })();
  const session: McRunJson["sessions"][number] = {
    started_at: deps.wallClock().toISOString(),
    ended_at: null,
    status: "running",
    message: null,
    calls: 0,
    retries: 0,
    failed: 0,
  };
  runJson.sessions = [...runJson.sessions, session];
  runJson.status = "running";
  runJson.answered = done.size;
  writeJsonAtomic(runJsonPath, runJson);

  const state: ProgressState = { finished: done.size, total: numItems, calls: 0, retries: 0, failures: 0 };
  deps.progress?.start(state);
  const fd = openSync(responsesPath, "a");
  let fatal: string | null = null;
  const controller = new AbortController();
  // Every call in flight and every back-off wait listens on this one signal (each removes its listener when done).
  setMaxListeners(Math.max(10, 4 * config.concurrency), controller.signal);
  const stop = () => {
    fatal ??= "stopped on request";
    controller.abort();
  };
  if (deps.signal?.aborted) stop();
  deps.signal?.addEventListener("abort", stop, { once: true });
  try {
    await runPool(
      todo,
      config.concurrency,
      async (item) => {
        const messages = buildMessages(item, deps.texts, { style: config.style, fewShot: examples });
        const started = deps.now();
        let attempts = 0;
        try {
          const raw = await withRetry(
            async () => {
              attempts++;
              return callOnce(
                deps.endpoint,
                {
                  messages,
                  temperature: config.temperature,
                  topP: config.topP,
                  maxTokens: config.maxTokens,
                  seed: config.seed,
                },
                controller.signal,
              );
            },
            config.retry,
            deps.retry,
            { signal: controller.signal, onRetry: () => void state.retries++ },
          );
          state.calls++;
          const record = responseRecord(item, messages, raw, attempts, deps.now() - started);
          writeSync(fd, JSON.stringify(record) + "\n");
          state.finished++;
        } catch (e) {
          if (e instanceof RetriesExhausted && e.last.kind === "empty") {
            // An answer with no text, still empty after the retries, is the model's answer: recorded and counted
            // as "empty", never scored.
            state.calls++;
            writeSync(fd, JSON.stringify(responseRecord(item, messages, "", attempts, deps.now() - started)) + "\n");
            state.finished++;
            return;
          }
          const error = e instanceof RetriesExhausted ? e.last : e;
          if (error instanceof CallError && error.kind === "aborted") return;
          if (error instanceof CallError && error.kind === "fatal") {
            fatal ??= error.message;
            controller.abort();
            return;
          }
          if (e instanceof RetriesExhausted) {
            // Server trouble that outlasts the retries: the endpoint is down, and every other item would fail too.
            fatal ??=
              e.last.kind === "malformed" ? `${e.message}: the endpoint does not answer chat completions` : e.message;
            controller.abort();
            return;
          }
          if (error instanceof CallError) {
            // Rejected by the server (400, 413, 422): left unanswered (a resumed run asks again) and counted.
            state.failures++;
            deps.log?.(`item ${item.id}: ${e instanceof Error ? e.message : String(e)}`);
            return;
          }
          throw e;
        } finally {
          deps.progress?.update(state);
        }
      },
      () => fatal !== null,
    );
  } finally {
    deps.signal?.removeEventListener("abort", stop);
    closeSync(fd);
  }
  deps.progress?.finish(state);
  const complete = state.finished === numItems;
  const message = fatal ?? (complete ? null : `${numItems - state.finished} items unanswered; rerun to resume`);
  Object.assign(session, {
    ended_at: deps.wallClock().toISOString(),
    status: complete ? "complete" : "stopped",
    message,
    calls: state.calls,
    retries: state.retries,
    failed: state.failures,
  });
  runJson.status = complete ? "complete" : "incomplete";
  runJson.answered = state.finished;
  const notSent = [...new Set([...(runJson.parameters_not_sent ?? []), ...(deps.parametersNotSent?.() ?? [])])].sort();
  if (notSent.length) runJson.parameters_not_sent = notSent;
  writeJsonAtomic(runJsonPath, runJson);
  return {
    dir,
    status: runJson.status,
    answered: state.finished,
    total: numItems,
    calls: state.calls,
    retries: state.retries,
    failed: state.failures,
    message,
  };
}
