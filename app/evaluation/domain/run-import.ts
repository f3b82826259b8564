/**
 * One trajectory record of an imported run folder (docs/evaluation.md, "Runs in the app"; docs/formats.md#trajectoriesjsonl)
 * checked and turned into the rows the pages read: the trajectory with its failure flags against the gold labels,
 * and its steps with the judge's parsed fields. Pure. The model, strategy and seed are the metrics' own
 * (`collectRecords`), the first diagnosis and the exclusion the paper's (`scoreTrajectory`), so a filter on the case
 * list and the metrics never disagree about what a trajectory did.
 */
import { matchesAtDiagnosisLevel } from "../../icd10/icd10";
import { parseJudgeOutput } from "./judge";
import type { GoldCase } from "./metrics-inputs";
import { isObject } from "./metrics-inputs";
import { collectRecords, scoreTrajectory, stepAction } from "./metrics-trajectories";
import { pyStrip } from "../../python-compat/text";
import type { Strategy } from "./runner-protocol";

export interface ImportedStep {
  stepIndex: number;
  sectionOrder: number | null;
  prompt: string;
  answer: string;
  judgeOutput: string;
  primaryAnswer: string | null;
  infoRequest: string | null;
  icdCodes: string[];
  diagnosisNames: string[];
  /** `Diagnose`, `Clarify`, `Abstain` or "" (the metrics' reading: a re-judge's override first). */
  action: string;
}

export interface ImportedTrajectory {
  model: string;
  strategy: Strategy;
  seed: number | null;
  sampleId: string;
  stoppingReason: string;
  stepsExecuted: number;
  sectionsTotal: number;
  firstDiagnosis: number | null;
  code: string | null;
  excluded: string | null;
  outcome: string;
  prematureDiagnosis: boolean;
  prematureAbstention: boolean;
  overAbstention: boolean;
  wrongCode: boolean;
  calls: number;
  steps: ImportedStep[];
}

const ACTION_CASE: Record<string, string> = { diagnose: "Diagnose", clarify: "Clarify", abstain: "Abstain" };

const text = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * Reads one record (a parsed line of `path`, the trajectory file as the metrics see it: `runs/<folder>/…`). Returns
 * the reason it is refused, or the rows. `gold` is the evaluation's gold labels by case id.
 */
export function readTrajectoryRecord(
  path: string,
  value: unknown,
  gold: ReadonlyMap<string, GoldCase>,
): { problem: string } | { trajectory: ImportedTrajectory } {
  if (!isObject(value)) return { problem: "not a JSON object (one trajectory record per line)" };
  const id = value.sample_id;
  if (typeof id !== "string" && typeof id !== "number") return { problem: "sample_id is missing" };
  const sampleId = String(id);
  const g = gold.get(sampleId);
  if (!g) return { problem: `case "${sampleId}" is not in the evaluation's gold labels` };
  if (!Array.isArray(value.trajectory) || !value.trajectory.every(isObject))
    return { problem: "trajectory must be an array of step objects" };
  const rawSteps = value.trajectory as Record<string, unknown>[];
  if (rawSteps.some((s) => "new_judge_output" in s && s.new_judge_output === null))
    return {
      problem: "new_judge_output is null (the reference's scripts crash on it; docs/formats.md#trajectoriesjsonl)",
    };
  // The run's model, strategy and seed exactly as the metrics take them (folder name first).
  const collected = collectRecords([{ path, text: JSON.stringify(value) + "\n" }]).records[0];
  if (!collected) return { problem: "no strategy: neither the record nor the folder name names one of the four" };
  const scored = scoreTrajectory(value, sampleId);
  const T = Number.isInteger(value.num_sections_total) ? (value.num_sections_total as number) : rawSteps.length;
  const steps: ImportedStep[] = rawSteps
    .map((s, i) => {
      const judgeOutput = text(s.judge_output_raw);
      const features = parseJudgeOutput(judgeOutput).features;
      const action = stepAction(s).action;
      return {
        stepIndex: Number.isInteger(s.step_index) ? (s.step_index as number) : i + 1,
        sectionOrder: Number.isInteger(s.section_order) ? (s.section_order as number) : null,
        prompt: text(s.user_prompt),
        answer: text(s.model_output_raw),
        judgeOutput,
        primaryAnswer: features.primaryAnswer,
        infoRequest: features.infoRequest,
        icdCodes: features.icdCodes,
        diagnosisNames: features.diagnosisNames,
        action: action ? ACTION_CASE[action]! : "",
      };
    })
    .sort((a, b) => a.stepIndex - b.stepIndex);
  for (let i = 1; i < steps.length; i++)
    if (steps[i]!.stepIndex === steps[i - 1]!.stepIndex)
      return { problem: `step_index ${steps[i]!.stepIndex} appears twice` };
  const sequential = collected.strategy.startsWith("sequential");
  const firstAbstain = steps.find((s) => s.action === "Abstain")?.stepIndex ?? null;
  const counted = scored.excluded === null;
  // The expert stopping step τ_exp (docs/safe-psych.md#gold-labels-and-expert-action-labels): a diagnosis before it
  // is where the experts would still clarify.
  const tauExp = g.sufficient ? g.tau : T;
  const stopping = text(value.stopping_reason);
  const outcome =
    scored.firstDiagnosis !== null
      ? `Diagnose ${scored.code ?? "(no code)"}`
      : pyStrip(stopping) !== ""
        ? pyStrip(stopping)
        : "(none)";
  return {
    trajectory: {
      model: collected.model,
      strategy: collected.strategy,
      seed: collected.seed,
      sampleId,
      stoppingReason: stopping,
      stepsExecuted: Number.isInteger(value.num_steps_executed) ? (value.num_steps_executed as number) : steps.length,
      sectionsTotal: T,
      firstDiagnosis: scored.firstDiagnosis,
      code: scored.code,
      excluded: scored.excluded,
      outcome,
      prematureDiagnosis:
        counted && scored.firstDiagnosis !== null && tauExp !== null && scored.firstDiagnosis < tauExp,
      prematureAbstention:
        counted && sequential && scored.firstDiagnosis === null && firstAbstain !== null && firstAbstain < T,
      overAbstention: counted && g.sufficient && scored.firstDiagnosis === null,
      wrongCode:
        counted && scored.firstDiagnosis !== null && g.code !== null && !matchesAtDiagnosisLevel(g.code, scored.code),
      calls: steps.reduce((n, s) => n + (s.answer === "" ? 1 : 2), 0),
      steps,
    },
  };
}
