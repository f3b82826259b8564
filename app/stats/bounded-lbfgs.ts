/**
 * Minimises a smooth function subject to simple bounds l ≤ x ≤ u by a projected limited-memory BFGS method:
 * at each iterate the variables held at a bound by the gradient (the active set) are frozen, an L-BFGS direction
 * is computed on the free variables (two-loop recursion, Nocedal & Wright 2006, Algorithm 7.4, with the memory
 * restricted to the free variables), and a backtracking line search along the projection arc P(x + αd) accepts the
 * first step satisfying the Armijo condition on the projected step (Bertsekas 1982, "Projected Newton methods for
 * optimization problems with simple constraints", SIAM J. Control Optim. 20:221–246; the same scheme as Kim, Sra &
 * Dhillon 2010, "Tackling box-constrained optimization via a new projected quasi-Newton approach", SIAM J. Sci.
 * Comput. 32:3548–3563). It stops when the projected gradient ‖P(x − ∇f) − x‖∞ falls below `gradientTolerance`
 * (the test scipy's L-BFGS-B uses for `gtol`), or when a step no longer lowers f.
 *
 * Pure and deterministic: no randomness, no clock. Used by the Bradley–Terry fits (bradley-terry.ts), which are
 * cross-checked against scipy.optimize.minimize(method="L-BFGS-B") in test/fixtures/bradley-terry/.
 *
 * @example
 * // min (x − 3)² subject to 0 ≤ x ≤ 2 → x = 2
 * minimizeBounded((x, g) => { g[0] = 2 * (x[0] - 3); return (x[0] - 3) ** 2; }, [0], [0], [2]).x // [2]
 */

/** Writes ∇f(x) into `gradient` and returns f(x). */
export type ObjectiveWithGradient = (x: Float64Array, gradient: Float64Array) => number;

export interface BoundedMinimizeOptions {
  /** Number of correction pairs kept (scipy's `maxcor`); default 10. */
  memory?: number;
  maxIterations?: number;
  /** Stop when max |projected gradient component| ≤ this; default 1e-8. */
  gradientTolerance?: number;
  /** Stop when a step lowers f by less than this fraction of max(|f|, 1); default 1e-15. */
  relativeReductionTolerance?: number;
}

export interface BoundedMinimizeResult {
  x: Float64Array;
  value: number;
  iterations: number;
  evaluations: number;
  /** max |projected gradient component| at x. */
  projectedGradientNorm: number;
  converged: boolean;
  message: string;
}

const ARMIJO = 1e-4;
const MAX_BACKTRACKS = 60;

function clampInto(x: Float64Array, lower: ArrayLike<number>, upper: ArrayLike<number>): void {
  for (let i = 0; i < x.length; i++) x[i] = Math.min(upper[i], Math.max(lower[i], x[i]));
}

/** max_i |P(x − g)_i − x_i|: zero exactly at a first-order (KKT) point of the box-constrained problem. */
export function projectedGradientNorm(
  x: ArrayLike<number>,
  gradient: ArrayLike<number>,
  lower: ArrayLike<number>,
  upper: ArrayLike<number>,
): number {
  let norm = 0;
  for (let i = 0; i < x.length; i++) {
    const moved = Math.min(upper[i], Math.max(lower[i], x[i] - gradient[i]));
    norm = Math.max(norm, Math.abs(moved - x[i]));
  }
  return norm;
}

/**
 * Minimises `f` from `start` within [lower, upper] (use ±Infinity for unbounded variables). Throws a RangeError
 * when the arrays differ in length or a lower bound exceeds its upper bound (programmer errors).
 */
