/**
 * HealthBench's scorer (docs/rubric-grading.md, "Scores"), reproduced number for number from the reference's
 * `calculate_score`, tag scores and clipped aggregation, plus the HealthBench-Psych panel mean and a seeded
 * conversation-level bootstrap.
 */
import { PyRandom } from "../../python-compat/random";

export interface GradedCriterion {
  points: number;
  tags: readonly string[];
  /** The judge's verdict; null when it was excluded (unreadable after bounded retries). */
  met: boolean | null;
}

/**
 * Points of met criteria over total positive points (negative points count in the numerator only when met), or
 * null when there are no positive points. Criteria whose verdict was excluded leave both sums: the response is
 * scored on the criteria that were graded (docs/rubric-grading.md, "Excluded verdicts").
 */
export function rubricScore(criteria: readonly GradedCriterion[]): number | null {
  const graded = criteria.filter((c) => c.met !== null);
  const possible = graded.reduce((sum, c) => (c.points > 0 ? sum + c.points : sum), 0);
  if (possible === 0) return null;
  const achieved = graded.reduce((sum, c) => (c.met ? sum + c.points : sum), 0);
  return achieved / possible;
}

export interface ResponseMetrics {
  /** `overall_score`: null only when every positive criterion's verdict was excluded. */
  overall: number | null;
  /**
   * The reference's per-example metrics besides the overall score: each example tag takes the overall score, then
   * each rubric tag the score over its criteria (only when that has positive points), overwriting an example tag of
   * the same name as the reference's `dict.update` does.
   */
  tags: Map<string, number>;
}

export function responseMetrics(criteria: readonly GradedCriterion[], exampleTags: readonly string[]): ResponseMetrics {
  const overall = rubricScore(criteria);
  const tags = new Map<string, number>();
  if (overall === null) return { overall, tags };
  for (const tag of exampleTags) tags.set(tag, overall);
  const byTag = new Map<string, GradedCriterion[]>();
  for (const c of criteria) {
    for (const tag of c.tags) {
      const list = byTag.get(tag);
      if (list) list.push(c);
      else byTag.set(tag, [c]);
    }
  }
  for (const [tag, items] of byTag) {
    const score = rubricScore(items);
    if (score !== null) tags.set(tag, score);
  }
  return { overall, tags };
}

export function mean(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** `np.clip(np.mean(values), 0, 1)`: the reference's aggregate of a metric over conversations. */
export function clippedMean(values: readonly number[]): number {
  return Math.min(1, Math.max(0, mean(values)));
}

/** `np.std` (population, ddof = 0). */
export function populationStd(values: readonly number[]): number {
  const m = mean(values);
  let ss = 0;
  for (const v of values) ss += (v - m) * (v - m);
  return Math.sqrt(ss / values.length);
}

/** `np.percentile(values, q)` with numpy's default linear interpolation. */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (q / 100) * (sorted.length - 1);
  const lower = Math.floor(position);
  const upper = Math.min(sorted.length - 1, lower + 1);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - lower);
}

export interface BootstrapOptions {
  seed: number;
  /** The reference's 1,000. */
  resamples: number;
}

export const DEFAULT_BOOTSTRAP: BootstrapOptions = { seed: 0, resamples: 1000 };

/**
 * Resampled index lists: resample r draws n indices with Python's `random.Random(seed).randrange(n)`, in order.
 * The reference draws with an unseeded `np.random.choice`; a seeded Python generator keeps the recipe (n draws
 * with replacement per resample, 1,000 resamples) and makes the intervals reproducible, here and in Python.
 */
export function bootstrapIndices(n: number, options: BootstrapOptions, visit: (indices: Uint32Array) => void): void {
  const rng = new PyRandom(options.seed);
  const indices = new Uint32Array(n);
  for (let r = 0; r < options.resamples; r++) {
    for (let i = 0; i < n; i++) indices[i] = rng.randbelow(n);
    visit(indices);
  }
}

export interface ClippedEstimate {
  /** The clipped mean. */
  mean: number;
  n: number;
  /** `bootstrap_std` as the reference reports it: the std of the resampled clipped means. */
  bootstrapStd: number;
  /** 95% percentile interval of the resampled clipped means. */
  ci95: [number, number];
}

export function clippedEstimate(
  values: readonly number[],
  options: BootstrapOptions = DEFAULT_BOOTSTRAP,
): ClippedEstimate | null {
  if (values.length === 0) return null;
  const means: number[] = [];
  bootstrapIndices(values.length, options, (idx) => {
    let sum = 0;
    for (let i = 0; i < idx.length; i++) sum += values[idx[i]];
    means.push(Math.min(1, Math.max(0, sum / idx.length)));
  });
  return {
    mean: clippedMean(values),
    n: values.length,
    bootstrapStd: populationStd(means),
    ci95: [percentile(means, 2.5), percentile(means, 97.5)],
  };
}

/**
 * A conversation's panel score: the equal-weight mean of the judges' scores of that response. A judge without a
 * score for it (every positive verdict excluded) is left out of that conversation's mean.
 */
export function panelConversationScore(judgeScores: readonly (number | null)[]): number | null {
  const present = judgeScores.filter((s): s is number => s !== null);
  return present.length === 0 ? null : mean(present);
}
