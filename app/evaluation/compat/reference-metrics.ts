/**
 * `metrics --compat reference`: runs every script emulation of this folder and gathers, per model × strategy, the
 * number each of the paper's figures plots. Each script's tables are also returned as it writes them.
 */
import {
  compareResults,
  emptyLevels,
  emptyTiming,
  type LevelMetrics,
  type Metric,
  type MetricsOutput,
  type MetricsResult,
  single,
  STAGES,
} from "../domain/metrics";
import type { TrajectoryFile } from "../domain/metrics-inputs";
import { STRATEGIES, type Strategy } from "../domain/runner-protocol";
import { abstentionScript } from "./abstention-rate";
import { clarificationScript, NEUTRAL } from "./clarification-seeking";
import { accuracyScript, levelCounts } from "./diagnosis-accuracy";
import { figures56 } from "./figures-5-6";
import { seedScript } from "./multiple-seed-runs";
import { prematureScript, TIMING_STRATEGY } from "./premature-diagnoses";
import { cmp, type Dict, isDict, normalizeText, type Py, pyStr } from "./python-semantics";

const level = (k: number, n: number): Metric | null => single(k, n);

function levelsFrom(rows: readonly Dict[]): LevelMetrics {
  if (rows.length === 0) return emptyLevels();
  const c = levelCounts(rows);
  return {
    diagnosis: level(c.diagnosis, c.total),
    category: level(c.category, c.total),
    group: level(c.group, c.total),
  };
}

const SOURCES = {
  abstention: "abstention_rate/process.py",
  clarification: "clarification_seeking/process.py",
  timing: "premature_diagnoses/process.py",
  figures56: "premature_diagnoses/figures_5_6.py",
  accuracy: "diagnosis_accuracy/process.py",
  seeds: "multiple_seed_runs/process.py",
} as const;

/**
 * Runs every script's emulation. `runsFiles` are the files under the reference's `runs/` (scripts 4.1–4.4);
 * `seedFiles` those under `evaluations/multiple_seed_runs/runs_seeds/` (4.5).
 */
