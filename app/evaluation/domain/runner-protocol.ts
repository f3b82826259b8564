/**
 * The evaluation runner's protocol (docs/evaluation.md: strategies, prompt assembly, the sequential protocol): the four strategies, prompt assembly from the
 * reference's prompt texts, the multi-turn sequential conversation, the judge call, and the step transitions of one
 * trajectory. Pure: prompt texts come in as strings, model and judge outputs are applied by the caller, nothing here
 * reads files, the network or the clock.
 */
import { judgeResponse, toReferenceAction, type ReferenceAction, type StructuredActionRaw } from "./judge";
import { PyRandom } from "../../python-compat/random";
import { pyStrip } from "../../python-compat/text";
import type { ChatMessage } from "../../model-calls/chat-message";

export const STRATEGIES = [
  "full_info_no_abstention",
  "full_info_abstention_aware",
  "sequential_info_neutral_prompting",
  "sequential_info_abstention_aware",
] as const;
export type Strategy = (typeof STRATEGIES)[number];

export function isStrategy(value: string): value is Strategy {
  return (STRATEGIES as readonly string[]).includes(value);
}

export function isSequential(strategy: Strategy): boolean {
  return strategy.startsWith("sequential_");
}

/** Decoding of the judge (docs/evaluation.md#decoding-and-retries): greedy, at most 128 new tokens, seed 123. */
export const JUDGE_MAX_TOKENS = 128;
export const JUDGE_SEED = 123;
/** Model decoding defaults (docs/evaluation.md#decoding-and-retries). */
export const DEFAULT_TEMPERATURE = 0.7;
export const DEFAULT_TOP_P = 0.95;
export const DEFAULT_MAX_TOKENS = 512;
export const DEFAULT_SEED = 123;

// ---------------------------------------------------------------------------------------------------------------
// Prompt texts

/** Prompt files, relative to app/data/prompts (the reference's prompts/ layout). */
export const PROMPT_FILES = {
  system: "system_instruction.txt",
  judge: "judge.txt",
  full_info_no_abstention: "full_info_no_abstention.txt",
  full_info_abstention_aware: "full_info_abstention_aware.txt",
  sequential_info_neutral_prompting: {
    initial: "sequential_info_neutral_prompting/initial_instruction.txt",
    additional: "sequential_info_neutral_prompting/additional_info_prefix.txt",
    finalNotice: "sequential_info_neutral_prompting/final_step_notice.txt",
  },
  sequential_info_abstention_aware: {
    initial: "sequential_info_abstention_aware/initial_instruction.txt",
    additional: "sequential_info_abstention_aware/additional_info_prefix.txt",
    finalNotice: "sequential_info_abstention_aware/final_step_abstention_notice.txt",
  },
} as const;

/** The prompt files one strategy's run reads: system instruction, judge, and the strategy's own files. */
export function promptFilesOf(strategy: Strategy): string[] {
  const own = PROMPT_FILES[strategy];
  return [PROMPT_FILES.system, PROMPT_FILES.judge, ...(typeof own === "string" ? [own] : Object.values(own))];
}

export type StrategyPrompts =
  { kind: "full"; template: string } | { kind: "sequential"; initial: string; additional: string; finalNotice: string };

/** Every prompt text, each trimmed as the reference's loader does (Python `strip()`). */
export interface PromptSet {
  system: string;
  judge: string;
  strategies: Record<Strategy, StrategyPrompts>;
}

/** Builds the prompt set from a reader of prompt files (paths as in PROMPT_FILES). */
export function buildPromptSet(read: (file: string) => string): PromptSet {
  const load = (file: string) => pyStrip(read(file));
  const sequential = (files: { initial: string; additional: string; finalNotice: string }): StrategyPrompts => ({
    kind: "sequential",
    initial: load(files.initial),
    additional: load(files.additional),
    finalNotice: load(files.finalNotice),
  });
  return {
    system: load(PROMPT_FILES.system),
    judge: load(PROMPT_FILES.judge),
    strategies: {
      full_info_no_abstention: { kind: "full", template: load(PROMPT_FILES.full_info_no_abstention) },
      full_info_abstention_aware: { kind: "full", template: load(PROMPT_FILES.full_info_abstention_aware) },
      sequential_info_neutral_prompting: sequential(PROMPT_FILES.sequential_info_neutral_prompting),
      sequential_info_abstention_aware: sequential(PROMPT_FILES.sequential_info_abstention_aware),
    },
  };
}

/**
 * Replaces every occurrence of a placeholder literally. A function replacer, so that `$&`, `$1` or `$$` in a note or
 * a model output are inserted as they are (docs/evaluation.md#prompt-assembly) — as Python's `str.format` / `str.replace` do.
 */
