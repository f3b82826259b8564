/** Emulation of the reference's `evaluations/abstention_rate/process.py`. */
import { REFERENCE_NAMES } from "../../labels/labels";
import { pySplitLines, pyStrip } from "../../python-compat/text";
import { fileName, parentName, type TrajectoryFile } from "../domain/metrics-inputs";
import { STRATEGIES, type Strategy } from "../domain/runner-protocol";
import {
  byKeys,
  type Dict,
  get,
  guard,
  isDict,
  item,
  iterate,
  jsonLoads,
  type Py,
  pyStr,
  ScriptCrash,
} from "./python-semantics";

const SCENARIO: Record<Strategy, [string, string]> = {
  full_info_no_abstention: ["full_info", "full_note_response"],
  full_info_abstention_aware: ["full_info", "full_note_response"],
  sequential_info_neutral_prompting: ["sequential_info", "trajectory_level"],
  sequential_info_abstention_aware: ["sequential_info", "trajectory_level"],
};

const isEmptyText = (v: Py) => typeof v !== "string" || pyStrip(v) === "";

/** glob `runs/**\/trajectories*.json*` */
const abstentionGlob = (path: string) => /^trajectories.*\.json/.test(fileName(path));

export function abstentionScript(gtItems: Py[], files: readonly TrajectoryFile[]) {
  return guard(() => {
    const sufficiency = new Map<string, "sufficient" | "insufficient">();
    for (const it of gtItems) {
      const row = get(it, "original_row", it);
      const value = pyStrip(pyStr(get(row, REFERENCE_NAMES.sufficiency, "")));
      const s = value === "1" ? "sufficient" : value === "0" ? "insufficient" : null;
      if (s) sufficiency.set(pyStr(item(it, "id")), s);
    }
    const matched = files.filter((f) => abstentionGlob(f.path));
    if (matched.length === 0)
      throw new ScriptCrash("FileNotFoundError: No trajectories*.json/jsonl files found under runs");
    const rows: Dict[] = [];
    for (const file of matched) {
      const text = pyStrip(file.text);
      let records: Py[] = [];
      if (text) {
        if (file.path.endsWith(".jsonl")) {
          records = pySplitLines(text)
            .filter((l) => pyStrip(l) !== "")
            .map((l) => jsonLoads(l, file.path));
        } else {
          const obj = jsonLoads(text, file.path);
          records = Array.isArray(obj) ? obj : [obj];
        }
      }
      const folder = parentName(file.path);
      for (const rec of records) {
        const strategy = get(rec, "strategy");
        if (typeof strategy !== "string" || !(STRATEGIES as readonly string[]).includes(strategy)) continue;
        const marker = `_${strategy}`;
        const model = folder.includes(marker) ? folder.slice(0, folder.indexOf(marker)) : folder;
        const sampleId = pyStr(get(rec, "sample_id"));
        const suff = sufficiency.get(sampleId);
        if (!suff) continue;
        let diagnosed = get(rec, "stopping_reason") === "Diagnose";
        for (const step of iterate(get(rec, "trajectory", []))) {
          const structured = get(step, "structured_action_raw");
          const sAction = isDict(structured) ? get(structured, "action") : null;
          if (get(step, "judge_action") === "Diagnose" || sAction === "Diagnose") diagnosed = true;
        }
        const trajectory = get(rec, "trajectory", []);
        const steps = Array.isArray(trajectory) ? trajectory : [];
        let emptyModel = 0;
        let emptyJudge = 0;
        for (const step of steps) {
          if (isEmptyText(get(step, "model_output_raw"))) emptyModel++;
          if (isEmptyText(get(step, "judge_output_raw"))) emptyJudge++;
        }
        rows.push({
          model,
          strategy,
          seed: get(rec, "seed"),
          sample_id: sampleId,
          sufficiency: suff,
          abstained: diagnosed ? 0 : 1,
          steps: steps.length,
          empty_model: emptyModel,
          empty_judge: emptyJudge,
        });
      }
    }
    if (rows.length === 0)
      throw new ScriptCrash("ValueError: No matching model outputs found for selected strategies.");
    const groups = new Map<string, Dict[]>();
    for (const r of rows) {
      if ((r.empty_model as number) > 0 || (r.empty_judge as number) > 0) continue;
      const key = JSON.stringify([r.strategy, r.model, r.sufficiency]);
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    const summary = [...groups.values()].map((g) => {
      const [first] = g;
      const abstained = g.reduce((n, r) => n + (r.abstained as number), 0);
      const strategy = first.strategy as Strategy;
      return {
        scenario: SCENARIO[strategy][0],
        metric_type: SCENARIO[strategy][1],
        strategy,
        model: first.model as string,
        final_human_sufficiency: first.sufficiency as string,
        n_cases: new Set(g.map((r) => r.sample_id)).size,
        n_abstained: abstained,
        n_diagnosed: g.length - abstained,
        abstention_rate: abstained / g.length,
        diagnosis_rate: (g.length - abstained) / g.length,
        n_rows: g.length,
        seeds: [...new Set(g.map((r) => r.seed))],
      };
    });
    summary.sort(byKeys("scenario", "strategy", "model", "final_human_sufficiency"));
    const qcGroups = new Map<string, Dict[]>();
    for (const r of rows) {
      const key = JSON.stringify([r.model, r.strategy]);
      qcGroups.set(key, [...(qcGroups.get(key) ?? []), r]);
    }
    const emptyOutputQc = [...qcGroups.values()]
      .map((g) => {
        const sum = (k: string) => g.reduce((n, r) => n + (r[k] as number), 0);
        const has = (k: string) => g.filter((r) => (r[k] as number) > 0).length;
        return {
          model: g[0].model as string,
          strategy: g[0].strategy as string,
          n_cases: new Set(g.map((r) => r.sample_id)).size,
          valid_cases: g.filter((r) => r.empty_model === 0 && r.empty_judge === 0).length,
          total_steps_checked: sum("steps"),
          cases_with_empty_model_output: has("empty_model"),
          cases_with_empty_judge_output: has("empty_judge"),
          total_empty_model_outputs: sum("empty_model"),
          total_empty_judge_outputs: sum("empty_judge"),
        };
      })
      .sort(byKeys("model", "strategy"));
    return { summary, empty_output_qc: emptyOutputQc };
  });
}
