/**
 * The statistics of the demographic drift analysis (docs/mc-evaluation.md, "Demographic drift"): percentile
 * bootstrap intervals, the exact McNemar test for paired correct/wrong outcomes and Holm's step-down adjustment.
 * Seeds are passed in; the generator is CPython's, so Python replays every resample.
 */
import { PyRandom } from "../../python-compat/random";

/**
 * The q-th percentile (0–100) of `values` by linear interpolation between order statistics, numpy's default
 * (`np.percentile(..., method="linear")`): position (n − 1)·q/100.
 */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new RangeError("percentile requires at least one value");
  const sorted = [...values].sort((a, b) => a - b);
  const h = ((sorted.length - 1) * q) / 100;
  const lo = Math.floor(h);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/**
 * A 95% percentile bootstrap interval of a statistic over `n` units: `reps` resamples of n unit indices drawn with
 * replacement by `random.Random(seed).randrange(n)`, the 2.5th and 97.5th percentiles of the statistic (MENTAT's
 * bootstrap_tools.py: 1000 resamples, the same percentiles).
 */
export function bootstrapInterval(
  n: number,
  statistic: (indices: readonly number[]) => number,
  options: { reps: number; seed: number },
): [number, number] | null {
  if (n === 0) return null;
  const rng = new PyRandom(options.seed);
  const values: number[] = [];
  const indices = new Array<number>(n);
  for (let r = 0; r < options.reps; r++) {
    for (let i = 0; i < n; i++) indices[i] = rng.randbelow(n);
    values.push(statistic(indices));
  }
  return [percentile(values, 2.5), percentile(values, 97.5)];
}

/**
 * Two-sided exact binomial test of k successes in n trials against p = ½: the probability of an outcome at most as
 * likely as k, i.e. 2·P(X ≤ min(k, n − k)) capped at 1 (scipy.stats.binomtest(k, n, 0.5).pvalue). n = 0 gives 1.
 */
export function binomialTestHalf(k: number, n: number): number {
  if (n === 0) return 1;
  const m = Math.min(k, n - k);
  if (2 * m === n) return 1;
  let logChoose = 0;
  let tail = 0;
  const logHalfN = -n * Math.LN2;
  for (let i = 0; i <= m; i++) {
    if (i > 0) logChoose += Math.log(n - i + 1) - Math.log(i);
    tail += Math.exp(logChoose + logHalfN);
  }
  return Math.min(1, 2 * tail);
}

export interface McNemarResult {
  /** Pairs right under the first condition and wrong under the second. */
  firstOnly: number;
  /** Pairs wrong under the first and right under the second. */
  secondOnly: number;
  /** Pairs with both outcomes. */
  n: number;
  /** Exact (binomial) two-sided p over the discordant pairs. */
  p: number;
}

/**
 * McNemar's exact test for paired binary outcomes: only discordant pairs carry information, and under no difference
 * each is equally likely to favour either condition (McNemar 1947; the exact form as a binomial test on b of b + c).
 */
export function mcnemarExact(pairs: readonly (readonly [boolean, boolean])[]): McNemarResult {
  let firstOnly = 0;
  let secondOnly = 0;
  for (const [a, b] of pairs) {
    if (a && !b) firstOnly++;
    else if (!a && b) secondOnly++;
  }
  return { firstOnly, secondOnly, n: pairs.length, p: binomialTestHalf(firstOnly, firstOnly + secondOnly) };
}

/**
 * Holm's step-down adjustment (Holm 1979): sort the m p-values ascending, multiply the i-th (0-based) by m − i,
 * carry the running maximum, cap at 1. Rejecting where the adjusted p ≤ α keeps the family-wise error rate ≤ α.
 * Returned in the input's order.
 */
export function holmAdjust(pValues: readonly number[]): number[] {
  const m = pValues.length;
  const order = pValues.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p || a.i - b.i);
  const adjusted = new Array<number>(m);
  let running = 0;
  order.forEach(({ p, i }, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p));
    adjusted[i] = running;
  });
  return adjusted;
}
