/**
 * Student's t distribution for the confidence intervals of the agreement coefficients (irrCAC uses
 * `qt(1 - (1 - conflev) / 2, n - 1)`). Built on the regularised incomplete beta function:
 * P(T > t) = I_{df/(df+t²)}(df/2, 1/2) / 2 (Abramowitz & Stegun 26.7.1 with 26.5.27), evaluated with the
 * continued fraction A&S 26.5.8 by the modified Lentz method (Press et al., Numerical Recipes, §6.4 and §5.2).
 * Checked against scipy.stats in test/unit/stats-student-t.test.ts.
 */

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];
const HALF_LOG_TWO_PI = 0.5 * Math.log(2 * Math.PI);

/** ln Γ(x) for x > 0 (Lanczos approximation, g = 7, n = 9; relative error about 1e-15). */
export function logGamma(x: number): number {
  if (!(x > 0)) throw new RangeError(`logGamma requires x > 0, got ${x}`);
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let sum = LANCZOS[0];
  for (let i = 1; i < LANCZOS.length; i++) sum += LANCZOS[i] / (z + i);
  const t = z + 7.5;
  return HALF_LOG_TWO_PI + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** Stirling-series remainder ln Γ(x) - [(x - ½) ln x - x + ½ ln 2π], accurate to ~1e-14 for x >= 10. */
function stirlingRemainder(x: number): number {
  const x2 = x * x;
  return (1 / x) * (1 / 12 - (1 / x2) * (1 / 360 - (1 / x2) * (1 / 1260 - (1 / x2) * (1 / 1680 - 1 / (1188 * x2)))));
}

/**
 * ln B(a, b). For large arguments the Stirling form avoids subtracting two huge ln Γ values, which matters for
 * the t distribution with 100,000 degrees of freedom.
 */
export function logBeta(a: number, b: number): number {
  if (!(a > 0 && b > 0)) throw new RangeError(`logBeta requires a, b > 0, got ${a}, ${b}`);
  const small = Math.min(a, b);
  const big = Math.max(a, b);
  const sum = a + b;
  if (small >= 10) {
    return (
      HALF_LOG_TWO_PI -
      0.5 * Math.log(sum) +
      (a - 0.5) * Math.log(a / sum) +
      (b - 0.5) * Math.log(b / sum) +
      stirlingRemainder(a) +
      stirlingRemainder(b) -
      stirlingRemainder(sum)
    );
  }
  if (big >= 10) {
    // ln Γ(big) - ln Γ(big + small) with the large terms cancelled analytically.
    const ratio = -(big - 0.5) * Math.log1p(small / big) - small * Math.log(sum) + small;
    return logGamma(small) + ratio + stirlingRemainder(big) - stirlingRemainder(sum);
  }
  return logGamma(a) + logGamma(b) - logGamma(sum);
}

const MAX_FRACTION_TERMS = 20000;
const FRACTION_EPSILON = 1e-16;
const TINY = 1e-300;

/** Continued fraction for I_x(a, b) (A&S 26.5.8), modified Lentz; converges fast for x < (a + 1)/(a + b + 2). */
function betaFraction(x: number, a: number, b: number): number {
  const sum = a + b;
  let c = 1;
  let d = 1 - (sum * x) / (a + 1);
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= MAX_FRACTION_TERMS; m++) {
    const m2 = 2 * m;
    let term = (m * (b - m) * x) / ((a - 1 + m2) * (a + m2));
    d = 1 + term * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + term / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    term = (-(a + m) * (sum + m) * x) / ((a + m2) * (a + 1 + m2));
    d = 1 + term * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + term / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < FRACTION_EPSILON) return h;
  }
  return h; // not reached for the arguments used here; the last convergent is still accurate to ~1e-12
}

/**
 * I_x(a, b) given both x and y = 1 - x, so that callers who know 1 - x more precisely than x (a t statistic
 * near 0 with many degrees of freedom) do not lose it to rounding.
 */
function incompleteBeta(x: number, y: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  const front = Math.exp(a * Math.log(x) + b * Math.log(y) - logBeta(a, b));
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(x, a, b)) / a;
  return 1 - (front * betaFraction(y, b, a)) / b;
}

/** The regularised incomplete beta function I_x(a, b) = B(x; a, b) / B(a, b), for 0 <= x <= 1 and a, b > 0. */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (!(a > 0 && b > 0)) throw new RangeError(`regularizedIncompleteBeta requires a, b > 0, got ${a}, ${b}`);
  if (!(x >= 0 && x <= 1)) throw new RangeError(`regularizedIncompleteBeta requires 0 <= x <= 1, got ${x}`);
  return incompleteBeta(x, 1 - x, a, b);
}

function checkDf(df: number): void {
  if (!(df > 0) || !Number.isFinite(df)) throw new RangeError(`degrees of freedom must be positive, got ${df}`);
}

/** P(T > t) for t >= 0. */
function upperTail(t: number, df: number): number {
  const t2 = t * t;
  return 0.5 * incompleteBeta(df / (df + t2), t2 / (df + t2), df / 2, 0.5);
}

function density(t: number, df: number): number {
  return Math.exp(-((df + 1) / 2) * Math.log1p((t * t) / df) - 0.5 * Math.log(df) - logBeta(df / 2, 0.5));
}

/** P(T <= t) for Student's t with `df` degrees of freedom (df > 0, need not be an integer). */
export function studentTCdf(t: number, df: number): number {
  checkDf(df);
  if (Number.isNaN(t)) throw new RangeError("studentTCdf requires a number, got NaN");
  if (t === Infinity) return 1;
  if (t === -Infinity) return 0;
  return t >= 0 ? 1 - upperTail(t, df) : upperTail(-t, df);
}

/**
 * The p-quantile of Student's t with `df` degrees of freedom: the t with P(T <= t) = p, 0 < p < 1.
 * Solves P(T > t) = 1 - p by Newton's method on t, kept inside a bisection bracket.
 *
 * @example studentTQuantile(0.975, 11) // 2.200985160082949
 */
export function studentTQuantile(p: number, df: number): number {
  checkDf(df);
  if (!(p > 0 && p < 1)) throw new RangeError(`studentTQuantile requires 0 < p < 1, got ${p}`);
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  const target = 1 - p;
  let lo = 0;
  let hi = 1;
  while (upperTail(hi, df) > target) {
    lo = hi;
    hi *= 2;
    if (!Number.isFinite(hi)) return Infinity;
  }
  let t = (lo + hi) / 2;
  for (let i = 0; i < 300; i++) {
    const excess = upperTail(t, df) - target;
    if (excess > 0) lo = t;
    else hi = t;
    let next = t + excess / density(t, df);
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    if (Math.abs(next - t) <= 1e-15 * Math.abs(next) || hi - lo <= 1e-15 * hi) return next;
    t = next;
  }
  return t;
}
