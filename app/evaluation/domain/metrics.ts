/**
 * Evaluation metrics from trajectory records written by Concord's runner or by the Safe-Psych reference, in two modes:
 * - `paper` (default): the paper's definitions (appendix 9.2), applied the same way to every strategy and seed —
 *   paper-metrics.ts, over the inputs of metrics-inputs.ts and the trajectories scored in metrics-trajectories.ts.
 * - `reference`: each reference script's own numbers, quirks included — app/evaluation/compat.
 *
 * This file holds the shapes both modes return and the summaries over seeds: mean, sample s.d. and the 95%
 * Student-t interval mean ± t₀.₉₇₅,ₙ₋₁·s/√n (paper appendix 9.5). Pure: the caller reads the files.
 */
import { STRATEGIES, type Strategy } from "./runner-protocol";
import { studentTQuantile } from "../../stats/index";

export type MetricsMode = "paper" | "reference";

/** A metric over seeds. `sd` and `ci95` are null with one seed; proportions are fractions in [0, 1]. */
export interface Metric {
  mean: number;
  sd: number | null;
  ci95: [number, number] | null;
  /** Number of seed values summarised (in reference mode: 1, the scripts pool seeds). */
  n: number;
}

export interface LevelMetrics {
  diagnosis: Metric | null;
  category: Metric | null;
  group: Metric | null;
}

export interface TimingMetrics {
  premature: Metric | null;
  on_time: Metric | null;
  late: Metric | null;
  never: Metric | null;
}

export interface CoreMetrics {
  under_abstention: Metric | null;
  over_abstention: Metric | null;
  stage1_clarification_rate: Metric | null;
  timing: TimingMetrics;
  accuracy: LevelMetrics;
}

/** Stages of the cumulative curves: 1..5, the most sections a case has. */
export const STAGES = [1, 2, 3, 4, 5] as const;

export interface CumulativeCurves {
  stages: number[];
  /** Fraction of cases with a first diagnosis at or before each stage. */
  model: (Metric | null)[];
  /** Fraction of the same cases the experts judged sufficient by each stage. */
  expert: (Metric | null)[];
}

export interface CategoryAccuracy {
  category: string;
  /** Scored cases of this gold category, over all seeds. */
  cases: number;
  accuracy: LevelMetrics;
}

export interface MetricsResult {
  model: string;
  strategy: Strategy;
  n_seeds: number;
  seeds: (number | null)[];
  metrics: CoreMetrics;
  /** Sequential strategies only; null otherwise. */
  cumulative: CumulativeCurves | null;
  /** Accuracy of first diagnoses by timing (sequential strategies only). */
  accuracy_by_timing: { premature: LevelMetrics; on_time: LevelMetrics; late: LevelMetrics } | null;
  /** Accuracy on cases where the two annotators agreed on sufficiency and diagnosis, and on the others. */
  accuracy_by_agreement: { agreement: LevelMetrics; disagreement: LevelMetrics };
  accuracy_by_category: CategoryAccuracy[];
  /** Quality control, summed over seeds (paper mode) or the scripts' own counts (reference mode). */
  qc: Record<string, number>;
  /** Reference mode: which script each metric comes from. */
  sources?: Record<string, string>;
  /** Reference mode, full_info_abstention_aware: the seed script's summary (the CI bars of the paper's Fig. 3). */
  seed_variability?: { under_abstention: Metric | null; over_abstention: Metric | null; accuracy: LevelMetrics };
}

export interface MetricsOutput {
  mode: MetricsMode;
  results: MetricsResult[];
  /** The expert sufficiency curve over all usable gold cases (paper: stage-aligned; reference: Fig. 6's quirk). */
  expert_curve: number[];
  gold: { cases: number; sufficient: number; insufficient: number; unusable: number };
  warnings: string[];
  /** Reference mode: every table of every script, as the scripts write them. */
  reference_scripts?: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------------------------
// Summaries over seeds

/**
 * Mean, sample standard deviation (n − 1) and the 95% Student-t interval of the non-null values; null when there
 * are none. With one value, sd and ci95 are null (as the seed script's NaN).
 *
 * @example summarizeValues([0.2, 0.4]) // { mean: 0.3, sd: 0.1414…, ci95: [0.3 − 12.706·0.1, 0.3 + 12.706·0.1], n: 2 }
 */
export function summarizeValues(values: readonly (number | null)[]): Metric | null {
  const xs = values.filter((v): v is number => v !== null && Number.isFinite(v));
  const n = xs.length;
  if (n === 0) return null;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n === 1) return { mean, sd: null, ci95: null, n };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  const half = (studentTQuantile(0.975, n - 1) * sd) / Math.sqrt(n);
  return { mean, sd, ci95: [mean - half, mean + half], n };
}

/** A pooled value as a metric of one (reference mode); null for an empty denominator. */
export function single(numerator: number, denominator: number): Metric | null {
  return denominator > 0 ? { mean: numerator / denominator, sd: null, ci95: null, n: 1 } : null;
}

export const ratio = (k: number, n: number): number | null => (n > 0 ? k / n : null);

export const emptyLevels = (): LevelMetrics => ({ diagnosis: null, category: null, group: null });
export const emptyTiming = (): TimingMetrics => ({ premature: null, on_time: null, late: null, never: null });

export function compareResults(
  a: { model: string; strategy: Strategy },
  b: { model: string; strategy: Strategy },
): number {
  if (a.model !== b.model) return a.model < b.model ? -1 : 1;
  return STRATEGIES.indexOf(a.strategy) - STRATEGIES.indexOf(b.strategy);
}
