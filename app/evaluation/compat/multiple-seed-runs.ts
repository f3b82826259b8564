/** Emulation of the reference's `evaluations/multiple_seed_runs/process.py`. */
import { REFERENCE_NAMES } from "../../labels/labels";
import { pyStrip } from "../../python-compat/text";
import { compatNormalizeIcd10 } from "../../icd10/icd10";
import { fileName, parentName, type TrajectoryFile } from "../domain/metrics-inputs";
import { type Metric, summarizeValues } from "../domain/metrics";
import { levelCounts } from "./diagnosis-accuracy";
import {
  byKeys,
  cmp,
  type Dict,
  fileLines,
  get,
  guard,
  item,
  iterate,
  jsonLoads,
  normalizeText,
  type Py,
  pyStr,
  ScriptCrash,
  sortedSteps,
  pyTruthy,
} from "./python-semantics";
import { actionA, extractCodeX, matchRow } from "./trajectory-fields";

export function seedScript(gtItems: Py[], files: readonly TrajectoryFile[]) {
  return guard(() => {
    const gt = new Map<string, { sufficiency: string | null; diagnosis: string | null }>();
    for (const rec of gtItems) {
      const suff = normalizeText(get(rec, REFERENCE_NAMES.sufficiency));
      gt.set(pyStr(item(rec, "id")), {
        sufficiency: suff === "1" ? "sufficient" : suff === "0" ? "insufficient" : null,
        diagnosis: compatNormalizeIcd10(normalizeText(get(rec, REFERENCE_NAMES.icd10))),
      });
    }
    const matched = files.filter((f) => fileName(f.path) === "trajectories.jsonl").sort((a, b) => cmp(a.path, b.path));
    if (matched.length === 0)
      throw new ScriptCrash("FileNotFoundError: No trajectories.jsonl files found under runs_seeds");
    const rows: Dict[] = [];
    for (const file of matched) {
      const folder = parentName(file.path);
      const seedMatch = /_seed-(\d+)(?:_|$)/.exec(folder);
      const marker = "_full_info_abstention_aware_";
      if (!seedMatch || !folder.includes(marker)) continue;
      const folderModel = folder.slice(0, folder.indexOf(marker));
      const seed = Number(seedMatch[1]);
      const records = fileLines(file.text)
        .map(pyStrip)
        .filter((l) => l !== "")
        .map((l) => jsonLoads(l, file.path));
      for (const rec of records) {
        if (get(rec, "strategy") !== "full_info_abstention_aware") continue;
        const g = gt.get(pyStr(get(rec, "sample_id")));
        if (!g || g.sufficiency === null) continue;
        let abstained = normalizeText(get(rec, "stopping_reason")).toLowerCase() === "abstain";
        for (const step of iterate(get(rec, "trajectory", []))) if (actionA(step, true) === "abstain") abstained = true;
        let pred: string | null = null;
        for (const step of sortedSteps(get(rec, "trajectory", []))) {
          const code = extractCodeX(get(step, "judge_output_raw", ""));
          if (actionA(step, true) === "diagnose") {
            pred = code;
            break;
          }
        }
        if (!pred) {
          for (const step of sortedSteps(get(rec, "trajectory", []))) {
            const code = extractCodeX(get(step, "judge_output_raw", ""));
            if (code) pred = code;
          }
        }
        const scored = g.sufficiency === "sufficient" && !!g.diagnosis && !!pred && !abstained;
        const modelEvaluated = get(rec, "model_evaluated");
        rows.push({
          model: pyTruthy(modelEvaluated) ? pyStr(modelEvaluated) : folderModel,
          seed,
          sample_id: pyStr(get(rec, "sample_id")),
          sufficiency: g.sufficiency,
          abstained: abstained ? 1 : 0,
          scored,
          ...(scored ? matchRow(g.diagnosis, pred, "seeds") : {}),
        });
      }
    }
    if (rows.length === 0) throw new ScriptCrash("ValueError: No matching records found.");
    const perSeed: Dict[] = [];
    const keyed = new Map<string, Dict[]>();
    for (const r of rows) {
      const k = JSON.stringify([r.model, r.seed]);
      keyed.set(k, [...(keyed.get(k) ?? []), r]);
    }
    const pairs = [...keyed.entries()]
      .map(([k, rs]) => ({ key: JSON.parse(k) as [string, number], rs }))
      .sort((a, b) => cmp(a.key[0], b.key[0]) || a.key[1] - b.key[1]);
    const diagPerSeed = new Map<string, Dict>();
    for (const { key, rs } of pairs) {
      const scored = rs.filter((r) => r.scored);
      const diag =
        scored.length > 0
          ? {
              n_diagnosis_eval: new Set(scored.map((r) => r.sample_id)).size,
              accuracy_diagnosis_level: levelCounts(scored).diagnosis / scored.length,
              accuracy_3char: levelCounts(scored).category / scored.length,
              accuracy_high_class: levelCounts(scored).group / scored.length,
            }
          : { n_diagnosis_eval: null, accuracy_diagnosis_level: null, accuracy_3char: null, accuracy_high_class: null };
      if (scored.length > 0) diagPerSeed.set(JSON.stringify(key), diag);
      for (const sufficiency of ["insufficient", "sufficient"]) {
        const g = rs.filter((r) => r.sufficiency === sufficiency);
        if (g.length === 0) continue;
        const rate = g.reduce((n, r) => n + (r.abstained as number), 0) / g.length;
        perSeed.push({
          model: key[0],
          seed: key[1],
          final_human_sufficiency: sufficiency,
          n_samples: new Set(g.map((r) => r.sample_id)).size,
          n_abstained: g.reduce((n, r) => n + (r.abstained as number), 0),
          abstention_rate: rate,
          under_abstention: sufficiency === "insufficient" ? 1 - rate : null,
          over_abstention: sufficiency === "sufficient" ? rate : null,
          ...diag,
        });
      }
    }
    const models = [...new Set(pairs.map((p) => p.key[0]))];
    const summary: Dict[] = [];
    const metricOf = new Map<string, Metric | null>();
    for (const model of models) {
      const mine = perSeed.filter((r) => r.model === model);
      const diag = pairs
        .filter((p) => p.key[0] === model)
        .map((p) => diagPerSeed.get(JSON.stringify(p.key)))
        .filter((d): d is Dict => !!d);
      const series: [string, (number | null)[]][] = [
        [
          "under_abstention",
          mine.filter((r) => r.final_human_sufficiency === "insufficient").map((r) => r.under_abstention as number),
        ],
        [
          "over_abstention",
          mine.filter((r) => r.final_human_sufficiency === "sufficient").map((r) => r.over_abstention as number),
        ],
        ["accuracy_diagnosis_level", diag.map((d) => d.accuracy_diagnosis_level as number)],
        ["accuracy_3char", diag.map((d) => d.accuracy_3char as number)],
        ["accuracy_high_class", diag.map((d) => d.accuracy_high_class as number)],
      ];
      for (const [metric, values] of series) {
        const m = summarizeValues(values);
        metricOf.set(JSON.stringify([model, metric]), m);
        summary.push({
          model,
          metric,
          n_seeds: m?.n ?? 0,
          mean: m?.mean ?? null,
          sd: m?.sd ?? null,
          ci95_lower: m?.ci95?.[0] ?? null,
          ci95_upper: m?.ci95?.[1] ?? null,
          mean_pct: m ? m.mean * 100 : null,
          sd_pct: m?.sd != null ? m.sd * 100 : null,
          ci95_lower_pct: m?.ci95 ? m.ci95[0] * 100 : null,
          ci95_upper_pct: m?.ci95 ? m.ci95[1] * 100 : null,
        });
      }
    }
    summary.sort(byKeys("metric", "model"));
    return {
      per_seed: perSeed,
      summary,
      metric: (model: string, name: string) => metricOf.get(JSON.stringify([model, name])) ?? null,
      models,
    };
  });
}
