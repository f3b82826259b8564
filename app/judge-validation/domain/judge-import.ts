/**
 * Reading the files of judge validation (docs/formats.md#trajectoriesjsonl, docs/judge-validation.md#importing-responses, docs/judge-validation.md#consensus-and-the-report): model responses to
 * validate the judge on, and candidate judges' outputs for the sampled responses. Text in, rows and line-numbered
 * problems out, so that the command line and the web upload report the same errors; a caller writes nothing while
 * `errors` is non-empty.
 *
 * Every response becomes one flattened step row in the reference's shape (`collect_trajectories.py`, docs/judge-validation.md#importing-responses):
 * the bucket rules and the seeded draw (validation-set.ts) then read exactly what the reference reads.
 */
import { isJsonObject } from "../../formats/jsonl";
import { createHash } from "node:crypto";
import { jsonlEntries, type ImportSource, type PassKey } from "../../formats/import-source";
import {
  ACTIONS,
  CONTINGENCIES,
  INFO_REQUESTS,
  judgeResponse,
  normaliseLabel,
  parseAction,
  PRIMARY_ANSWERS,
  type Action,
  type InfoRequest,
  type JudgeParseProblem,
  type PrimaryAnswer,
} from "../../evaluation/public";
import { formulaWarning } from "../../formats/spreadsheet-safe";
import { idProblem } from "../../formats/strict-text";
import { pushAll } from "../../stats/extremes";

export interface ImportIssue {
  /** 1-based line of the file; 0 for the file as a whole. */
  line: number;
  message: string;
}

export const RESPONSE_FORMATS = ["trajectories", "flattened", "simple"] as const;
/**
 * `trajectories`: the reference's trajectories.jsonl, one case per line with its steps (docs/formats.md#trajectoriesjsonl);
 * `flattened`: rows as `collect_trajectories.py` writes them, one step per line (optionally with the first parse);
 * `simple`: `{id, model, strategy, step, is_last_section, response, features?}` per line.
 */
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

/** Where a trajectories file came from: `runs/<name>/trajectories.jsonl` (docs/formats.md#run-folders). */
export interface RunSource {
  /** The run folder's name: `source_run_name`. */
  name: string;
  /** The run folder as the reference names it, e.g. `runs/<name>`: `source_run_dir`. */
  dir: string;
  /** The file as the reference names it, `runs/<name>/trajectories.jsonl`: `source_file` (docs/safe-psych.md). */
  file: string;
}

export interface ParsedResponse {
  line: number;
  /** The flattened row, keys in the reference's order. */
  record: Record<string, unknown>;
  sourceRun: string;
  sampleId: string;
  model: string;
  strategy: string;
  stepIndex: number | null;
  isLastSection: boolean;
  modelOutputRaw: string;
  /** The row's `new_judge_output` (first-parse features) when it has a usable one, else null. */
  newJudgeOutput: Record<string, unknown> | null;
}

export interface ParsedResponses {
  format: ResponseFormat | null;
  /** The responses (none when the parse was a first pass, `keep: false`). */
  responses: ParsedResponse[];
  /** How many responses the file has (when it has no error). */
  count: number;
  /** A first pass's keys of the responses, in file order (`responseKey`); empty when they were kept. */
  keys: PassKey[];
  errors: ImportIssue[];
  warnings: ImportIssue[];
}

/** The top-level keys `collect_trajectories.py` copies into each step row, in its order (docs/judge-validation.md#importing-responses). */
export const RUN_KEYS = [
  "sample_id",
  "strategy",
  "seed",
  "model_evaluated",
  "judge_model",
  "stopping_reason",
  "num_sections_total",
  "num_steps_executed",
] as const;

/**
 * The step fields in the order `collect_trajectories.py` writes them (is_last_section after the revealed sections,
 * judge_action before judge_output_raw), which differs from their order in trajectories.jsonl (docs/safe-psych.md,
 * "Judge validation: flattened rows").
 */
export const COLLECTED_STEP_KEYS = [
  "step_index",
  "section_order",
  "revealed_section_orders",
  "is_last_section",
  "user_prompt",
  "conversation_state",
  "model_output_raw",
  "judge_action",
  "judge_output_raw",
  "structured_action_raw",
] as const;

/** Python truthiness of a JSON value, as the reference's `if row.get("is_last_section")` reads it. */
function pyTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

