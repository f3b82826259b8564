/**
 * Emulation of the reference's `evaluations/diagnosis_accuracy/process.py`, with the per-sample aggregations of
 * figures 7, 8, 9 and appendix figure 5.
 */
import { REFERENCE_NAMES } from "../../labels/labels";
import { appendixFigure5Table, FIGURE9_MODELS, figure8Table, figure9Table, keepNamedModels } from "./reference-figures";
import { compatNormalizeIcd10 } from "../../icd10/icd10";
import { parentName, type TrajectoryFile } from "../domain/metrics-inputs";
import { starTrajectoriesJsonl, timingCategory } from "./premature-diagnoses";
import {
  cmp,
  type Dict,
  get,
  guard,
  isPyInt,
  loadJsonlSkipping,
  normalizeText,
  pct,
  type Py,
  pyIntOfFloat,
  pyIntValue,
  ScriptCrash,
  sortedSteps,
} from "./python-semantics";
import { actionA, extractCodeX, matchRow } from "./trajectory-fields";

const ACCURACY_MARKERS = [
  "_full_info_no_abstention",
  "_full_info_abstention_aware",
  "_sequential_info_neutral_prompting",
  "_sequential_info_abstention_aware",
  "_sequential_info_clarification_only",
  "_structured_actions",
];

const isYes = (v: Py) => ["1", "true", "yes"].includes(normalizeText(v).toLowerCase());

export function levelCounts(rows: readonly Dict[]) {
  const sum = (k: string) => rows.reduce((n, r) => n + (r[k] as number), 0);
  return {
    total: rows.length,
    diagnosis: sum("match_diagnosis_level"),
    category: sum("match_3char"),
    group: sum("match_high_class"),
  };
}

