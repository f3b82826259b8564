/** Emulation of the reference's `evaluations/clarification_seeking/process.py`. */
import { pyStrip } from "../../python-compat/text";
import { fileName, parentName, parentPath, type TrajectoryFile } from "../domain/metrics-inputs";
import {
  cmp,
  get,
  guard,
  item,
  iterate,
  loadJsonlSkipping,
  pct,
  type Py,
  pyStr,
  ScriptCrash,
  pyTruthy,
} from "./python-semantics";

export const NEUTRAL = "sequential_info_neutral_prompting";

export function clarificationScript(gtItems: Py[], files: readonly TrajectoryFile[]) {
  return guard(() => {
    // Direct subfolders of runs/ whose name holds the strategy, each with a trajectories.jsonl.
    const selected = files
      .filter((f) => fileName(f.path) === "trajectories.jsonl" && parentPath(parentPath(f.path)) === "runs")
      .filter((f) => parentName(f.path).includes(NEUTRAL))
      .sort((a, b) => cmp(a.path, b.path));
    if (selected.length === 0) {
      throw new ScriptCrash(
        `FileNotFoundError: No folders containing '${NEUTRAL}' with trajectories.jsonl found in runs`,
      );
    }
    const clarifyIds = new Set<string>();
    for (const it of gtItems) {
      const id = pyStrip(pyStr(item(it, "id")));
      const row = get(it, "original_row", it);
      const label = pyStrip(pyStr(get(row, "presenting_symptoms_label", "")));
      if (label === "" || label === "Clarify") clarifyIds.add(id);
    }
    const totals = new Map<string, { total: number; clarify: number; seeds: Set<Py> }>();
    for (const file of selected) {
      const folder = parentName(file.path);
      const model = folder.includes(`_${NEUTRAL}`) ? folder.slice(0, folder.indexOf(`_${NEUTRAL}`)) : folder;
      for (const record of loadJsonlSkipping(file.text)) {
        const sampleId = pyStrip(pyStr(get(record, "sample_id", get(record, "id", ""))));
        if (!clarifyIds.has(sampleId)) continue;
        const t = totals.get(model) ?? { total: 0, clarify: 0, seeds: new Set() };
        totals.set(model, t);
        t.total++;
        t.seeds.add(get(record, "seed"));
        let stage1: Py = null;
        for (const step of iterate(get(record, "trajectory", []))) {
          const index = get(step, "step_index");
          if (!(index === 1 || index === true)) continue;
          if (pyTruthy(get(step, "new_judge_action"))) stage1 = get(step, "new_judge_action");
          else if (pyTruthy(get(get(step, "new_judge_output", {}), "action")))
            stage1 = get(get(step, "new_judge_output"), "action");
          else stage1 = get(step, "judge_action");
          break;
        }
        if (pyStrip(pyStr(stage1)) === "Clarify") t.clarify++;
      }
    }
    const rows = [...totals.entries()]
      .sort(([a], [b]) => cmp(a, b))
      .map(([model, t]) => ({
        model,
        total_gt_stage1_clarify_cases: t.total,
        count_stage1_clarify: t.clarify,
        count_not_stage1_clarify: t.total - t.clarify,
        pct_stage1_clarify: pct(t.clarify, t.total),
        pct_not_stage1_clarify: pct(t.total - t.clarify, t.total),
        seeds: [...t.seeds],
      }));
    return { rows };
  });
}