const describe = (v: unknown) =>
  v === undefined
    ? "missing"
    : v === null
      ? "null"
      : Array.isArray(v)
        ? "a list"
        : typeof v === "object"
          ? "an object"
          : JSON.stringify(v);

/** "KEY must be WHAT, not VALUE", or "KEY is missing". */
function mustBe(key: string, what: string, value: unknown): string {
  return value === undefined ? `${key} is missing` : `${key} must be ${what}, not ${describe(value)}`;
}

function detectFormat(value: Record<string, unknown>): ResponseFormat | null {
  if ("trajectory" in value) return "trajectories";
  if ("model_output_raw" in value) return "flattened";
  if ("response" in value) return "simple";
  return null;
}

const FORMAT_HINT =
  "expected a trajectories.jsonl record (with `trajectory`), a flattened step row (with `model_output_raw`) " +
  "or a simple row (with `response`)";

interface LineResult {
  rows: ParsedResponse[];
  errors: string[];
  warnings: string[];
}

function sampleIdOf(value: unknown, key: string, errors: string[]): string | null {
  if (typeof value === "string" && value.trim() !== "") {
    // The text policy of every import (docs/formats.md): no control characters, at most 256 characters.
    const problem = idProblem(value);
    if (problem) errors.push(`${key}: ${problem}`);
    return problem ? null : value;
  }
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  errors.push(mustBe(key, "a non-empty string", value));
  return null;
}

function optionalText(value: unknown, key: string, errors: string[]): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  errors.push(mustBe(key, "a string", value));
  return "";
}

/** Reads a flattened row's own fields with the reference's leniency; `where` prefixes messages ("step 2: "). */
function readRow(record: Record<string, unknown>, line: number, where: string, out: LineResult): void {
  const errors: string[] = [];
  const sampleId = sampleIdOf(record.sample_id, "sample_id", errors);
  const model = optionalText(record.model_evaluated, "model_evaluated", errors);
  const strategy = optionalText(record.strategy, "strategy", errors);
  const sourceRun = optionalText(record.source_run_name, "source_run_name", errors);
  const output = record.model_output_raw;
  if (output !== null && output !== undefined && typeof output !== "string")
    errors.push(mustBe("model_output_raw", "a string", output));
  const step = record.step_index;
  if (step !== null && step !== undefined && !(typeof step === "number" && Number.isInteger(step)))
    errors.push(mustBe("step_index", "a whole number", step));
  const nj = record.new_judge_output;
  if (nj !== undefined && nj !== null && !isJsonObject(nj))
    errors.push(mustBe("new_judge_output", "an object or null", nj));
  if (errors.length) {
    pushAll(
      out.errors,
      errors.map((e) => where + e),
    );
    return;
  }
  if (typeof output !== "string") out.warnings.push(`${where}model_output_raw is ${describe(output)}: read as empty`);
  else if (output.trim() === "") out.warnings.push(`${where}empty model output`);
  // Model output flows into the annotator sheet: kept as given there, but quoted (docs/security.md).
  const formula = formulaWarning({
    model_output_raw: typeof output === "string" ? output : null,
    model_evaluated: model,
    strategy,
  });
  if (formula) out.warnings.push(`${where}${formula}`);
  if (step === null || step === undefined) out.warnings.push(`${where}no step_index`);
  const last = record.is_last_section;
  if (typeof last !== "boolean")
    out.warnings.push(
      `${where}is_last_section is ${last === undefined ? "missing" : describe(last)}: read as ${
        pyTruthy(last) ? "true" : "false"
      }, as Python's truthiness does`,
    );
  out.rows.push({
    line,
    record,
    sourceRun,
    sampleId: sampleId!,
    model,
    strategy,
    stepIndex: typeof step === "number" ? step : null,
    isLastSection: pyTruthy(last),
    modelOutputRaw: typeof output === "string" ? output : "",
    newJudgeOutput: isJsonObject(nj) ? nj : null,
  });
}

/**
 * One trajectories.jsonl record → one flattened row per step, as `collect_trajectories.py` (docs/judge-validation.md#importing-responses):
 * source_run_name, source_run_dir, source_file, the run keys, the ten step fields, then any other step keys
 * (a re-judge's `new_judge_output`, `new_judge_action`). A key the record lacks is null, as Python's `.get`.
 */
