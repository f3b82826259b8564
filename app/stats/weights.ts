import type { WeightScheme } from "./result";

/**
 * Agreement weights w_kl in [0, 1] between categories with scores x (Gwet 2014, §3.2; irrCAC weights.gen.r):
 * identity w = [k = l]; linear w = 1 - |x_k - x_l| / (x_max - x_min); quadratic w = 1 - (x_k - x_l)² / (x_max - x_min)².
 * Returns a row-major q×q matrix, or null when linear/quadratic weights are undefined (fewer than two distinct
 * scores).
 *
 * @example agreementWeights([1, 2, 3], "linear") // [1, .5, 0, .5, 1, .5, 0, .5, 1]
 */
export function agreementWeights(scores: ArrayLike<number>, scheme: WeightScheme): Float64Array | null {
  const q = scores.length;
  const w = new Float64Array(q * q);
  if (scheme === "identity") {
    for (let k = 0; k < q; k++) w[k * q + k] = 1;
    return w;
  }
  let min = Infinity;
  let max = -Infinity;
  for (let k = 0; k < q; k++) {
    min = Math.min(min, scores[k]);
    max = Math.max(max, scores[k]);
  }
  const span = max - min;
  if (!(span > 0)) return null;
  for (let k = 0; k < q; k++) {
    for (let l = 0; l < q; l++) {
      const d = Math.abs(scores[k] - scores[l]) / span;
      w[k * q + l] = scheme === "linear" ? 1 - d : 1 - d * d;
    }
  }
  return w;
}

export const WEIGHTS_UNDEFINED = "linear and quadratic weights need at least two categories with different scores";