export function minimizeBounded(
  f: ObjectiveWithGradient,
  start: ArrayLike<number>,
  lower: ArrayLike<number>,
  upper: ArrayLike<number>,
  options: BoundedMinimizeOptions = {},
): BoundedMinimizeResult {
  const n = start.length;
  if (lower.length !== n || upper.length !== n)
    throw new RangeError("minimizeBounded requires start, lower and upper of the same length");
  for (let i = 0; i < n; i++)
    if (!(lower[i] <= upper[i])) throw new RangeError(`minimizeBounded: lower bound ${i} exceeds its upper bound`);
  const memory = options.memory ?? 10;
  const maxIterations = options.maxIterations ?? 1000;
  const gradientTolerance = options.gradientTolerance ?? 1e-8;
  const relativeTolerance = options.relativeReductionTolerance ?? 1e-15;

  let x = Float64Array.from(start);
  clampInto(x, lower, upper);
  let g = new Float64Array(n);
  let fx = f(x, g);
  let evaluations = 1;
  if (!Number.isFinite(fx)) throw new RangeError("minimizeBounded: the objective is not finite at the start point");

  const S: Float64Array[] = [];
  const Y: Float64Array[] = [];
  const free = new Uint8Array(n);
  const d = new Float64Array(n);
  const alphas = new Float64Array(memory);
  let xNew = new Float64Array(n);
  let gNew = new Float64Array(n);

  const freeDot = (a: Float64Array, b: Float64Array) => {
    let s = 0;
    for (let i = 0; i < n; i++) if (free[i]) s += a[i] * b[i];
    return s;
  };

  let iterations = 0;
  let message = "maximum number of iterations reached";
  let converged = false;
  let pgNorm = projectedGradientNorm(x, g, lower, upper);
  // When f stops decreasing in floating point, the point is accepted if its projected gradient is at the level f's
  // rounding allows: a gradient g moves f by about g²/(2h) for curvature h, which rounding (ε|f|) hides once
  // g ≲ √(2hε|f|). So: fallen by 1e-6 from the start, or below 1e-5·√|f| (curvatures up to ~10⁵).
  const startGradient = pgNorm;
  const stallTolerance = (value: number) =>
    Math.max(gradientTolerance, 1e-6 * startGradient, 1e-5 * Math.sqrt(Math.max(1, Math.abs(value))));

  while (iterations < maxIterations) {
    if (pgNorm <= gradientTolerance) {
      converged = true;
      message = "projected gradient below tolerance";
      break;
    }
    iterations++;
    // Variables at a bound whose gradient pushes outward stay there for this step.
    for (let i = 0; i < n; i++) {
      const atLower = x[i] <= lower[i] && g[i] > 0;
      const atUpper = x[i] >= upper[i] && g[i] < 0;
      free[i] = atLower || atUpper ? 0 : 1;
    }

    let accepted = false;
    let fNew = fx;
    for (let attempt = 0; attempt < 2 && !accepted; attempt++) {
      // Two-loop recursion on the free variables (attempt 1 after a failure: steepest descent, memory cleared).
      for (let i = 0; i < n; i++) d[i] = free[i] ? g[i] : 0;
      const k = S.length;
      const rhos = new Float64Array(k);
      let usable = k > 0;
      for (let j = k - 1; j >= 0; j--) {
        const sy = freeDot(S[j], Y[j]);
        if (!(sy > 1e-12 * Math.sqrt(freeDot(S[j], S[j]) * freeDot(Y[j], Y[j])))) {
          usable = false;
          break;
        }
        rhos[j] = 1 / sy;
      }
      if (usable) {
        for (let j = k - 1; j >= 0; j--) {
          const a = rhos[j] * freeDot(S[j], d);
          alphas[j] = a;
          for (let i = 0; i < n; i++) if (free[i]) d[i] -= a * Y[j][i];
        }
        const last = k - 1;
        const gamma = freeDot(S[last], Y[last]) / freeDot(Y[last], Y[last]);
        for (let i = 0; i < n; i++) d[i] *= gamma;
        for (let j = 0; j < k; j++) {
          const b = rhos[j] * freeDot(Y[j], d);
          for (let i = 0; i < n; i++) if (free[i]) d[i] += S[j][i] * (alphas[j] - b);
        }
      }
      for (let i = 0; i < n; i++) d[i] = free[i] ? -d[i] : 0;
      let slope = 0;
      let dNorm = 0;
      for (let i = 0; i < n; i++) {
        slope += g[i] * d[i];
        dNorm = Math.max(dNorm, Math.abs(d[i]));
      }
      if (!(slope < 0)) {
        // Not a descent direction (stale curvature pairs): restart from steepest descent.
        S.length = 0;
        Y.length = 0;
        for (let i = 0; i < n; i++) d[i] = free[i] ? -g[i] : 0;
        dNorm = 0;
        for (let i = 0; i < n; i++) dNorm = Math.max(dNorm, Math.abs(d[i]));
      }
      if (dNorm === 0) break;
      // Without curvature information, take a first step of length at most 1 in the max norm.
      let step = S.length === 0 ? Math.min(1, 1 / dNorm) : 1;
      for (let backtrack = 0; backtrack < MAX_BACKTRACKS; backtrack++) {
        let decrease = 0;
        let moved = false;
        for (let i = 0; i < n; i++) {
          const v = Math.min(upper[i], Math.max(lower[i], x[i] + step * d[i]));
          xNew[i] = v;
          decrease += g[i] * (v - x[i]);
          if (v !== x[i]) moved = true;
        }
        if (!moved) break;
        const value = f(xNew, gNew);
        evaluations++;
        if (Number.isFinite(value) && value <= fx + ARMIJO * decrease) {
          accepted = true;
          fNew = value;
          break;
        }
        step *= 0.5;
      }
      if (!accepted) {
        if (S.length === 0) break;
        S.length = 0;
        Y.length = 0;
      }
    }
    if (!accepted) {
      message = "the line search found no lower value";
      pgNorm = projectedGradientNorm(x, g, lower, upper);
      converged = pgNorm <= stallTolerance(fx);
      break;
    }

    const s = new Float64Array(n);
    const y = new Float64Array(n);
    let sy = 0;
    let yy = 0;
    for (let i = 0; i < n; i++) {
      s[i] = xNew[i] - x[i];
      y[i] = gNew[i] - g[i];
      sy += s[i] * y[i];
      yy += y[i] * y[i];
    }
    if (sy > 1e-12 * yy) {
      S.push(s);
      Y.push(y);
      if (S.length > memory) {
        S.shift();
        Y.shift();
      }
    }
    const reduction = fx - fNew;
    [x, xNew] = [xNew, x];
    [g, gNew] = [gNew, g];
    fx = fNew;
    pgNorm = projectedGradientNorm(x, g, lower, upper);
    if (reduction <= relativeTolerance * Math.max(Math.abs(fx), 1)) {
      converged = pgNorm <= stallTolerance(fx);
      message = converged ? "relative reduction of f below tolerance" : "no further reduction of f";
      break;
    }
  }
  return { x, value: fx, iterations, evaluations, projectedGradientNorm: pgNorm, converged, message };
}