export function fillPlaceholder(template: string, placeholder: string, value: string): string {
  return template.replaceAll(placeholder, () => value);
}

/**
 * The user message of step `step` (1-based) for a case whose trimmed section texts are `sections` (docs/evaluation.md#prompt-assembly):
 * - full information: the strategy template with all T sections joined by a blank line, trimmed;
 * - sequential: at step 1 the initial instruction with section 1, later the additional-information prefix with
 *   section t only (the earlier ones are in the conversation), each trimmed; at t = T a blank line and the final
 *   notice are appended, so the last message holds both Task lines.
 */
export function buildUserPrompt(
  prompts: PromptSet,
  strategy: Strategy,
  sections: readonly string[],
  step: number,
): string {
  const T = sections.length;
  const p = prompts.strategies[strategy];
  if (p.kind === "full") return pyStrip(fillPlaceholder(p.template, "{sections}", sections.join("\n\n")));
  if (!Number.isInteger(step) || step < 1 || step > T) {
    throw new RangeError(`step must be in 1..${T}, got ${step}`);
  }
  const template = step === 1 ? p.initial : p.additional;
  const prompt = pyStrip(fillPlaceholder(template, "{sections}", sections[step - 1]));
  return step === T ? `${prompt}\n\n${p.finalNotice}` : prompt;
}

export type { ChatMessage };

/** The judge call: one user message, no system message, `{model_response}` replaced literally (docs/evaluation.md#prompt-assembly). */
export function buildJudgeMessages(prompts: PromptSet, modelOutput: string): ChatMessage[] {
  return [{ role: "user", content: fillPlaceholder(prompts.judge, "{model_response}", modelOutput) }];
}

// ---------------------------------------------------------------------------------------------------------------
// Cases

/** One case as the runner sees it: `samples.json`'s record, sections in ascending order, trimmed. */
export interface RunnerCase {
  sampleId: string;
  /** Section texts 1..T. */
  sections: string[];
}

