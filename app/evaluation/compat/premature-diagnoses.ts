/** Emulation of the reference's `evaluations/premature_diagnoses/process.py`. */
import { REFERENCE_NAMES } from "../../labels/labels";
import { fileName, parentName, parentPath, type TrajectoryFile } from "../domain/metrics-inputs";
import { type Strategy } from "../domain/runner-protocol";
import {
  byKeys,
  cmp,
  type Dict,
  get,
  guard,
  isPyInt,
  iterate,
  loadJsonlSkipping,
  normalizeText,
  pct,
  type Py,
  pyInt,
  pyIntValue,
  pyRound2,
  sortedSteps,
} from "./python-semantics";
import { actionA } from "./trajectory-fields";

const TIMING_MARKERS: [string, string][] = [
  ["_sequential_info_neutral_prompting", "neutral"],
  ["_sequential_info_abstention_aware", "abstention_aware"],
];
export const TIMING_STRATEGY: Record<string, Strategy> = {
  neutral: "sequential_info_neutral_prompting",
  abstention_aware: "sequential_info_abstention_aware",
};

/** fnmatch `*trajectories*.jsonl` */
export const starTrajectoriesJsonl = (path: string) => /trajectories.*\.jsonl$/.test(fileName(path));

export function timingCategory(first: number | null, tau: number | null): string {
  if (first === null) return "never";
  if (tau === null) return "unknown";
  return first < tau ? "premature" : first === tau ? "on_time" : "late";
}

export function prematureScript(gtItems: Py[], files: readonly TrajectoryFile[]) {
  return guard(() => {
    const matched = files
      .filter((f) => starTrajectoriesJsonl(f.path))
      .filter((f) => TIMING_MARKERS.some(([m]) => parentPath(f.path).includes(m)))
      .sort((a, b) => cmp(a.path, b.path));
    // The script returns before reading the gold labels when it finds no file.
    if (matched.length === 0) return { summary: [], per_stage: [], per_sample: [] as Dict[] };
    const gt = new Map<string, { tau: number; T: number }>();
    for (const it of gtItems) {
      const id = normalizeText(get(it, "id"));
      if (!id) continue;
      const row = get(it, "original_row", it);
      const agreement = normalizeText(get(row, REFERENCE_NAMES.diagnosisAgreement, "")).toUpperCase();
      const tau = pyInt(normalizeText(get(row, REFERENCE_NAMES.earliestSection)));
      const T = pyInt(normalizeText(get(it, "num_sections_in_input")));
      if (!["1", "TRUE"].includes(agreement) || tau === null || T === null) continue;
      gt.set(id, { tau, T });
    }
    const perSample: Dict[] = [];
    const keys = new Map<string, Dict>();
    for (const file of matched) {
      const folder = parentName(file.path);
      const found = TIMING_MARKERS.find(([m]) => folder.includes(m));
      const model = found ? folder.slice(0, folder.indexOf(found[0])) : folder;
      const strategy = found ? found[1] : "unknown";
      const key = JSON.stringify([model, strategy]);
      for (const record of loadJsonlSkipping(file.text)) {
        const sampleId = normalizeText(get(record, "sample_id", get(record, "id", "")));
        const info = sampleId ? gt.get(sampleId) : undefined;
        if (!info) continue;
        let first: number | null = null;
        for (const step of sortedSteps(get(record, "trajectory", []))) {
          const index = get(step, "step_index");
          if (actionA(step) === "diagnose" && isPyInt(index)) {
            first = pyIntValue(index);
            break;
          }
        }
        const diagnoseSteps = new Set<number>();
        for (const step of iterate(get(record, "trajectory", []))) {
          const index = get(step, "step_index");
          if (actionA(step) === "diagnose" && isPyInt(index)) diagnoseSteps.add(pyIntValue(index));
        }
        const category = timingCategory(first, info.tau);
        const k =
          keys.get(key) ??
          ({
            model,
            strategy,
            total: 0,
            premature: 0,
            on_time: 0,
            late: 0,
            never: 0,
            early_sum: 0,
            early_n: 0,
            stages: new Map(),
            seeds: new Set(),
          } as Dict);
        keys.set(key, k);
        (k.total as number)++;
        k[category] = (k[category] as number) + 1;
        (k.seeds as Set<Py>).add(get(record, "seed"));
        if (first !== null && first < info.tau) {
          k.early_sum = (k.early_sum as number) + info.tau - first;
          k.early_n = (k.early_n as number) + 1;
        }
        const stages = k.stages as Map<number, [number, number]>;
        for (let s = 1; s <= info.T; s++) {
          const c = stages.get(s) ?? [0, 0];
          stages.set(s, [c[0] + 1, c[1] + (diagnoseSteps.has(s) ? 1 : 0)]);
        }
        perSample.push({
          model,
          strategy,
          sample_id: sampleId,
          num_sections_in_input: info.T,
          gold_earliest_sufficient_section: info.tau,
          model_first_diagnosis_step: first,
          timing_category: category,
        });
      }
    }
    const sorted = [...keys.values()].sort(byKeys("model", "strategy"));
    const summary = sorted.map((k) => {
      const total = k.total as number;
      const n = (c: string) => k[c] as number;
      return {
        model: k.model as string,
        strategy: k.strategy as string,
        total_cases: total,
        count_premature: n("premature"),
        count_on_time: n("on_time"),
        count_late: n("late"),
        count_never: n("never"),
        pct_premature: pct(n("premature"), total),
        pct_on_time: pct(n("on_time"), total),
        pct_late: pct(n("late"), total),
        pct_never: pct(n("never"), total),
        mean_stages_too_early_among_premature: n("early_n") ? pyRound2(n("early_sum") / n("early_n")) : "",
        seeds: [...(k.seeds as Set<Py>)],
      };
    });
    const perStage = sorted.flatMap((k) =>
      [...(k.stages as Map<number, [number, number]>).entries()]
        .sort(([a], [b]) => a - b)
        .map(([stage, [total, diagnose]]) => ({
          model: k.model as string,
          strategy: k.strategy as string,
          stage,
          total_cases: total,
          count_diagnose: diagnose,
          pct_diagnose: pct(diagnose, total),
        })),
    );
    return { summary, per_stage: perStage, per_sample: perSample };
  });
}
