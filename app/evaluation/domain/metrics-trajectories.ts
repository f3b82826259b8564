/** One trajectory scored by the paper's definitions, and the records of the runs grouped by model, strategy and seed. */
import { parseJudgeOutput } from "./judge";
import { parseIcd10 } from "../../icd10/icd10";
import { STRATEGIES, type Strategy } from "./runner-protocol";
import { pyStrip } from "../../python-compat/text";
import { fileName, isObject, parentName, parseTrajectoryFile, type TrajectoryFile } from "./metrics-inputs";

type StepAction = "diagnose" | "clarify" | "abstain";

/** A step's action: a re-judge's `new_judge_action` or `new_judge_output.action` if set, else `judge_action` (docs/formats.md#trajectoriesjsonl). */
export function stepAction(step: Record<string, unknown>): { action: StepAction | null; overridden: boolean } {
  const norm = (v: unknown) => (typeof v === "string" ? pyStrip(v).toLowerCase() : "");
  const known = (s: string): StepAction | null => (s === "diagnose" || s === "clarify" || s === "abstain" ? s : null);
  const override =
    norm(step.new_judge_action) || (isObject(step.new_judge_output) ? norm(step.new_judge_output.action) : "");
  if (override) return { action: known(override), overridden: true };
  return { action: known(norm(step.judge_action)), overridden: false };
}

/** The first ICD-10 code a step's judge output names (its ICD_CODES line, parsed as docs/evaluation.md#judge-parse-and-mapping), canonical; null if none. */
export function stepCode(step: Record<string, unknown>): string | null {
  const raw = typeof step.judge_output_raw === "string" ? step.judge_output_raw : "";
  let codes = parseJudgeOutput(raw).features.icdCodes;
  const structured = step.structured_action_raw;
  if (codes.length === 0 && isObject(structured) && Array.isArray(structured.icd_codes)) {
    codes = structured.icd_codes.filter((c): c is string => typeof c === "string");
  }
  for (const c of codes) {
    const p = parseIcd10(c);
    if (p.ok) return p.code;
    const m = /\b[A-Za-z]\d{2}(?:\.[0-9A-Za-z]+)?\b/.exec(c);
    const q = m ? parseIcd10(m[0]) : null;
    if (q?.ok) return q.code;
  }
  return null;
}

export interface ScoredTrajectory {
  sampleId: string;
  /** Why the trajectory is left out of every metric, or null. */
  excluded: "empty_output" | "judge_failure" | "no_steps" | null;
  /** Smallest step index with a Diagnose action. */
  firstDiagnosis: number | null;
  /** Code of that step. */
  code: string | null;
  stage1Action: StepAction | null;
}

export function scoreTrajectory(record: Record<string, unknown>, sampleId: string): ScoredTrajectory {
  const steps = (Array.isArray(record.trajectory) ? record.trajectory : []).filter(isObject);
  const scored: ScoredTrajectory = { sampleId, excluded: null, firstDiagnosis: null, code: null, stage1Action: null };
  if (steps.length === 0) return { ...scored, excluded: "no_steps" };
  const ordered = steps
    .map((step, i) => ({ step, index: Number.isInteger(step.step_index) ? (step.step_index as number) : i + 1 }))
    .sort((a, b) => a.index - b.index);
  for (const { step, index } of ordered) {
    const output = step.model_output_raw;
    if (typeof output !== "string" || pyStrip(output) === "") return { ...scored, excluded: "empty_output" };
    const { action, overridden } = stepAction(step);
    const judgeBlank = typeof step.judge_output_raw !== "string" || pyStrip(step.judge_output_raw) === "";
    if (action === null || (!overridden && judgeBlank)) return { ...scored, excluded: "judge_failure" };
    if (index === 1) scored.stage1Action = action;
    if (action === "diagnose" && scored.firstDiagnosis === null) {
      scored.firstDiagnosis = index;
      scored.code = stepCode(step);
    }
  }
  return scored;
}

export interface RunRecord {
  model: string;
  strategy: Strategy;
  seed: number | null;
  sampleId: string;
  record: Record<string, unknown>;
}

/** Strategy of a folder name: the first of the four that occurs as `_<strategy>` (the scripts' markers). */
export function strategyOfFolder(folder: string): Strategy | null {
  return STRATEGIES.find((s) => folder.includes(`_${s}`)) ?? null;
}

/**
 * Every record of the files with its model (folder-name text before `_<strategy>`, as the scripts take it, else the
 * record's `model_evaluated`), strategy (the record's, else the folder's) and seed (the record's, else `_seed-N`).
 */
export function collectRecords(files: readonly TrajectoryFile[]): {
  records: RunRecord[];
  badLines: number;
  skipped: number;
} {
  const records: RunRecord[] = [];
  let badLines = 0;
  let skipped = 0;
  for (const file of files) {
    const name = fileName(file.path);
    if (!name.startsWith("trajectories") || !(name.endsWith(".jsonl") || name.endsWith(".json"))) continue;
    const folder = parentName(file.path);
    const parsed = parseTrajectoryFile(file);
    badLines += parsed.badLines;
    for (const record of parsed.records) {
      if (!isObject(record)) {
        skipped++;
        continue;
      }
      const strategy =
        typeof record.strategy === "string" && (STRATEGIES as readonly string[]).includes(record.strategy)
          ? (record.strategy as Strategy)
          : strategyOfFolder(folder);
      const id = record.sample_id;
      if (strategy === null || (typeof id !== "string" && typeof id !== "number")) {
        skipped++;
        continue;
      }
      const marker = `_${strategy}`;
      const model = folder.includes(marker)
        ? folder.slice(0, folder.indexOf(marker))
        : typeof record.model_evaluated === "string" && record.model_evaluated !== ""
          ? record.model_evaluated
          : folder;
      const folderSeed = /_seed-(\d+)(?:_|$)/.exec(folder);
      const seed = Number.isInteger(record.seed) ? (record.seed as number) : folderSeed ? Number(folderSeed[1]) : null;
      records.push({ model, strategy, seed, sampleId: String(id), record });
    }
  }
  return { records, badLines, skipped };
}