export type SamplesParse = { ok: true; cases: RunnerCase[] } | { ok: false; errors: string[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Reads a parsed `samples.json` (docs/formats.md#samplesjson): `sample_id` (a string; a number is accepted and read as the
 * reference's `str()` does) and `sections` [{order, content}], sorted by `order` as the reference's loader does.
 * Contents are trimmed; a case needs at least one non-empty section, distinct orders and a unique id.
 */
export function parseSamples(value: unknown, maxErrors = 50): SamplesParse {
  if (!Array.isArray(value)) return { ok: false, errors: ["samples.json must be one JSON array"] };
  const errors: string[] = [];
  const cases: RunnerCase[] = [];
  const seen = new Set<string>();
  value.forEach((item, index) => {
    if (errors.length >= maxErrors) return;
    const where = `element ${index + 1}`;
    if (!isObject(item)) return void errors.push(`${where}: must be an object`);
    const rawId = item.sample_id;
    if (typeof rawId !== "string" && !(typeof rawId === "number" && Number.isSafeInteger(rawId))) {
      return void errors.push(`${where}: sample_id must be a string, got ${JSON.stringify(rawId) ?? "nothing"}`);
    }
    const sampleId = String(rawId);
    if (seen.has(sampleId)) return void errors.push(`${where}: duplicate sample_id ${JSON.stringify(sampleId)}`);
    seen.add(sampleId);
    const sections = item.sections;
    if (!Array.isArray(sections) || sections.length === 0) {
      return void errors.push(`${where} (${sampleId}): sections must be a non-empty array`);
    }
    const parsed: { order: number; content: string }[] = [];
    for (const s of sections) {
      if (!isObject(s) || !Number.isInteger(s.order) || typeof s.content !== "string") {
        return void errors.push(`${where} (${sampleId}): each section must be {order: integer, content: string}`);
      }
      const content = pyStrip(s.content);
      if (content === "") return void errors.push(`${where} (${sampleId}): section ${s.order} is empty`);
      parsed.push({ order: s.order as number, content });
    }
    parsed.sort((a, b) => a.order - b.order);
    if (parsed.some((s, i) => i > 0 && s.order === parsed[i - 1].order)) {
      return void errors.push(`${where} (${sampleId}): two sections have the same order`);
    }
    cases.push({ sampleId, sections: parsed.map((s) => s.content) });
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, cases };
}

/**
 * The cases of one run in the reference's order: Python `random.seed(seed); random.shuffle(samples)`, then the
 * first `limit` (docs/evaluation.md#the-sequential-protocol; the reference's `--num_samples`). The order only decides which cases `limit` keeps.
 */
export function orderCases<T>(cases: readonly T[], seed: number, limit?: number | null): T[] {
  const order = [...cases];
  new PyRandom(seed).shuffle(order);
  return limit == null ? order : order.slice(0, limit);
}

// ---------------------------------------------------------------------------------------------------------------
// Records (docs/formats.md#trajectoriesjsonl)

export type JudgeAction = ReferenceAction | "" | null;
export type StoppingReason = "Diagnose" | "Abstain" | "Finished" | "";

/** One step of `trajectory`, keys in the reference's order. */
export interface StepRecord {
  step_index: number;
  section_order: number;
  revealed_section_orders: number[];
  user_prompt: string;
  conversation_state: ChatMessage[];
  model_output_raw: string;
  judge_output_raw: string;
  judge_action: JudgeAction;
  is_last_section: boolean;
  structured_action_raw: StructuredActionRaw | null;
}

/** One line of `trajectories.jsonl`, keys in the reference's order. */
export interface TrajectoryRecord {
  sample_id: string;
  num_sections_total: number;
  num_steps_executed: number;
  stopping_reason: StoppingReason;
  trajectory: StepRecord[];
  model_evaluated: string;
  judge_model: string;
  judge_seed: number;
  strategy: Strategy;
  seed: number;
  model_do_sample: true;
  model_temperature: number | null;
  model_top_p: number | null;
  model_max_tokens: number;
  judge_do_sample: false;
  judge_max_tokens: number;
}

/** What a trajectory record says about its run, beside the case's own steps. */
export interface RunSettings {
  modelKey: string;
  judgeKey: string;
  strategy: Strategy;
  seed: number;
  /** Null when the request leaves it to the server (recorded null, as the reference does without sampling). */
  temperature: number | null;
  topP: number | null;
  maxTokens: number;
}

// ---------------------------------------------------------------------------------------------------------------
// One trajectory

export type CallKind = "model" | "judge";

export interface PendingCall {
  kind: CallKind;
  /** 1-based step the call belongs to. */
  step: number;
  /** The messages to send, in order (a copy: the caller may keep it). */
  messages: ChatMessage[];
}

/** The outcome of a judge call: its text, or a failure after which the step has no action (docs/formats.md#trajectoriesjsonl: null). */
export type JudgeOutcome = { ok: true; raw: string } | { ok: false };

type Phase =
  | { at: "model"; step: number; userPrompt: string }
  | { at: "judge"; step: number; userPrompt: string; modelOutput: string }
  | { at: "done" };

/**
 * The state machine of one case under one strategy (docs/evaluation.md#the-sequential-protocol, docs/evaluation.md#judge-parse-and-mapping). The caller asks `nextCall()` for the call to
 * make, sends it, and applies the result with `applyModelOutput` / `applyJudgeOutcome`, until `finished`.
 *
 * Transitions: the model's answer, trimmed, is appended to the conversation; an empty answer is not judged (judge
 * action "") and the trajectory continues. The judge's action: Diagnose stops; Abstain stops (before T: a premature
 * abstention); Clarify reveals the next section (at T the judge rule has already made it Abstain); "" or null (judge
 * failure) continue. After step T without a stop the reason is `Finished`. Full information has one step whose
 * action is the stopping reason ("" for an empty answer; a judge failure gives `Finished`, as the reference's
 * `None` does).
 */
export class Trajectory {
  readonly steps: StepRecord[] = [];
  stoppingReason: StoppingReason | null = null;
  private readonly conversation: ChatMessage[];
  private phase: Phase;

  constructor(
    readonly input: RunnerCase,
    readonly strategy: Strategy,
    private readonly prompts: PromptSet,
  ) {
    if (input.sections.length === 0) throw new RangeError(`case ${input.sampleId} has no sections`);
    this.conversation = [{ role: "system", content: prompts.system }];
    this.phase = this.beginStep(1);
  }

  get sampleId(): string {
    return this.input.sampleId;
  }

  /** T: the number of sections. */
  get sectionCount(): number {
    return this.input.sections.length;
  }

  get finished(): boolean {
    return this.phase.at === "done";
  }

  /** Steps a full run of this case may still need, counting the current one (for scheduling longest first). */
  get remainingSteps(): number {
    if (this.phase.at === "done") return 0;
    return isSequential(this.strategy) ? this.sectionCount - this.phase.step + 1 : 1;
  }

  /** Calls a full run of this case may still need: a model and a judge call per remaining step (for scheduling). */
  get remainingCalls(): number {
    return 2 * this.remainingSteps - (this.phase.at === "judge" ? 1 : 0);
  }

  private isLast(step: number): boolean {
    return !isSequential(this.strategy) || step === this.sectionCount;
  }

  private beginStep(step: number): Phase {
    const userPrompt = buildUserPrompt(this.prompts, this.strategy, this.input.sections, step);
    this.conversation.push({ role: "user", content: userPrompt });
    return { at: "model", step, userPrompt };
  }

  /** The call to make now; null once the trajectory is finished. Calling it twice returns the same call. */
  nextCall(): PendingCall | null {
    const phase = this.phase;
    if (phase.at === "done") return null;
    if (phase.at === "model") {
      return { kind: "model", step: phase.step, messages: this.conversation.map((m) => ({ ...m })) };
    }
    return { kind: "judge", step: phase.step, messages: buildJudgeMessages(this.prompts, phase.modelOutput) };
  }

  /** Applies the model's answer to the current step; "" stands for a failed call (docs/formats.md#trajectoriesjsonl). */
  applyModelOutput(raw: string): void {
    const phase = this.phase;
    if (phase.at !== "model") throw new Error(`case ${this.sampleId}: no model call is pending`);
    const modelOutput = pyStrip(raw);
    this.conversation.push({ role: "assistant", content: modelOutput });
    if (modelOutput === "") {
      this.finishStep(phase.step, phase.userPrompt, "", "", "", null);
    } else {
      this.phase = { at: "judge", step: phase.step, userPrompt: phase.userPrompt, modelOutput };
    }
  }

  /** Applies the judge's output (or its failure) to the current step. */
  applyJudgeOutcome(outcome: JudgeOutcome): void {
    const phase = this.phase;
    if (phase.at !== "judge") throw new Error(`case ${this.sampleId}: no judge call is pending`);
    if (!outcome.ok) {
      this.finishStep(phase.step, phase.userPrompt, phase.modelOutput, "", null, null);
      return;
    }
    const raw = pyStrip(outcome.raw);
    const judged = judgeResponse(raw, { isLastSection: this.isLast(phase.step) });
    // The runner re-maps Clarify to Abstain for full information (docs/evaluation.md#judge-parse-and-mapping); judgeResponse already did, since a
    // full-information step is always the last.
    const action = !isSequential(this.strategy) && judged.action === "CLARIFY" ? "ABSTAIN" : judged.action;
    const structured = { ...judged.structuredActionRaw, action: toReferenceAction(action) };
    this.finishStep(phase.step, phase.userPrompt, phase.modelOutput, raw, toReferenceAction(action), structured);
  }

  private finishStep(
    step: number,
    userPrompt: string,
    modelOutput: string,
    judgeOutput: string,
    action: JudgeAction,
    structured: StructuredActionRaw | null,
  ): void {
    const T = this.sectionCount;
    const sequential = isSequential(this.strategy);
    const isLast = this.isLast(step);
    this.steps.push({
      step_index: step,
      section_order: sequential ? step : 1,
      revealed_section_orders: Array.from({ length: sequential ? step : T }, (_, i) => i + 1),
      user_prompt: userPrompt,
      conversation_state: this.conversation.map((m) => ({ ...m })),
      model_output_raw: modelOutput,
      judge_output_raw: judgeOutput,
      judge_action: action,
      is_last_section: isLast,
      structured_action_raw: structured,
    });
    if (!sequential) {
      // After the re-mapping the action is never Clarify.
      this.stoppingReason = action === null ? "Finished" : (action as StoppingReason);
      this.phase = { at: "done" };
    } else if (action === "Diagnose" || action === "Abstain") {
      this.stoppingReason = action;
      this.phase = { at: "done" };
    } else if (isLast) {
      // Never past T (docs/evaluation.md#the-sequential-protocol: the reference would crash here on a shorter case).
      this.stoppingReason = "Finished";
      this.phase = { at: "done" };
    } else {
      this.phase = this.beginStep(step + 1);
    }
  }

  /** The `trajectories.jsonl` record of a finished trajectory. */
  toRecord(settings: RunSettings): TrajectoryRecord {
    if (this.stoppingReason === null) throw new Error(`case ${this.sampleId} is not finished`);
    return {
      sample_id: this.sampleId,
      num_sections_total: this.sectionCount,
      num_steps_executed: this.steps.length,
      stopping_reason: this.stoppingReason,
      trajectory: this.steps,
      model_evaluated: settings.modelKey,
      judge_model: settings.judgeKey,
      judge_seed: JUDGE_SEED,
      strategy: settings.strategy,
      seed: settings.seed,
      model_do_sample: true,
      model_temperature: settings.temperature,
      model_top_p: settings.topP,
      model_max_tokens: settings.maxTokens,
      judge_do_sample: false,
      judge_max_tokens: JUDGE_MAX_TOKENS,
    };
  }
}
