/**
 * A projected Newton method for the hierarchical Bradley–Terry objective (docs/mentat.md, "How the fit is
 * computed"). Pure: no I/O, no clock.
 *
 * The parameters are one strength block β_q (K options) per question and 2R rater parameters (slopes, offsets). A
 * win record touches its question's block and its rater's parameters only, so the Hessian is block-arrowhead: K×K
 * blocks H_q on the diagonal, each coupled to the rater parameters by a K×2R block C_q, and a 2R×2R block H_r. The
 * Newton system is solved by eliminating the blocks (Schur complement):
 *
 *   S = H_r − Σ_q C_qᵀ H_q⁻¹ C_q,   S·d_r = −(g_r − Σ_q C_qᵀ H_q⁻¹ g_q),   d_q = −H_q⁻¹ (g_q + C_q d_r),
 *
 * which costs one pass over the wins plus O(Q·K²·R + R³) per iteration instead of O((QK)³).
 *
 * - H_q is singular along (1, …, 1): only differences of β enter the likelihood, and the gradient and C_q are
 *   orthogonal to that direction. Adding 11ᵀ to H_q makes it invertible without changing the step (the step's
 *   component along 1 stays 0).
 * - The objective is not convex in (β, s) jointly (the term −σ(−z)·∂²z/∂β∂s), so S may be indefinite far from the
 *   optimum; then a multiple of the identity is added to S until its Cholesky factorisation succeeds, which keeps
 *   the step a descent direction (Levenberg–Marquardt on the rater parameters only).
 * - The slope and offset bounds: a rater parameter at a bound whose gradient points outward is held there for the
 *   step (its row and column dropped from S), the others take the Newton step, and the trial point is projected
 *   onto the box; the step length halves until the Armijo condition holds along the projected path (Bertsekas 1982,
 *   "Projected Newton methods for optimization problems with simple constraints").
 *
 * Stops when the projected gradient (as bounded-lbfgs.ts measures it) is below the tolerance, or when a step no
 * longer lowers the objective in floating point.
 */
import { projectedGradientNorm } from "../../stats/bounded-lbfgs";

export interface NewtonProblem {
  nQuestions: number;
  nOptions: number;
  /** Rater parameters: slopes at [0, nRaters) if `slopes`, offsets after them if `offsets`. */
  nRaters: number;
  slopes: boolean;
  offsets: boolean;
  penalty: number;
  ridge: number;
  /** Per win record: question, winner and loser (0-based option indices), rater, count. */
  question: Int32Array;
  winner: Int32Array;
  loser: Int32Array;
  rater: Int32Array;
  count: Float64Array;
}

export interface NewtonResult {
  x: Float64Array;
  value: number;
  iterations: number;
  projectedGradientNorm: number;
}

/** In-place Cholesky of the n×n row-major matrix `a` (lower triangle); false when it is not positive definite. */
function cholesky(a: Float64Array, n: number, at = 0): boolean {
  for (let j = 0; j < n; j++) {
    let d = a[at + j * n + j];
    for (let p = 0; p < j; p++) d -= a[at + j * n + p] * a[at + j * n + p];
    if (!(d > 0)) return false;
    const l = Math.sqrt(d);
    a[at + j * n + j] = l;
    for (let i = j + 1; i < n; i++) {
      let v = a[at + i * n + j];
      for (let p = 0; p < j; p++) v -= a[at + i * n + p] * a[at + j * n + p];
      a[at + i * n + j] = v / l;
    }
  }
  return true;
}

/** Solves L·Lᵀ·y = b in place (b of length n at `bAt`), L from cholesky(). */
function cholSolve(l: Float64Array, n: number, lAt: number, b: Float64Array, bAt: number): void {
  for (let i = 0; i < n; i++) {
    let v = b[bAt + i];
    for (let p = 0; p < i; p++) v -= l[lAt + i * n + p] * b[bAt + p];
    b[bAt + i] = v / l[lAt + i * n + i];
  }
  for (let i = n - 1; i >= 0; i--) {
    let v = b[bAt + i];
    for (let p = i + 1; p < n; p++) v -= l[lAt + p * n + i] * b[bAt + p];
    b[bAt + i] = v / l[lAt + i * n + i];
  }
}

/**
 * Minimises the objective of `problem` (bradley-terry.ts, hbtObjective: the same function) from `start` within
 * [lower, upper] (±Infinity for the strengths).
 */