function flattenTrajectory(value: Record<string, unknown>, line: number, source: RunSource, out: LineResult) {
  const steps = value.trajectory;
  if (!Array.isArray(steps)) {
    out.errors.push(mustBe("trajectory", "a list of steps", steps));
    return;
  }
  if (steps.length === 0) out.warnings.push("the trajectory has no steps");
  steps.forEach((step, i) => {
    const where = `step ${i + 1}: `;
    if (!isJsonObject(step)) {
      out.errors.push(`${where}a step must be an object, not ${describe(step)}`);
      return;
    }
    const record: Record<string, unknown> = {
      source_run_name: source.name,
      source_run_dir: source.dir,
      source_file: source.file,
    };
    for (const key of RUN_KEYS) record[key] = value[key] ?? null;
    for (const key of COLLECTED_STEP_KEYS) record[key] = step[key] ?? null;
    for (const [key, v] of Object.entries(step)) if (!(key in record)) record[key] = v;
    readRow(record, line, where, out);
  });
}

const SIMPLE_KEYS = ["id", "model", "strategy", "step", "is_last_section", "response", "features"];

function listOfText(value: unknown, key: string, errors: string[]): string[] | null {
  if (value === undefined || value === null) return [];
  if (typeof value === "string")
    return value
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value.map((v) => v.trim());
  errors.push(mustBe(`features.${key}`, "a list of strings or a comma-separated string", value));
  return null;
}

/** The simple format's `features` (first parse): checked against the feature domains, written as `new_judge_output`. */
function simpleFeatures(value: unknown, errors: string[]): Record<string, unknown> | null {
  if (value === undefined || value === null) return null;
  if (!isJsonObject(value)) {
    errors.push(mustBe("features", "an object", value));
    return null;
  }
  const pick = (key: string, domain: readonly string[]) => {
    const v = value[key];
    if (v === undefined || v === null) return null;
    const label = typeof v === "string" ? normaliseLabel(v) : undefined;
    if (label === undefined || (label !== null && !domain.includes(label))) {
      errors.push(`features.${key} must be one of ${domain.join(", ")}, not ${describe(v)}`);
      return null;
    }
    return label;
  };
  const known = ["primary_answer", "contingency", "info_request", "icd_codes", "diagnosis_names"];
  const unknown = Object.keys(value).filter((k) => !known.includes(k) && k !== "action");
  if (unknown.length) errors.push(`features has unknown key ${unknown.join(", ")}; known: ${known.join(", ")}`);
  return {
    primary_answer: pick("primary_answer", PRIMARY_ANSWERS),
    contingency: pick("contingency", CONTINGENCIES),
    info_request: pick("info_request", INFO_REQUESTS),
    icd_codes: listOfText(value.icd_codes, "icd_codes", errors),
    diagnosis_names: listOfText(value.diagnosis_names, "diagnosis_names", errors),
    action: null,
  };
}

/**
 * A simple row as a flattened reference row: id → sample_id, model → model_evaluated, step → step_index,
 * response → model_output_raw, features → new_judge_output. Strict: this format is Concord's own.
 */
function simpleRow(value: Record<string, unknown>, line: number, out: LineResult) {
  const errors: string[] = [];
  const unknown = Object.keys(value).filter((k) => !SIMPLE_KEYS.includes(k));
  if (unknown.length) errors.push(`unknown key ${unknown.join(", ")}; known: ${SIMPLE_KEYS.join(", ")}`);
  const id = sampleIdOf(value.id, "id", errors);
  const model = optionalText(value.model, "model", errors);
  const strategy = optionalText(value.strategy, "strategy", errors);
  const step = value.step ?? 1;
  if (!(typeof step === "number" && Number.isInteger(step) && step >= 1))
    errors.push(mustBe("step", "a whole number ≥ 1", step));
  const last = value.is_last_section ?? false;
  if (typeof last !== "boolean") errors.push(mustBe("is_last_section", "true or false", last));
  if (typeof value.response !== "string") errors.push(mustBe("response", "a string", value.response));
  const features = simpleFeatures(value.features, errors);
  if (errors.length) {
    pushAll(out.errors, errors);
    return;
  }
  const record: Record<string, unknown> = {
    source_run_name: "",
    source_run_dir: "",
    source_file: "",
    sample_id: id,
    strategy,
    seed: null,
    model_evaluated: model,
    judge_model: null,
    stopping_reason: null,
    num_sections_total: null,
    num_steps_executed: null,
    step_index: step,
    section_order: null,
    revealed_section_orders: null,
    user_prompt: null,
    conversation_state: null,
    model_output_raw: value.response,
    judge_output_raw: null,
    judge_action: null,
    is_last_section: last,
    structured_action_raw: null,
  };
  if (features) record.new_judge_output = features;
  readRow(record, line, "", out);
}

