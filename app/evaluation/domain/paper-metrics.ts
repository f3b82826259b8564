/**
 * Paper mode (appendix 9.2): trajectories with an empty model output or a judge failure are excluded from every
 * metric and counted; timing is over cases with a sufficient gold label and an earliest sufficient section; the
 * stage-1 denominator comes from the expert labels; accuracy is over diagnosed cases with a gold code.
 */
import { matchIcd10 } from "../../icd10/icd10";
import { isSequential, type Strategy } from "./runner-protocol";
import {
  compareResults,
  type LevelMetrics,
  type MetricsOutput,
  type MetricsResult,
  ratio,
  STAGES,
  summarizeValues,
  type TimingMetrics,
} from "./metrics";
import { type GoldCase, readGold, type TrajectoryFile } from "./metrics-inputs";
import { collectRecords, type RunRecord, type ScoredTrajectory, scoreTrajectory } from "./metrics-trajectories";

interface SeedValues {
  seed: number | null;
  under: number | null;
  over: number | null;
  stage1: number | null;
  timing: Record<keyof TimingMetrics, number | null>;
  accuracy: Levels;
  byTiming: Record<"premature" | "on_time" | "late", Levels>;
  byAgreement: Record<"agreement" | "disagreement", Levels>;
  byCategory: Map<string, { cases: number; levels: Levels }>;
  cumulative: { model: (number | null)[]; expert: (number | null)[] };
  qc: Record<string, number>;
}

type Levels = { diagnosis: number | null; category: number | null; group: number | null };

interface Scored {
  gold: GoldCase;
  t: ScoredTrajectory;
}

function levels(cases: readonly Scored[]): Levels {
  let d = 0;
  let c = 0;
  let g = 0;
  for (const { gold, t } of cases) {
    const m = matchIcd10(gold.code, t.code);
    d += m.diagnosisLevel ? 1 : 0;
    c += m.category ? 1 : 0;
    g += m.block ? 1 : 0;
  }
  const n = cases.length;
  return { diagnosis: ratio(d, n), category: ratio(c, n), group: ratio(g, n) };
}

function timingOf(t: ScoredTrajectory, tau: number): keyof TimingMetrics {
  if (t.firstDiagnosis === null) return "never";
  return t.firstDiagnosis < tau ? "premature" : t.firstDiagnosis === tau ? "on_time" : "late";
}