export function accuracyScript(gtItems: Py[], files: readonly TrajectoryFile[]) {
  return guard(() => {
    const gt = new Map<string, Dict>();
    for (const it of gtItems) {
      const id = normalizeText(get(it, "id"));
      if (!id) continue;
      const row = get(it, "original_row", it);
      const diagnosis = compatNormalizeIcd10(normalizeText(get(row, REFERENCE_NAMES.icd10, "")));
      if (!isYes(get(row, REFERENCE_NAMES.sufficiency, "")) || !diagnosis) continue;
      const agreement =
        isYes(get(row, REFERENCE_NAMES.sufficiencyAgreement, "")) &&
        isYes(get(row, REFERENCE_NAMES.diagnosisAgreement, ""));
      gt.set(id, {
        diagnosis,
        doctor_agreement: agreement ? "agreement" : "disagreement",
        earliest: pyIntOfFloat(normalizeText(get(row, REFERENCE_NAMES.earliestSection))),
      });
    }
    const matched = files.filter((f) => starTrajectoriesJsonl(f.path)).sort((a, b) => cmp(a.path, b.path));
    if (matched.length === 0) throw new ScriptCrash("FileNotFoundError: No trajectories files found under runs");
    const perSample: Dict[] = [];
    for (const file of matched) {
      const folder = parentName(file.path);
      const marker = ACCURACY_MARKERS.find((m) => folder.includes(m));
      const model = marker ? folder.slice(0, folder.indexOf(marker)) : folder;
      const strategy = marker ? marker.slice(1) : "unknown";
      for (const record of loadJsonlSkipping(file.text)) {
        const sampleId = normalizeText(get(record, "sample_id", get(record, "id", "")));
        const g = gt.get(sampleId);
        if (!g) continue;
        let first: number | null = null;
        let firstCode: string | null = null;
        for (const step of sortedSteps(get(record, "trajectory", []))) {
          const index = get(step, "step_index");
          const code = extractCodeX(get(step, "judge_output_raw", ""));
          if (actionA(step) === "diagnose" && isPyInt(index)) {
            first = pyIntValue(index);
            firstCode = code;
            break;
          }
        }
        let pred = firstCode;
        if (!pred) {
          let fallback: string | null = null;
          for (const step of sortedSteps(get(record, "trajectory", []))) {
            const code = extractCodeX(get(step, "judge_output_raw", ""));
            if (code) fallback = code;
            if (actionA(step) === "diagnose" && code) {
              fallback = code;
              break;
            }
          }
          pred = fallback;
        }
        const timing = timingCategory(first, g.earliest as number | null);
        if (!pred) continue;
        perSample.push({
          model,
          strategy,
          sample_id: sampleId,
          seed: get(record, "seed"),
          doctor_agreement: g.doctor_agreement,
          gold_earliest_sufficient_section: g.earliest,
          model_first_diagnosis_step: first,
          timing_category: timing,
          ...matchRow(g.diagnosis as string, pred, "accuracy"),
        });
      }
    }
    const accuracyRow = (rows: Dict[]) => {
      const c = levelCounts(rows);
      return {
        total_diagnosed_cases: c.total,
        correct_diagnosis_level: c.diagnosis,
        accuracy_diagnosis_level_pct: pct(c.diagnosis, c.total),
        correct_3char: c.category,
        accuracy_3char_pct: pct(c.category, c.total),
        correct_high_class: c.group,
        accuracy_high_class_pct: pct(c.group, c.total),
      };
    };
    const groupBy = (rows: Dict[], keyOf: (r: Dict) => Py[]) => {
      const m = new Map<string, Dict[]>();
      for (const r of rows) {
        const k = JSON.stringify(keyOf(r));
        m.set(k, [...(m.get(k) ?? []), r]);
      }
      return [...m.entries()].sort(([a], [b]) => cmp(a, b)).map(([k, rows]) => ({ key: JSON.parse(k) as Py[], rows }));
    };
    const full = perSample.filter((r) => r.strategy === "full_info_no_abstention");
    const byGranularity = groupBy(full, (r) => [r.model]).map(({ key, rows }) => ({
      model: key[0],
      strategy: "full_info_no_abstention",
      ...accuracyRow(rows),
    }));
    const sequential = perSample.filter(
      (r) =>
        (r.strategy === "sequential_info_abstention_aware" || r.strategy === "sequential_info_neutral_prompting") &&
        r.timing_category !== "unknown",
    );
    const byTiming = groupBy(sequential, (r) => [r.model, r.strategy, r.timing_category]).map(({ key, rows }) => ({
      model: key[0],
      strategy: key[1],
      timing_category: key[2],
      ...accuracyRow(rows),
    }));
    const aware = sequential.filter((r) => r.strategy === "sequential_info_abstention_aware");
    const scatter = groupBy(aware, (r) => [r.model]).map(({ key, rows }) => {
      const c = levelCounts(rows);
      return {
        model: key[0],
        strategy: "sequential_info_abstention_aware",
        total_diagnosed_cases: c.total,
        premature_diagnosis_rate_pct: pct(rows.filter((r) => r.timing_category === "premature").length, c.total),
        accuracy_diagnosis_level_pct: pct(c.diagnosis, c.total),
        correct_diagnosis_level: c.diagnosis,
      };
    });
    const fraction = (rows: Dict[]) => {
      const c = levelCounts(rows);
      return {
        total: c.total,
        diagnosis: c.total ? c.diagnosis / c.total : 0,
        category: c.total ? c.category / c.total : 0,
        group: c.total ? c.group / c.total : 0,
      };
    };
    const figure7 = Object.fromEntries(
      ["premature", "on_time"].map((t) => [t, fraction(aware.filter((r) => r.timing_category === t))]),
    );
    // Figures 8, 9 and appendix 5 keep only the models of their name maps (metrics-reference-figures.ts).
    const named = keepNamedModels(full, FIGURE9_MODELS);
    const figure8 = figure8Table(perSample);
    const figure9 = figure9Table(perSample).bars;
    // Appendix figure 5 also plots only some categories: at least 5 cases, the 6 best and the 6 worst.
    const appendixFigure5 = appendixFigure5Table(perSample);
    const withFraction = <R extends { correct_3char: number; total_cases: number }>(r: R) => ({
      ...r,
      accuracy_3char: r.correct_3char / r.total_cases,
    });
    return {
      accuracy_by_granularity: byGranularity,
      accuracy_by_timing: byTiming,
      scatter_premature_vs_accuracy: scatter,
      figure7_accuracy_by_timing: figure7,
      figure8_accuracy_3char_by_model: figure8.rows,
      figure9_accuracy_by_agreement: figure9,
      appendix_figure5_accuracy_by_category: appendixFigure5.plotted.map(withFraction),
      figure_model_filter: {
        figure8: figure8.filter,
        figure9: named.filter,
        appendix_figure5: { ...appendixFigure5.filter, categories_dropped: appendixFigure5.dropped.map(withFraction) },
      },
      per_sample: perSample,
    };
  });
}