export function describeResponse(
  r: Pick<ParsedResponse, "sourceRun" | "model" | "strategy" | "sampleId" | "stepIndex">,
) {
  const who = [r.sourceRun || [r.model, r.strategy].filter(Boolean).join("/")].filter(Boolean);
  return `sample ${r.sampleId} step ${r.stepIndex ?? "?"}${who.length ? ` of ${who[0]}` : ""}`;
}

export interface ParseResponsesOptions {
  /** Refuse a file of another format; detected from the first line when absent. */
  format?: ResponseFormat;
  /** The run a trajectories.jsonl file belongs to (its folder); blank names when absent. */
  source?: RunSource;
  /** Identities (see `responseIdentity`) already in the set: a response seen before is an error. */
  existing?: ReadonlySet<string>;
  /**
   * False for the first pass of a two-pass import (docs/reliability.md, "Memory bounded by the longest line"): the
   * responses are not kept, only each one's identity and content hash (`keys`); `responseRecords` reads them again.
   */
  keep?: boolean;
}

/** What the first pass keeps of a response: its identity and the hash of everything written of it. */
export function responseKey(r: ParsedResponse): PassKey {
  return {
    key: responseIdentity(r),
    hash: createHash("sha256")
      .update(JSON.stringify({ ...r, line: undefined }))
      .digest("base64"),
  };
}

/** The key that makes a response unique in a set: run, model, strategy, sample id and step. */
export function responseIdentity(
  r: Pick<ParsedResponse, "sourceRun" | "model" | "strategy" | "sampleId" | "stepIndex">,
): string {
  return JSON.stringify([r.sourceRun, r.model, r.strategy, r.sampleId, r.stepIndex]);
}

/**
 * Reads a responses file (JSONL). The format is detected from the first line (see ResponseFormat) and every line must
 * have it. Errors: a line that is not a JSON object, a wrong type for a field Concord needs, a response that appears
 * twice (same run, model, strategy, sample and step, in the file or already in the set). Values the reference reads
 * leniently (a non-boolean `is_last_section`, a null `model_output_raw`) are kept as they are, with a warning.
 */
export function parseResponsesJsonl(text: string | ImportSource, options: ParseResponsesOptions = {}): ParsedResponses {
  const keep = options.keep ?? true;
  const responses: ParsedResponse[] = [];
  const keys: PassKey[] = [];
  let count = 0;
  let withoutFirstParse = 0;
  const scan: ResponseScan = { errors: [], warnings: [], format: options.format ?? null, entries: 0 };
  for (const r of scanResponses(text, options, scan)) {
    count++;
    if (r.newJudgeOutput === null) withoutFirstParse++;
    if (keep) responses.push(r);
    else keys.push(responseKey(r));
  }
  const { errors, warnings, format } = scan;
  if (errors.length === 0 && withoutFirstParse > 0)
    warnings.push({
      line: 0,
      message:
        `${withoutFirstParse} of ${count} responses have no first-parse features (new_judge_output): ` +
        "the bucket rules read them as none/none, so they can only fall in clear_abstain_decline (docs/judge-validation.md)",
    });
  if (scan.entries === 0)
    return { format, responses, count: 0, keys, errors: [{ line: 0, message: "the file is empty" }], warnings };
  return errors.length
    ? { format, responses: [], count: 0, keys: [], errors, warnings }
    : { format, responses, count, keys, errors, warnings };
}

/**
 * The second pass of a two-pass responses import: the responses of a file the first pass (`keep: false`) checked,
 * read again one at a time, for `secondPass` (app/formats/import-source.ts) to compare with the first pass's keys.
 */
export function* responseRecords(text: ImportSource, options: ParseResponsesOptions): Generator<ParsedResponse> {
  yield* scanResponses(
    text,
    { ...options, existing: undefined },
    {
      errors: [],
      warnings: [],
      format: options.format ?? null,
      entries: 0,
    },
  );
}

interface ResponseScan {
  errors: ImportIssue[];
  warnings: ImportIssue[];
  format: ResponseFormat | null;
  entries: number;
}