function seedValues(
  strategy: Strategy,
  seed: number | null,
  runs: readonly RunRecord[],
  gold: Map<string, GoldCase>,
): SeedValues {
  const qc: Record<string, number> = {
    trajectories: runs.length,
    duplicates: 0,
    unknown_cases: 0,
    excluded_empty_output: 0,
    excluded_judge_failure: 0,
    excluded_no_steps: 0,
    scored: 0,
    diagnosed_without_code: 0,
  };
  const seen = new Set<string>();
  const valid: Scored[] = [];
  for (const r of runs) {
    if (seen.has(r.sampleId)) {
      qc.duplicates++;
      continue;
    }
    seen.add(r.sampleId);
    const g = gold.get(r.sampleId);
    if (!g) {
      qc.unknown_cases++;
      continue;
    }
    const t = scoreTrajectory(r.record, r.sampleId);
    if (t.excluded) {
      qc[`excluded_${t.excluded}`]++;
      continue;
    }
    qc.scored++;
    valid.push({ gold: g, t });
  }
  const sequential = isSequential(strategy);
  const insufficient = valid.filter((v) => !v.gold.sufficient);
  const sufficient = valid.filter((v) => v.gold.sufficient);
  const diagnosed = (v: Scored) => v.t.firstDiagnosis !== null;

  // Stage 1: expert label Clarify = not (sufficient with τ = 1); sufficient cases without τ are not labelled.
  const stage1Cases = valid.filter((v) => !v.gold.sufficient || (v.gold.tau !== null && v.gold.tau > 1));
  const timed = sufficient.filter((v) => v.gold.tau !== null);
  const timingCounts = { premature: 0, on_time: 0, late: 0, never: 0 };
  for (const v of timed) timingCounts[timingOf(v.t, v.gold.tau as number)]++;

  const scoredForAccuracy = sufficient.filter((v) => v.gold.code !== null && diagnosed(v));
  qc.diagnosed_without_code = scoredForAccuracy.filter((v) => v.t.code === null).length;
  const byTimingCases = (which: "premature" | "on_time" | "late") =>
    scoredForAccuracy.filter((v) => v.gold.tau !== null && timingOf(v.t, v.gold.tau) === which);
  const byCategory = new Map<string, { cases: number; levels: Levels }>();
  const categories = [...new Set(scoredForAccuracy.map((v) => (v.gold.code as string).slice(0, 3)))];
  for (const c of categories) {
    const cases = scoredForAccuracy.filter((v) => (v.gold.code as string).slice(0, 3) === c);
    byCategory.set(c, { cases: cases.length, levels: levels(cases) });
  }
  const curve = (hit: (v: Scored, s: number) => boolean) =>
    STAGES.map((s) => ratio(valid.filter((v) => hit(v, s)).length, valid.length));

  return {
    seed,
    under: ratio(insufficient.filter(diagnosed).length, insufficient.length),
    over: ratio(sufficient.filter((v) => !diagnosed(v)).length, sufficient.length),
    stage1: sequential
      ? ratio(stage1Cases.filter((v) => v.t.stage1Action === "clarify").length, stage1Cases.length)
      : null,
    timing: {
      premature: sequential ? ratio(timingCounts.premature, timed.length) : null,
      on_time: sequential ? ratio(timingCounts.on_time, timed.length) : null,
      late: sequential ? ratio(timingCounts.late, timed.length) : null,
      never: sequential ? ratio(timingCounts.never, timed.length) : null,
    },
    accuracy: levels(scoredForAccuracy),
    byTiming: {
      premature: levels(byTimingCases("premature")),
      on_time: levels(byTimingCases("on_time")),
      late: levels(byTimingCases("late")),
    },
    byAgreement: {
      agreement: levels(scoredForAccuracy.filter((v) => v.gold.agreementCase)),
      disagreement: levels(scoredForAccuracy.filter((v) => !v.gold.agreementCase)),
    },
    byCategory,
    cumulative: {
      model: curve((v, s) => v.t.firstDiagnosis !== null && v.t.firstDiagnosis <= s),
      expert: curve((v, s) => v.gold.sufficient && v.gold.tau !== null && v.gold.tau <= s),
    },
    qc: {
      ...qc,
      insufficient_cases: insufficient.length,
      sufficient_cases: sufficient.length,
      stage1_clarify_cases: sequential ? stage1Cases.length : 0,
      timed_cases: sequential ? timed.length : 0,
      accuracy_cases: scoredForAccuracy.length,
    },
  };
}

const summarizeLevels = (rows: readonly Levels[]): LevelMetrics => ({
  diagnosis: summarizeValues(rows.map((r) => r.diagnosis)),
  category: summarizeValues(rows.map((r) => r.category)),
  group: summarizeValues(rows.map((r) => r.group)),
});

/** The expert sufficiency curve over gold cases: the fraction with a sufficient label and τ ≤ s, s = 1..5. */
export function expertCurve(gold: Map<string, GoldCase>): number[] {
  const all = [...gold.values()];
  return STAGES.map((s) =>
    all.length > 0 ? all.filter((g) => g.sufficient && g.tau !== null && g.tau <= s).length / all.length : 0,
  );
}