export function computeReferenceMetrics(
  goldItems: readonly unknown[],
  runsFiles: readonly TrajectoryFile[],
  seedFiles: readonly TrajectoryFile[],
): MetricsOutput {
  const gt = [...goldItems];
  const abstention = abstentionScript(gt, runsFiles);
  const clarification = clarificationScript(gt, runsFiles);
  const premature = prematureScript(gt, runsFiles);
  const figures = figures56(gt, premature.status === "ok" ? premature.per_sample : []);
  const accuracy = accuracyScript(gt, runsFiles);
  const seeds = seedScript(gt, seedFiles);
  const warnings: string[] = [];
  for (const [name, out] of [
    [SOURCES.abstention, abstention],
    [SOURCES.clarification, clarification],
    [SOURCES.timing, premature],
    [SOURCES.figures56, figures],
    [SOURCES.accuracy, accuracy],
    [SOURCES.seeds, seeds],
  ] as const) {
    if (out.status === "crashed") warnings.push(`${name} would stop with ${out.error}`);
  }
  if (accuracy.status === "ok") {
    const { figure8, figure9 } = accuracy.figure_model_filter;
    for (const [scripts, f] of [
      ["figure8.py keeps only the models of its", figure8],
      ["figure9.py and appendixfigure5.py keep only the models of their", figure9],
    ] as const)
      if (f.dropped.length) warnings.push(`diagnosis_accuracy/${scripts} name map: dropped ${f.dropped.join(", ")}`);
    const categories = accuracy.figure_model_filter.appendix_figure5.categories_dropped;
    if (categories.length)
      warnings.push(
        `diagnosis_accuracy/appendixfigure5.py plots only categories with at least 5 cases, the 6 best and the 6 worst: dropped ${categories
          .map((c) => `${c.gt_3char} (${c.total_cases} case${c.total_cases === 1 ? "" : "s"}, ${c.reason})`)
          .join(", ")}`,
      );
  }

  // docs/evaluation.md#stage-1-clarification-script: the stage-1 denominator depends on whether the export wrote presenting_symptoms_label.
  const labelled = gt.filter(
    (it) => isDict(it) && "presenting_symptoms_label" in (isDict(it.original_row) ? it.original_row : it),
  ).length;
  if (labelled === 0) {
    warnings.push(
      "data_gt.json has no presenting_symptoms_label (as released): clarification_seeking/process.py counts every case " +
        "in the stage-1 denominator, not only the expert's stage-1 Clarify cases",
    );
  } else if (labelled < gt.length) {
    warnings.push(
      `only ${labelled} of ${gt.length} gold records have presenting_symptoms_label; the others count as Clarify`,
    );
  }

  const results = new Map<string, MetricsResult>();
  const seedsOf = new Map<string, Set<string>>();
  const resultFor = (model: string, strategy: Strategy): MetricsResult => {
    const key = JSON.stringify([model, strategy]);
    let r = results.get(key);
    if (!r) {
      r = {
        model,
        strategy,
        n_seeds: 0,
        seeds: [],
        metrics: {
          under_abstention: null,
          over_abstention: null,
          stage1_clarification_rate: null,
          timing: emptyTiming(),
          accuracy: emptyLevels(),
        },
        cumulative: null,
        accuracy_by_timing: null,
        accuracy_by_agreement: { agreement: emptyLevels(), disagreement: emptyLevels() },
        accuracy_by_category: [],
        qc: {},
        sources: {},
      };
      results.set(key, r);
      seedsOf.set(key, new Set());
    }
    return r;
  };
  const addSeeds = (r: MetricsResult, seeds: readonly Py[]) => {
    const set = seedsOf.get(JSON.stringify([r.model, r.strategy]))!;
    for (const s of seeds) set.add(pyStr(s));
  };

  if (abstention.status === "ok") {
    for (const row of abstention.summary) {
      const r = resultFor(row.model, row.strategy);
      addSeeds(r, row.seeds);
      const rate = row.abstention_rate;
      if (row.final_human_sufficiency === "insufficient") {
        r.metrics.under_abstention = { mean: 1 - rate, sd: null, ci95: null, n: 1 };
        r.qc.insufficient_cases = row.n_rows;
      } else {
        r.metrics.over_abstention = { mean: rate, sd: null, ci95: null, n: 1 };
        r.qc.sufficient_cases = row.n_rows;
      }
      r.sources!.under_abstention = SOURCES.abstention;
      r.sources!.over_abstention = SOURCES.abstention;
    }
    for (const q of abstention.empty_output_qc) {
      const r = resultFor(q.model, q.strategy as Strategy);
      Object.assign(r.qc, {
        trajectories: q.n_cases,
        valid_cases: q.valid_cases,
        cases_with_empty_model_output: q.cases_with_empty_model_output,
        cases_with_empty_judge_output: q.cases_with_empty_judge_output,
      });
    }
  }
  if (clarification.status === "ok") {
    for (const row of clarification.rows) {
      const r = resultFor(row.model, NEUTRAL);
      addSeeds(r, row.seeds);
      r.metrics.stage1_clarification_rate = single(row.count_stage1_clarify, row.total_gt_stage1_clarify_cases);
      r.qc.stage1_clarify_cases = row.total_gt_stage1_clarify_cases;
      r.sources!.stage1_clarification_rate = SOURCES.clarification;
    }
  }
  if (premature.status === "ok") {
    for (const row of premature.summary) {
      const strategy = TIMING_STRATEGY[row.strategy];
      if (!strategy) continue;
      const r = resultFor(row.model, strategy);
      addSeeds(r, row.seeds);
      r.metrics.timing = {
        premature: single(row.count_premature, row.total_cases),
        on_time: single(row.count_on_time, row.total_cases),
        late: single(row.count_late, row.total_cases),
        never: single(row.count_never, row.total_cases),
      };
      r.qc.timed_cases = row.total_cases;
      r.sources!.timing = SOURCES.timing;
      const rows = premature.per_sample.filter((p) => p.model === row.model && p.strategy === row.strategy);
      const curve = STAGES.map((s) =>
        single(
          rows.filter((p) => p.model_first_diagnosis_step !== null && (p.model_first_diagnosis_step as number) <= s)
            .length,
          rows.length,
        ),
      );
      const expert = figures.status === "ok" ? figures.cumulative.expert : [];
      r.cumulative = {
        stages: [...STAGES],
        model: curve,
        expert: STAGES.map((_, i) =>
          expert[i] === undefined ? null : { mean: expert[i], sd: null, ci95: null, n: 1 },
        ),
      };
      r.sources!.cumulative = SOURCES.figures56;
    }
  }
  if (accuracy.status === "ok") {
    const groups = new Map<string, Dict[]>();
    for (const row of accuracy.per_sample) {
      if (!(STRATEGIES as readonly Py[]).includes(row.strategy)) continue;
      const key = JSON.stringify([row.model, row.strategy]);
      groups.set(key, [...(groups.get(key) ?? []), row]);
    }
    for (const [key, rows] of groups) {
      const [model, strategy] = JSON.parse(key) as [string, Strategy];
      const r = resultFor(model, strategy);
      addSeeds(
        r,
        rows.map((x) => x.seed),
      );
      r.metrics.accuracy = levelsFrom(rows);
      r.qc.accuracy_cases = rows.length;
      r.sources!.accuracy = SOURCES.accuracy;
      r.accuracy_by_agreement = {
        agreement: levelsFrom(rows.filter((x) => x.doctor_agreement === "agreement")),
        disagreement: levelsFrom(rows.filter((x) => x.doctor_agreement === "disagreement")),
      };
      if (strategy.startsWith("sequential_")) {
        const t = (c: string) => levelsFrom(rows.filter((x) => x.timing_category === c));
        r.accuracy_by_timing = { premature: t("premature"), on_time: t("on_time"), late: t("late") };
      }
      const categories = [...new Set(rows.map((x) => x.gt_3char).filter((c): c is string => typeof c === "string"))];
      r.accuracy_by_category = categories
        .map((category) => {
          const c = rows.filter((x) => x.gt_3char === category);
          return { category, cases: c.length, accuracy: levelsFrom(c) };
        })
        .sort((a, b) => b.cases - a.cases || cmp(a.category, b.category));
    }
  }
  if (seeds.status === "ok") {
    for (const model of seeds.models) {
      const r = results.get(JSON.stringify([model, "full_info_abstention_aware"]));
      if (!r) continue;
      r.seed_variability = {
        under_abstention: seeds.metric(model, "under_abstention"),
        over_abstention: seeds.metric(model, "over_abstention"),
        accuracy: {
          diagnosis: seeds.metric(model, "accuracy_diagnosis_level"),
          category: seeds.metric(model, "accuracy_3char"),
          group: seeds.metric(model, "accuracy_high_class"),
        },
      };
    }
  }
  for (const [key, r] of results) {
    const seeds = [...seedsOf.get(key)!].map((s) => (/^\d+$/.test(s) ? Number(s) : null));
    r.seeds = [...new Set(seeds)].sort((a, b) => (a ?? -1) - (b ?? -1));
    r.n_seeds = r.seeds.length;
  }

  const strip = <T extends Dict>(o: T, ...keys: string[]) =>
    Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
  const referenceScripts: Record<string, unknown> = {
    [SOURCES.abstention]:
      abstention.status === "ok"
        ? {
            status: "ok",
            summary: abstention.summary.map((r) => strip(r, "seeds", "n_rows")),
            empty_output_qc: abstention.empty_output_qc,
          }
        : abstention,
    [SOURCES.clarification]:
      clarification.status === "ok"
        ? { status: "ok", rows: clarification.rows.map((r) => strip(r, "seeds")) }
        : clarification,
    [SOURCES.timing]:
      premature.status === "ok"
        ? { status: "ok", summary: premature.summary.map((r) => strip(r, "seeds")), per_stage: premature.per_stage }
        : premature,
    [SOURCES.figures56]: figures,
    [SOURCES.accuracy]: accuracy.status === "ok" ? strip(accuracy, "per_sample") : accuracy,
    [SOURCES.seeds]: seeds.status === "ok" ? { status: "ok", per_seed: seeds.per_seed, summary: seeds.summary } : seeds,
  };
  const gold = goldCounts(gt);
  return {
    mode: "reference",
    results: [...results.values()].sort(compareResults),
    expert_curve: figures.status === "ok" ? figures.cumulative.expert : [],
    gold,
    warnings,
    reference_scripts: referenceScripts,
  };
}

function goldCounts(items: readonly Py[]) {
  let sufficient = 0;
  let insufficient = 0;
  for (const it of items) {
    const row = isDict(it) ? (isDict(it.original_row) ? it.original_row : it) : {};
    const v = normalizeText((row as Dict).diagnosis_sufficiency);
    if (v === "1") sufficient++;
    else if (v === "0") insufficient++;
  }
  return {
    cases: sufficient + insufficient,
    sufficient,
    insufficient,
    unusable: items.length - sufficient - insufficient,
  };
}