/** Each response of a file as its line is read, the problems recorded in `scan`. */
function* scanResponses(
  text: string | ImportSource,
  options: ParseResponsesOptions,
  scan: ResponseScan,
): Generator<ParsedResponse> {
  const { errors, warnings } = scan;
  const seen = new Map<string, number>();
  const source = options.source ?? { name: "", dir: "", file: "" };

  // Line by line (a text, or a file the command line streams: never held whole, docs/reliability.md, "Memory
  // bounded by the longest line").
  for (const entry of jsonlEntries(text)) {
    scan.entries++;
    const { line } = entry;
    if ("invalid" in entry) {
      errors.push({ line, message: `not valid JSON: ${entry.invalid}` });
      continue;
    }
    const { value } = entry;
    if (!isJsonObject(value)) {
      errors.push({ line, message: `a line must be a JSON object, not ${describe(value)}` });
      continue;
    }
    const detected = detectFormat(value);
    if (scan.format === null) {
      if (detected === null) {
        errors.push({ line, message: `cannot tell the file's format: ${FORMAT_HINT}` });
        return;
      }
      scan.format = detected;
    }
    const format = scan.format;
    // A line of another known format is refused; one of no known shape is read as the file's format, so that its
    // errors name the missing or wrong fields.
    if (detected !== null && detected !== format) {
      errors.push({ line, message: `this line is a ${detected} row but the file is ${format}: one format per file` });
      continue;
    }
    const out: LineResult = { rows: [], errors: [], warnings: [] };
    if (format === "trajectories") flattenTrajectory(value, line, source, out);
    else if (format === "flattened") readRow(value, line, "", out);
    else simpleRow(value, line, out);
    pushAll(
      errors,
      out.errors.map((message) => ({ line, message })),
    );
    pushAll(
      warnings,
      out.warnings.map((message) => ({ line, message })),
    );
    if (out.errors.length) continue;
    for (const row of out.rows) {
      const key = responseIdentity(row);
      const before = seen.get(key);
      if (before !== undefined) {
        errors.push({ line, message: `${describeResponse(row)} appears twice (first on line ${before})` });
      } else if (options.existing?.has(key)) {
        errors.push({ line, message: `${describeResponse(row)} is already in the set (or in an earlier file)` });
      } else {
        seen.set(key, line);
        yield row;
      }
    }
  }
}

// ————— Candidate judges' outputs (docs/judge-validation.md#candidate-judges) —————

export interface ParsedJudgeOutputRow {
  line: number;
  annotationId: string;
  primaryAnswer: PrimaryAnswer | null;
  infoRequest: InfoRequest | null;
  action: Action | null;
  /** The judge's text when the line gave it (`judge_output_raw`), else null. */
  raw: string | null;
  /** What the judge-output parser could not use in `raw` (docs/evaluation.md#judge-parse-and-mapping). */
  problems: JudgeParseProblem[];
}

export interface ParsedJudgeOutputs {
  rows: ParsedJudgeOutputRow[];
  errors: ImportIssue[];
  warnings: ImportIssue[];
}

export interface ParseJudgeOutputsOptions {
  /** annotation_id → is_last_section of the sampled response: ids of the set, and the re-mapping of raw text. */
  items: ReadonlyMap<string, boolean>;
}

function domainLabel<T extends string>(value: unknown, key: string, domain: readonly T[], errors: string[]): T | null {
  if (value === undefined || value === null) return null;
  const label = typeof value === "string" ? normaliseLabel(value) : undefined;
  if (label === null) return null;
  if (label === undefined || !(domain as readonly string[]).includes(label)) {
    errors.push(`${key} must be one of ${domain.join(", ")} (or empty), not ${describe(value)}`);
    return null;
  }
  return label as T;
}

/**
 * Reads a candidate judge's outputs (JSONL), one sampled response per line, in either form:
 * `{annotation_id, new_judge_output: {primary_answer, info_request, action}}` as the reference writes them, or
 * `{annotation_id, judge_output_raw: "PRIMARY_ANSWER: …"}`, the judge's raw text, parsed with the reference's rules
 * (parseJudgeOutput) and mapped to an action with the last-section rule, as the runner would. Labels are normalised
 * as docs/judge-validation.md#label-normalisation (trim, lower-case; "", nan, null → missing; no, n/a … → none). Errors: unknown annotation ids,
 * an id twice (the reference refuses duplicates), values outside the feature domains.
 */