/** The paper-mode metrics of every (model, strategy) found in the files. */
export function computePaperMetrics(goldItems: readonly unknown[], files: readonly TrajectoryFile[]): MetricsOutput {
  const gold = readGold(goldItems);
  const { records, badLines, skipped } = collectRecords(files);
  const warnings = [...gold.warnings];
  if (badLines > 0) warnings.push(`${badLines} lines of trajectory files are not valid JSON and were skipped`);
  if (skipped > 0) warnings.push(`${skipped} records have no sample_id or strategy and were skipped`);

  const groups = new Map<string, RunRecord[]>();
  for (const r of records) {
    const key = JSON.stringify([r.model, r.strategy]);
    const list = groups.get(key);
    if (list) list.push(r);
    else groups.set(key, [r]);
  }
  const results: MetricsResult[] = [];
  for (const [key, runs] of groups) {
    const [model, strategy] = JSON.parse(key) as [string, Strategy];
    const seeds = [...new Set(runs.map((r) => r.seed))].sort((a, b) => (a ?? -1) - (b ?? -1));
    const perSeed = seeds.map((seed) =>
      seedValues(
        strategy,
        seed,
        runs.filter((r) => r.seed === seed),
        gold.cases,
      ),
    );
    const sequential = isSequential(strategy);
    const qc: Record<string, number> = {};
    for (const s of perSeed) for (const [k, v] of Object.entries(s.qc)) qc[k] = (qc[k] ?? 0) + v;
    const categories = [...new Set(perSeed.flatMap((s) => [...s.byCategory.keys()]))];
    const byCategory = categories
      .map((category) => {
        const rows = perSeed.map((s) => s.byCategory.get(category));
        return {
          category,
          cases: rows.reduce((n, r) => n + (r?.cases ?? 0), 0),
          accuracy: summarizeLevels(rows.map((r) => r?.levels ?? { diagnosis: null, category: null, group: null })),
        };
      })
      .sort((a, b) => b.cases - a.cases || (a.category < b.category ? -1 : 1));
    results.push({
      model,
      strategy,
      n_seeds: seeds.length,
      seeds,
      metrics: {
        under_abstention: summarizeValues(perSeed.map((s) => s.under)),
        over_abstention: summarizeValues(perSeed.map((s) => s.over)),
        stage1_clarification_rate: summarizeValues(perSeed.map((s) => s.stage1)),
        timing: {
          premature: summarizeValues(perSeed.map((s) => s.timing.premature)),
          on_time: summarizeValues(perSeed.map((s) => s.timing.on_time)),
          late: summarizeValues(perSeed.map((s) => s.timing.late)),
          never: summarizeValues(perSeed.map((s) => s.timing.never)),
        },
        accuracy: summarizeLevels(perSeed.map((s) => s.accuracy)),
      },
      cumulative: sequential
        ? {
            stages: [...STAGES],
            model: STAGES.map((_, i) => summarizeValues(perSeed.map((s) => s.cumulative.model[i]))),
            expert: STAGES.map((_, i) => summarizeValues(perSeed.map((s) => s.cumulative.expert[i]))),
          }
        : null,
      accuracy_by_timing: sequential
        ? {
            premature: summarizeLevels(perSeed.map((s) => s.byTiming.premature)),
            on_time: summarizeLevels(perSeed.map((s) => s.byTiming.on_time)),
            late: summarizeLevels(perSeed.map((s) => s.byTiming.late)),
          }
        : null,
      accuracy_by_agreement: {
        agreement: summarizeLevels(perSeed.map((s) => s.byAgreement.agreement)),
        disagreement: summarizeLevels(perSeed.map((s) => s.byAgreement.disagreement)),
      },
      accuracy_by_category: byCategory,
      qc,
    });
  }
  results.sort(compareResults);
  const all = [...gold.cases.values()];
  return {
    mode: "paper",
    results,
    expert_curve: expertCurve(gold.cases),
    gold: {
      cases: all.length,
      sufficient: all.filter((g) => g.sufficient).length,
      insufficient: all.filter((g) => !g.sufficient).length,
      unusable: gold.unusable,
    },
    warnings,
  };
}