export function minimizeHbtNewton(
  problem: NewtonProblem,
  start: Float64Array,
  lower: Float64Array,
  upper: Float64Array,
  options: { gradientTolerance: number; maxIterations: number },
): NewtonResult {
  const { nQuestions: Q, nOptions: K, nRaters: R, slopes, offsets, penalty, ridge } = problem;
  const nBeta = Q * K;
  const M = (slopes ? R : 0) + (offsets ? R : 0);
  const offsetLocal = slopes ? R : 0;
  const n = nBeta + M;
  const nWins = problem.count.length;
  const { question, winner, loser, rater, count } = problem;

  const Hb = new Float64Array(Q * K * K);
  const C = new Float64Array(Q * K * M);
  const Hr = new Float64Array(M * M);
  const g = new Float64Array(n);
  const Y = new Float64Array(K * M);
  const yq = new Float64Array(K);
  const S = new Float64Array(M * M);
  const rhs = new Float64Array(M);
  const d = new Float64Array(n);
  const free = new Uint8Array(M);
  let x = Float64Array.from(start);
  for (let i = 0; i < n; i++) x[i] = Math.min(upper[i], Math.max(lower[i], x[i]));
  let trial = new Float64Array(n);

  // exp(−|z|) of each win record at the last point `value` was asked for: when that point is taken as the next x,
  // `derivatives` reads them instead of computing them again (the same numbers: the same z, the same exp).
  const expAtTrial = new Float64Array(nWins);
  const value = (p: Float64Array): number => {
    let v = 0;
    for (let t = 0; t < nWins; t++) {
      const c = count[t];
      if (c === 0) continue;
      const b = question[t] * K;
      const r = rater[t];
      const diff = p[b + winner[t]] - p[b + loser[t]];
      const s = slopes ? p[nBeta + r] : 1;
      const z = offsets ? s * diff + p[nBeta + offsetLocal + r] : s * diff;
      if (z > 0) {
        const e = Math.exp(-z);
        expAtTrial[t] = e;
        v += c * Math.log1p(e);
      } else {
        const e = Math.exp(z);
        expAtTrial[t] = e;
        v += c * (Math.log1p(e) - z);
      }
    }
    for (let i = 0; i < nBeta; i++) v += ridge * p[i] * p[i];
    if (slopes) for (let r = 0; r < R; r++) v += penalty * (p[nBeta + r] - 1) ** 2;
    if (offsets) for (let r = 0; r < R; r++) v += penalty * p[nBeta + offsetLocal + r] ** 2;
    return v;
  };

  /**
   * ∇f and the blocks of ∇²f at x, and f when `withValue`; without it x is the point `value` was last asked for
   * (the line search's accepted trial), whose f and exponentials it has already.
   */
  const derivatives = (withValue = true): number => {
    g.fill(0);
    Hb.fill(0);
    C.fill(0);
    Hr.fill(0);
    let v = 0;
    for (let t = 0; t < nWins; t++) {
      const c = count[t];
      if (c === 0) continue;
      const q = question[t];
      const wl = winner[t];
      const ll = loser[t];
      const r = rater[t];
      const w = q * K + wl;
      const l = q * K + ll;
      const diff = x[w] - x[l];
      const s = slopes ? x[nBeta + r] : 1;
      const z = offsets ? s * diff + x[nBeta + offsetLocal + r] : s * diff;
      let e: number;
      let sig: number; // σ(−z)
      if (z > 0) {
        e = withValue ? Math.exp(-z) : expAtTrial[t];
        if (withValue) v += c * Math.log1p(e);
        sig = e / (1 + e);
      } else {
        e = withValue ? Math.exp(z) : expAtTrial[t];
        if (withValue) v += c * (Math.log1p(e) - z);
        sig = 1 / (1 + e);
      }
      const dz = -c * sig;
      const h = (c * e) / ((1 + e) * (1 + e)); // c·σ(z)·σ(−z)
      g[w] += dz * s;
      g[l] -= dz * s;
      const hb = h * s * s;
      const at = q * K * K;
      Hb[at + wl * K + wl] += hb;
      Hb[at + ll * K + ll] += hb;
      Hb[at + wl * K + ll] -= hb;
      Hb[at + ll * K + wl] -= hb;
      const cAt = q * K * M;
      if (slopes) {
        g[nBeta + r] += dz * diff;
        const cs = h * s * diff + dz;
        C[cAt + wl * M + r] += cs;
        C[cAt + ll * M + r] -= cs;
        Hr[r * M + r] += h * diff * diff;
      }
      if (offsets) {
        const o = offsetLocal + r;
        g[nBeta + o] += dz;
        C[cAt + wl * M + o] += h * s;
        C[cAt + ll * M + o] -= h * s;
        Hr[o * M + o] += h;
        if (slopes) {
          Hr[r * M + o] += h * diff;
          Hr[o * M + r] += h * diff;
        }
      }
    }
    if (ridge > 0)
      for (let q = 0; q < Q; q++)
        for (let i = 0; i < K; i++) {
          const p = q * K + i;
          v += ridge * x[p] * x[p];
          g[p] += 2 * ridge * x[p];
          Hb[q * K * K + i * K + i] += 2 * ridge;
        }
    if (slopes)
      for (let r = 0; r < R; r++) {
        const dv = x[nBeta + r] - 1;
        v += penalty * dv * dv;
        g[nBeta + r] += 2 * penalty * dv;
        Hr[r * M + r] += 2 * penalty;
      }
    if (offsets)
      for (let r = 0; r < R; r++) {
        const o = offsetLocal + r;
        const ov = x[nBeta + o];
        v += penalty * ov * ov;
        g[nBeta + o] += 2 * penalty * ov;
        Hr[o * M + o] += 2 * penalty;
      }
    return v;
  };

  let fx = derivatives();
  let pg = projectedGradientNorm(x, g, lower, upper);
  let iterations = 0;
  while (pg > options.gradientTolerance && iterations < options.maxIterations) {
    iterations++;
    for (let j = 0; j < M; j++) {
      const i = nBeta + j;
      free[j] = (x[i] <= lower[i] && g[i] > 0) || (x[i] >= upper[i] && g[i] < 0) ? 0 : 1;
    }
    // Eliminate each question's block: S = H_r − Σ C_qᵀ H_q⁻¹ C_q, rhs = g_r − Σ C_qᵀ H_q⁻¹ g_q.
    S.set(Hr);
    for (let j = 0; j < M; j++) rhs[j] = g[nBeta + j];
    for (let q = 0; q < Q; q++) {
      const at = q * K * K;
      let scale = 0;
      for (let i = 0; i < K; i++) scale = Math.max(scale, Hb[at + i * K + i]);
      // + 11ᵀ (the null direction of the likelihood), + a trace of the identity for options never compared.
      const shift = 1e-12 * Math.max(scale, 1);
      for (let i = 0; i < K; i++) {
        for (let j = 0; j < K; j++) Hb[at + i * K + j] += 1;
        Hb[at + i * K + i] += shift;
      }
      if (!cholesky(Hb, K, at)) throw new Error("Bradley–Terry Newton: a strength block is not positive definite");
      for (let i = 0; i < K; i++) yq[i] = g[q * K + i];
      cholSolve(Hb, K, at, yq, 0);
      const cAt = q * K * M;
      for (let j = 0; j < M; j++) {
        for (let i = 0; i < K; i++) Y[j * K + i] = C[cAt + i * M + j];
        cholSolve(Hb, K, at, Y, j * K);
      }
      for (let a = 0; a < M; a++) {
        let v = 0;
        for (let i = 0; i < K; i++) v += C[cAt + i * M + a] * yq[i];
        rhs[a] -= v;
        for (let b = 0; b <= a; b++) {
          let u = 0;
          for (let i = 0; i < K; i++) u += C[cAt + i * M + a] * Y[b * K + i];
          S[a * M + b] -= u;
          if (b !== a) S[b * M + a] -= u;
        }
      }
    }
    // The rater step on the free parameters, shifted until S is positive definite.
    const idx: number[] = [];
    for (let j = 0; j < M; j++) if (free[j]) idx.push(j);
    const m = idx.length;
    const Sf = new Float64Array(m * m);
    const dr = new Float64Array(M);
    if (m > 0) {
      let lambda = 0;
      let diagMax = 0;
      for (const j of idx) diagMax = Math.max(diagMax, Math.abs(S[j * M + j]));
      for (let attempt = 0; ; attempt++) {
        for (let a = 0; a < m; a++) for (let b = 0; b < m; b++) Sf[a * m + b] = S[idx[a] * M + idx[b]];
        for (let a = 0; a < m; a++) Sf[a * m + a] += lambda;
        if (cholesky(Sf, m)) break;
        if (attempt > 60) throw new Error("Bradley–Terry Newton: the rater system could not be made definite");
        lambda = lambda === 0 ? 1e-8 * Math.max(diagMax, 1) : lambda * 10;
      }
      const b = new Float64Array(m);
      for (let a = 0; a < m; a++) b[a] = -rhs[idx[a]];
      cholSolve(Sf, m, 0, b, 0);
      for (let a = 0; a < m; a++) dr[idx[a]] = b[a];
    }
    // Back-substitution: d_q = −H_q⁻¹ (g_q + C_q d_r).
    for (let q = 0; q < Q; q++) {
      const cAt = q * K * M;
      for (let i = 0; i < K; i++) {
        let v = g[q * K + i];
        for (let j = 0; j < M; j++) v += C[cAt + i * M + j] * dr[j];
        yq[i] = v;
      }
      cholSolve(Hb, K, q * K * K, yq, 0);
      for (let i = 0; i < K; i++) d[q * K + i] = -yq[i];
    }
    for (let j = 0; j < M; j++) d[nBeta + j] = dr[j];

    // Armijo backtracking along the projected path.
    let step = 1;
    let accepted = false;
    let best = fx;
    for (let k = 0; k < 60; k++) {
      let slope = 0;
      for (let i = 0; i < n; i++) {
        trial[i] = Math.min(upper[i], Math.max(lower[i], x[i] + step * d[i]));
        slope += g[i] * (trial[i] - x[i]);
      }
      const fTrial = value(trial);
      if (fTrial <= fx + 1e-4 * slope && slope <= 0) {
        accepted = fTrial < fx;
        best = fTrial;
        break;
      }
      step *= 0.5;
    }
    if (!accepted) break;
    [x, trial] = [trial, x];
    fx = best;
    derivatives(false);
    pg = projectedGradientNorm(x, g, lower, upper);
  }
  return { x, value: fx, iterations, projectedGradientNorm: pg };
}