export function parseJudgeOutputsJsonl(
  input: string | ImportSource,
  options: ParseJudgeOutputsOptions,
): ParsedJudgeOutputs {
  const errors: ImportIssue[] = [];
  const warnings: ImportIssue[] = [];
  const rows: ParsedJudgeOutputRow[] = [];
  const seen = new Map<string, number>();
  // Read line by line (a streamed file is never held whole; docs/reliability.md, "Bulk imports").
  let lines = 0;
  for (const entry of jsonlEntries(input)) {
    lines++;
    const { line } = entry;
    if ("invalid" in entry) {
      errors.push({ line, message: `not valid JSON: ${entry.invalid}` });
      continue;
    }
    const { value } = entry;
    if (!isJsonObject(value)) {
      errors.push({ line, message: `a line must be a JSON object, not ${describe(value)}` });
      continue;
    }
    const problems: string[] = [];
    const id = value.annotation_id;
    if (typeof id !== "string" || id.trim() === "") {
      errors.push({ line, message: mustBe("annotation_id", "a non-empty string", id) });
      continue;
    }
    const annotationId = id.trim();
    const isLast = options.items.get(annotationId);
    if (isLast === undefined) {
      errors.push({ line, message: `annotation_id ${annotationId} is not a response of this set's sample` });
      continue;
    }
    const before = seen.get(annotationId);
    if (before !== undefined) {
      errors.push({ line, message: `annotation_id ${annotationId} appears twice (first on line ${before})` });
      continue;
    }
    seen.set(annotationId, line);
    const hasStructured = "new_judge_output" in value;
    const hasRaw = "judge_output_raw" in value;
    if (hasStructured === hasRaw) {
      errors.push({
        line,
        message: hasRaw
          ? "give either new_judge_output or judge_output_raw, not both"
          : "expected new_judge_output {primary_answer, info_request, action} or judge_output_raw (the judge's text)",
      });
      continue;
    }
    if (hasRaw) {
      const raw = value.judge_output_raw;
      if (typeof raw !== "string") {
        errors.push({ line, message: mustBe("judge_output_raw", "a string", raw) });
        continue;
      }
      const judged = judgeResponse(raw, { isLastSection: isLast });
      const serious = judged.problems.filter(
        (p) => p.kind !== "missing_key" || p.key === "PRIMARY_ANSWER" || p.key === "INFO_REQUEST",
      );
      if (serious.length)
        warnings.push({ line, message: `${annotationId}: ${serious.map((p) => p.message).join("; ")}` });
      rows.push({
        line,
        annotationId,
        primaryAnswer: judged.features.primaryAnswer,
        infoRequest: judged.features.infoRequest,
        // The reference's runner does not judge an empty output (docs/evaluation.md#the-sequential-protocol): no action.
        action: judged.problems.some((p) => p.kind === "empty_output") ? null : judged.action,
        raw,
        problems: judged.problems,
      });
      continue;
    }
    const output = value.new_judge_output;
    if (!isJsonObject(output)) {
      // docs/formats.md#trajectoriesjsonl: `new_judge_output: null` crashes the reference's scripts; here it is refused with its line.
      errors.push({ line, message: mustBe("new_judge_output", "an object", output) });
      continue;
    }
    const primaryAnswer = domainLabel(output.primary_answer, "primary_answer", PRIMARY_ANSWERS, problems);
    const infoRequest = domainLabel(output.info_request, "info_request", INFO_REQUESTS, problems);
    let action: Action | null = null;
    const a = output.action;
    if (a !== undefined && a !== null && !(typeof a === "string" && normaliseLabel(a) === null)) {
      action = typeof a === "string" ? parseAction(a) : null;
      if (action === null) problems.push(`action must be one of ${ACTIONS.join(", ")} (any case), not ${describe(a)}`);
    }
    if (problems.length) {
      pushAll(
        errors,
        problems.map((message) => ({ line, message })),
      );
      continue;
    }
    if (action === null) warnings.push({ line, message: `${annotationId}: no action` });
    rows.push({ line, annotationId, primaryAnswer, infoRequest, action, raw: null, problems: [] });
  }
  if (lines === 0) return { rows: [], errors: [{ line: 0, message: "the file is empty" }], warnings: [] };
  if (errors.length === 0 && rows.length < options.items.size)
    warnings.push({
      line: 0,
      message: `the file covers ${rows.length} of the ${options.items.size} sampled responses; the others count as missing`,
    });
  return { rows: errors.length ? [] : rows, errors, warnings };
}
