import { studentTQuantile } from "./student-t";

/** A statistic that may be undefined for the data at hand: then `value` is null and `reason` says why. */
export interface Estimate {
  value: number | null;
  reason?: string;
}

export interface IntervalEstimate extends Estimate {
  standardError: number | null;
  /**
   * value ± t(1 - (1 - level) / 2, n - 1) · standardError, the upper bound capped at 1, as irrCAC reports it
   * (Gwet 2014, §5.2). Null when the standard error is.
   */
  confidenceInterval: [number, number] | null;
  confidenceLevel: number;
  /** Why the standard error is null although `value` is not (e.g. a single item). */
  standardErrorReason?: string;
}

/** Which ratings entered a coefficient. */
export interface Sample {
  /** Items in the computation: the `n` of the variance and of the t distribution's n - 1 degrees of freedom. */
  nItems: number;
  /** Items with at least two ratings, over which observed agreement is averaged. */
  nPairableItems: number;
  /** Raters with at least one rating among those items. */
  nRaters: number;
}

export type WeightScheme = "identity" | "linear" | "quadratic";

export interface ChanceCorrectedCoefficient extends IntervalEstimate, Sample {
  /** Weighted or unweighted observed agreement p_a (null when undefined). */
  observedAgreement: number | null;
  /** Chance agreement p_e under the coefficient's own model (null when undefined). */
  chanceAgreement: number | null;
  weights: WeightScheme;
}

export interface IntervalOptions {
  /** Confidence level of `confidenceInterval`; default 0.95. */
  confidenceLevel?: number;
}

export function checkConfidenceLevel(level: number): number {
  if (!(level > 0 && level < 1)) throw new RangeError(`confidenceLevel must be in (0, 1), got ${level}`);
  return level;
}

/** Below this, 1 - p_e is treated as zero: the coefficient is 0/0. */
export const DEGENERATE_EPSILON = 1e-12;

/** Standard error and Student-t interval from a variance computed on n items. */
export function withInterval(
  value: number,
  variance: number | null,
  nItems: number,
  confidenceLevel: number,
): Pick<IntervalEstimate, "standardError" | "confidenceInterval" | "standardErrorReason"> {
  if (variance === null || nItems < 2) {
    return {
      standardError: null,
      confidenceInterval: null,
      standardErrorReason: "the standard error needs at least two items",
    };
  }
  const standardError = Math.sqrt(Math.max(variance, 0));
  const t = studentTQuantile(1 - (1 - confidenceLevel) / 2, nItems - 1);
  return {
    standardError,
    confidenceInterval: [value - t * standardError, Math.min(1, value + t * standardError)],
  };
}

export function undefinedInterval(reason: string, confidenceLevel: number): IntervalEstimate {
  return { value: null, reason, standardError: null, confidenceInterval: null, confidenceLevel };
}
