/**
 * Cross-judge and cross-candidate figures of the HealthBench-Psych evaluation (docs/rubric-grading.md, "Judge
 * agreement" and "Paired comparisons"): Kendall's τ between judges' rankings, judge severity, raw and
 * severity-corrected self-preference, and paired bootstrap comparisons of candidates with Holm–Bonferroni.
 */
import { bootstrapIndices, mean, percentile, type BootstrapOptions } from "./score";

/**
 * Kendall's τ-b of two paired score lists (scipy.stats.kendalltau's default): (concordant − discordant) over
 * √((n₀ − ties in x)(n₀ − ties in y)), n₀ = n(n − 1)/2. Null when either list is constant or n < 2.
 * Example: x = [1, 2, 3], y = [1, 3, 2] → (2 − 1)/3 = 0.333.
 */
export function kendallTauB(x: readonly number[], y: readonly number[]): number | null {
  if (x.length !== y.length) throw new RangeError("kendallTauB requires two lists of the same length");
  let concordant = 0;
  let discordant = 0;
  let tiesX = 0;
  let tiesY = 0;
  for (let i = 0; i < x.length; i++) {
    for (let j = i + 1; j < x.length; j++) {
      const dx = Math.sign(x[i] - x[j]);
      const dy = Math.sign(y[i] - y[j]);
      if (dx === 0 && dy === 0) {
        tiesX++;
        tiesY++;
      } else if (dx === 0) tiesX++;
      else if (dy === 0) tiesY++;
      else if (dx === dy) concordant++;
      else discordant++;
    }
  }
  const pairs = (x.length * (x.length - 1)) / 2;
  const denominator = Math.sqrt((pairs - tiesX) * (pairs - tiesY));
  return denominator === 0 ? null : (concordant - discordant) / denominator;
}

/**
 * Severity: a judge's mean candidate score minus the grand mean over judges (negative = strict). `scores[j][c]` is
 * judge j's score of candidate c; only candidates every judge scored enter, so that the means are comparable.
 */
export function severities(scores: readonly (readonly number[])[]): {
  judgeMeans: number[];
  grandMean: number;
  severity: number[];
} {
  const judgeMeans = scores.map((row) => mean(row));
  const grandMean = mean(judgeMeans);
  return { judgeMeans, grandMean, severity: judgeMeans.map((m) => m - grandMean) };
}

/**
 * Self-preference of judge j for its own candidate c: raw = S_j(c) − mean over the other judges of S_k(c);
 * corrected = the same after removing each judge's severity, (S_j(c) − sev_j) − mean_k (S_k(c) − sev_k).
 */
export function selfPreference(ownScores: readonly number[], judge: number, severity: readonly number[]) {
  const others = ownScores.map((_, k) => k).filter((k) => k !== judge);
  if (others.length === 0) return { raw: null, corrected: null };
  const raw = ownScores[judge] - mean(others.map((k) => ownScores[k]));
  const corrected = ownScores[judge] - severity[judge] - mean(others.map((k) => ownScores[k] - severity[k]));
  return { raw, corrected };
}

export interface PairedComparison {
  difference: number;
  ci95: [number, number];
  /** Two-sided bootstrap p: 2 · min(share of resampled differences ≤ 0, share ≥ 0), at most 1. */
  p: number;
  n: number;
}

const clip = (x: number) => Math.min(1, Math.max(0, x));

/**
 * The clipped-mean difference of two candidates over the conversations both were scored on, with one bootstrap
 * resample of conversations shared by both (a paired design).
 */
export function pairedComparison(
  a: readonly number[],
  b: readonly number[],
  options: BootstrapOptions,
): PairedComparison {
  if (a.length !== b.length || a.length === 0)
    throw new RangeError("pairedComparison requires two paired non-empty lists");
  const diffs: number[] = [];
  bootstrapIndices(a.length, options, (idx) => {
    let sa = 0;
    let sb = 0;
    for (let i = 0; i < idx.length; i++) {
      sa += a[idx[i]];
      sb += b[idx[i]];
    }
    diffs.push(clip(sa / idx.length) - clip(sb / idx.length));
  });
  const below = diffs.filter((d) => d <= 0).length / diffs.length;
  const above = diffs.filter((d) => d >= 0).length / diffs.length;
  return {
    difference: clip(mean(a)) - clip(mean(b)),
    ci95: [percentile(diffs, 2.5), percentile(diffs, 97.5)],
    p: Math.min(1, 2 * Math.min(below, above)),
    n: a.length,
  };
}

/**
 * Holm–Bonferroni step-down: sort p ascending; the k-th (0-based) is rejected while p ≤ α/(m − k), and every later
 * one is kept once one fails. Adjusted p-values are the running maximum of (m − k)·p, capped at 1 (Holm 1979).
 */
export function holm(pValues: readonly number[], alpha = 0.05): { adjusted: number[]; reject: boolean[] } {
  const m = pValues.length;
  const order = pValues.map((p, i) => ({ p, i })).sort((x, y) => x.p - y.p || x.i - y.i);
  const adjusted = new Array<number>(m);
  const reject = new Array<boolean>(m).fill(false);
  let running = 0;
  let stillRejecting = true;
  order.forEach(({ p, i }, k) => {
    running = Math.max(running, Math.min(1, (m - k) * p));
    adjusted[i] = running;
    if (stillRejecting && p <= alpha / (m - k)) reject[i] = true;
    else stillRejecting = false;
  });
  return { adjusted, reject };
}
