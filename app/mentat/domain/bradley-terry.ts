/**
 * Bradley–Terry preference labels from expert option ratings (docs/mentat.md#preference-labels; MENTAT, "Hierarchical
 * Bradley–Terry Preference Annotation"). Pure: no I/O, no clock; bootstrap resampling takes a seed and draws with
 * PyRandom (CPython's `random.Random`), so every number here can be replayed in Python.
 *
 * The model. Each rater's 0–100 ratings of a question's K options give pairwise wins: i beats j when i's score is
 * higher; ties give nothing. One strength vector β_q per question (Σ_i β_qi = 0) and, per rater r, a discrimination
 * slope s_r and an offset o_r:
 *
 *   P(i ≻ j | r) = σ(s_r·(β_qi − β_qj) + o_r)
 *
 * fitted by minimising, over all wins w → l,  Σ −log σ(s_r(β_qw − β_ql) + o_r)
 *   + penalty·Σ_r (s_r − 1)² + penalty·Σ_r o_r² + strengthPenalty·Σ β²
 * with s_r and o_r within bounds, as MENTAT's reference implementation does (preferece_HBT.py; strengths starting
 * at 0, slopes at 1, offsets at 0). The penalty and the bounds are those of a version of that file
 * (MENTAT_FIT_VERSIONS; docs/mentat.md, "Versions of MENTAT's fit"): by default the current one (penalty 5, slopes
 * in [0.5, 2], offsets in [−3, 3]). The label of a question is softmax(β_q), with percentile bootstrap intervals
 * from refits on annotation rows resampled within each question.
 *
 * Three properties of this likelihood that users of the labels should know (both checked in
 * test/unit/bradley-terry.test.ts):
 * - Only observed wins enter it, so nothing in the data pulls an offset down: each o_r rises until the penalty
 *   balances it (2·penalty·o_r = Σ_{r's wins} σ(−z)) or it reaches its bound. The offsets therefore grow with the
 *   number of comparisons a rater made rather than measuring leniency, and a large common offset flattens the
 *   strengths (about halving them at o = 3). Fit with `raterEffects: "slope"` to leave offsets out.
 * - The data fix the slopes only relative to each other: scaling every slope by c and β by 1/c leaves the wins'
 *   likelihood unchanged; the penalty picks the scale.
 * - `strengthPenalty` (default 0.01, not in the reference) keeps β finite when an option wins every comparison
 *   it is in (complete separation), where no maximum exists and the answer would depend on the optimiser's stopping
 *   rule; with it the optimum is unique and centred, so Concord and scipy agree to many digits. Set 0 for the plain
 *   maximum-likelihood fit (the published Bradley–Terry reference test does).
 */
import { compareCodePoints } from "../../python-compat/text";
import { minimizeBounded, type BoundedMinimizeOptions } from "../../stats/bounded-lbfgs";
import { separatedQuestions } from "./bradley-terry-separation";
import { minimizeHbtNewton, type NewtonProblem } from "./bradley-terry-newton";
import { PyRandom } from "../../python-compat/random";
import { maxOf } from "../../stats/extremes";

export type RaterEffects = "none" | "slope" | "slope+offset";

/**
 * The versions of MENTAT's fit (preferece_HBT.py and the bootstrap loop of helper_functions.py), named by the date
 * of the commit that set them (docs/mentat.md, "Versions of MENTAT's fit"). "2025-01-24" is the file as MENTAT
 * still publishes it and the one its published labels come from; "2025-01-19" is the first version.
 */
export const MENTAT_FIT_VERSIONS = {
  "2025-01-24": { penalty: 5, slopeBounds: [0.5, 2] as const, offsetBounds: [-3, 3] as const, bootstrap: 100 },
  "2025-01-19": { penalty: 2, slopeBounds: [0.8, 1.25] as const, offsetBounds: [-3, 3] as const, bootstrap: 30 },
};
export type MentatFitVersion = keyof typeof MENTAT_FIT_VERSIONS;
export const MENTAT_FIT_VERSION_NAMES = Object.keys(MENTAT_FIT_VERSIONS) as [MentatFitVersion, ...MentatFitVersion[]];
/** The version used when none is named: MENTAT's current one. */
export const CURRENT_MENTAT_FIT: MentatFitVersion = "2025-01-24";

const current = MENTAT_FIT_VERSIONS[CURRENT_MENTAT_FIT];
export const HBT_DEFAULTS = {
  raterEffects: "slope+offset" as RaterEffects,
  penalty: current.penalty,
  // MENTAT's objective has no ridge (docs/mentat.md, "Separation").
  strengthPenalty: 0,
  slopeBounds: current.slopeBounds,
  offsetBounds: current.offsetBounds,
};

/** `count` wins of option `winner` over option `loser` of `question`, by `rater` (all 0-based indices). */
export interface WinCount {
  question: number;
  winner: number;
  loser: number;
  rater: number;
  count: number;
}

export interface PairwiseData {
  nQuestions: number;
  /** Options per question (5 for MENTAT). */
  nOptions: number;
  nRaters: number;
  wins: readonly WinCount[];
}

export interface HbtParameters {
  /** nQuestions × nOptions, each row summing to zero. */
  strengths: number[][];
  slopes: number[];
  offsets: number[];
}

export interface HbtOptions {
  /** "slope+offset" (default, MENTAT), "slope" (offsets fixed at 0) or "none" (plain Bradley–Terry). */
  raterEffects?: RaterEffects;
  /** Weight of Σ(s − 1)² and Σ o²; default 5 (MENTAT's current fit). */
  penalty?: number;
  /** Weight of Σ β² (not in MENTAT); default 0. */
  strengthPenalty?: number;
  slopeBounds?: readonly [number, number];
  offsetBounds?: readonly [number, number];
  /** A starting point (e.g. the full-data fit for bootstrap refits); default β = 0, s = 1, o = 0. */
  start?: HbtParameters;
  /**
   * "newton" (default): projected Newton steps on the block-arrowhead Hessian (bradley-terry-newton.ts), then
   * L-BFGS-B from where it stopped, which confirms the optimum by the same stopping rule. "lbfgsb": L-BFGS-B alone
   * (the method before; docs/decisions/0011-newton-for-the-bradley-terry-fit.md). Both reach the same optimum.
   */
  method?: "newton" | "lbfgsb";
  optimizer?: BoundedMinimizeOptions;
}

export interface HbtFit extends HbtParameters {
  /** The minimised objective (negative penalised log-likelihood). */
  objective: number;
  iterations: number;
  converged: boolean;
  projectedGradientNorm: number;
  message: string;
}

interface Layout {
  q: number;
  k: number;
  r: number;
  slopes: boolean;
  offsets: boolean;
  size: number;
}

function layoutOf(data: PairwiseData, effects: RaterEffects): Layout {
  const slopes = effects !== "none";
  const offsets = effects === "slope+offset";
  const size = data.nQuestions * data.nOptions + (slopes ? data.nRaters : 0) + (offsets ? data.nRaters : 0);
  return { q: data.nQuestions, k: data.nOptions, r: data.nRaters, slopes, offsets, size };
}

function checkData(data: PairwiseData): void {
  const { nQuestions, nOptions, nRaters } = data;
  if (!(Number.isInteger(nQuestions) && nQuestions >= 1 && Number.isInteger(nOptions) && nOptions >= 2))
    throw new RangeError("Bradley–Terry requires at least one question with at least two options");
  if (!(Number.isInteger(nRaters) && nRaters >= 1)) throw new RangeError("Bradley–Terry requires at least one rater");
  for (const w of data.wins) {
    const ok =
      Number.isInteger(w.question) &&
      w.question >= 0 &&
      w.question < nQuestions &&
      Number.isInteger(w.winner) &&
      Number.isInteger(w.loser) &&
      w.winner >= 0 &&
      w.loser >= 0 &&
      w.winner < nOptions &&
      w.loser < nOptions &&
      w.winner !== w.loser &&
      Number.isInteger(w.rater) &&
      w.rater >= 0 &&
      w.rater < nRaters &&
      w.count >= 0 &&
      Number.isFinite(w.count);
    if (!ok) throw new RangeError(`Bradley–Terry: invalid win record ${JSON.stringify(w)}`);
  }
}

/**
 * The penalised negative log-likelihood and its gradient over the packed parameter vector
 * [β (question-major), slopes, offsets] (slopes and offsets present as `raterEffects` says). Exported for tests.
 */
export function hbtObjective(
  data: PairwiseData,
  options: HbtOptions = {},
): (x: Float64Array, g: Float64Array) => number {
  const layout = layoutOf(data, options.raterEffects ?? HBT_DEFAULTS.raterEffects);
  const penalty = options.penalty ?? HBT_DEFAULTS.penalty;
  const ridge = options.strengthPenalty ?? HBT_DEFAULTS.strengthPenalty;
  const { k, slopes, offsets } = layout;
  const nBeta = layout.q * k;
  const slopeAt = nBeta;
  const offsetAt = nBeta + (slopes ? layout.r : 0);
  const n = data.wins.length;
  const wi = new Int32Array(n);
  const li = new Int32Array(n);
  const ri = new Int32Array(n);
  const counts = new Float64Array(n);
  data.wins.forEach((w, t) => {
    wi[t] = w.question * k + w.winner;
    li[t] = w.question * k + w.loser;
    ri[t] = w.rater;
    counts[t] = w.count;
  });
  // One exp and one log1p per win record: with e = exp(−|z|), log(1 + e^(−z)) = max(−z, 0) + log1p(e) and
  // σ(−z) = e / (1 + e) for z ≥ 0, 1 / (1 + e) below (both without overflow). The hot loop of every fit.
  return (x, g) => {
    g.fill(0);
    let value = 0;
    for (let t = 0; t < n; t++) {
      const c = counts[t];
      if (c === 0) continue;
      const w = wi[t];
      const l = li[t];
      const r = ri[t];
      const diff = x[w] - x[l];
      const s = slopes ? x[slopeAt + r] : 1;
      const z = offsets ? s * diff + x[offsetAt + r] : s * diff;
      let e: number;
      let sig: number;
      if (z > 0) {
        e = Math.exp(-z);
        value += c * Math.log1p(e);
        sig = e / (1 + e);
      } else {
        e = Math.exp(z);
        value += c * (Math.log1p(e) - z);
        sig = 1 / (1 + e);
      }
      const dz = -c * sig;
      const ds = dz * s;
      g[w] += ds;
      g[l] -= ds;
      if (slopes) g[slopeAt + r] += dz * diff;
      if (offsets) g[offsetAt + r] += dz;
    }
    if (ridge > 0)
      for (let i = 0; i < nBeta; i++) {
        value += ridge * x[i] * x[i];
        g[i] += 2 * ridge * x[i];
      }
    if (slopes)
      for (let r = 0; r < layout.r; r++) {
        const d = x[slopeAt + r] - 1;
        value += penalty * d * d;
        g[slopeAt + r] += 2 * penalty * d;
      }
    if (offsets)
      for (let r = 0; r < layout.r; r++) {
        const o = x[offsetAt + r];
        value += penalty * o * o;
        g[offsetAt + r] += 2 * penalty * o;
      }
    return value;
  };
}

function newtonProblem(data: PairwiseData, layout: Layout, options: HbtOptions): NewtonProblem {
  const n = data.wins.length;
  const problem: NewtonProblem = {
    nQuestions: layout.q,
    nOptions: layout.k,
    nRaters: layout.r,
    slopes: layout.slopes,
    offsets: layout.offsets,
    penalty: options.penalty ?? HBT_DEFAULTS.penalty,
    ridge: options.strengthPenalty ?? HBT_DEFAULTS.strengthPenalty,
    question: new Int32Array(n),
    winner: new Int32Array(n),
    loser: new Int32Array(n),
    rater: new Int32Array(n),
    count: new Float64Array(n),
  };
  data.wins.forEach((w, t) => {
    problem.question[t] = w.question;
    problem.winner[t] = w.winner;
    problem.loser[t] = w.loser;
    problem.rater[t] = w.rater;
    problem.count[t] = w.count;
  });
  return problem;
}

/**
 * Fits the hierarchical Bradley–Terry model to pairwise win counts (see the module comment). The strengths are
 * centred per question at the end: the likelihood depends on differences only, so centring changes no probability.
 *
 * @example
 * fitHierarchicalBradleyTerry({ nQuestions: 1, nOptions: 2, nRaters: 1,
 *   wins: [{ question: 0, winner: 0, loser: 1, rater: 0, count: 3 }, { question: 0, winner: 1, loser: 0, rater: 0, count: 1 }] },
 *   { raterEffects: "none", strengthPenalty: 0 }).strengths // [[0.549, -0.549]] (= ±log(3)/2)
 */
export function fitHierarchicalBradleyTerry(data: PairwiseData, options: HbtOptions = {}): HbtFit {
  checkData(data);
  const effects = options.raterEffects ?? HBT_DEFAULTS.raterEffects;
  const layout = layoutOf(data, effects);
  const [sLo, sHi] = options.slopeBounds ?? HBT_DEFAULTS.slopeBounds;
  const [oLo, oHi] = options.offsetBounds ?? HBT_DEFAULTS.offsetBounds;
  if (!(sLo <= 1 && 1 <= sHi && oLo <= 0 && 0 <= oHi))
    throw new RangeError("Bradley–Terry bounds must contain slope 1 and offset 0");
  const nBeta = layout.q * layout.k;
  const x0 = new Float64Array(layout.size);
  const lower = new Float64Array(layout.size).fill(-Infinity);
  const upper = new Float64Array(layout.size).fill(Infinity);
  let at = nBeta;
  if (layout.slopes) {
    for (let r = 0; r < layout.r; r++) {
      x0[at + r] = options.start?.slopes[r] ?? 1;
      lower[at + r] = sLo;
      upper[at + r] = sHi;
    }
    at += layout.r;
  }
  if (layout.offsets)
    for (let r = 0; r < layout.r; r++) {
      x0[at + r] = options.start?.offsets[r] ?? 0;
      lower[at + r] = oLo;
      upper[at + r] = oHi;
    }
  if (options.start)
    for (let q = 0; q < layout.q; q++)
      for (let i = 0; i < layout.k; i++) x0[q * layout.k + i] = options.start.strengths[q][i];

  const lbfgsb: BoundedMinimizeOptions = { maxIterations: 5000, gradientTolerance: 1e-8, ...options.optimizer };
  let newtonIterations = 0;
  let startAt: Float64Array = x0;
  if ((options.method ?? "newton") === "newton") {
    const newton = minimizeHbtNewton(newtonProblem(data, layout, options), x0, lower, upper, {
      // A little tighter than L-BFGS-B's, so that L-BFGS-B usually stops at once.
      gradientTolerance: lbfgsb.gradientTolerance! / 10,
      maxIterations: 200,
    });
    newtonIterations = newton.iterations;
    startAt = newton.x;
  }
  const result = minimizeBounded(hbtObjective(data, options), startAt, lower, upper, lbfgsb);
  const x = result.x;
  const strengths: number[][] = [];
  for (let q = 0; q < layout.q; q++) {
    const row = Array.from(x.subarray(q * layout.k, (q + 1) * layout.k));
    const mean = row.reduce((s, v) => s + v, 0) / layout.k;
    strengths.push(row.map((v) => v - mean));
  }
  const slopes = layout.slopes ? Array.from(x.subarray(nBeta, nBeta + layout.r)) : new Array<number>(layout.r).fill(1);
  const offsetAt = nBeta + (layout.slopes ? layout.r : 0);
  const offsets = layout.offsets
    ? Array.from(x.subarray(offsetAt, offsetAt + layout.r))
    : new Array<number>(layout.r).fill(0);
  return {
    strengths,
    slopes,
    offsets,
    objective: result.value,
    iterations: newtonIterations + result.iterations,
    converged: result.converged,
    projectedGradientNorm: result.projectedGradientNorm,
    message: result.message,
  };
}

/**
 * The plain Bradley–Terry model for n items from win counts, P(i beats j) = σ(β_i − β_j), by maximum likelihood
 * (no penalty unless given); strengths centred to sum zero. Throws when an item has no wins or no losses (then the
 * maximum does not exist).
 *
 * @example fitBradleyTerry(2, [{ winner: 0, loser: 1, count: 3 }, { winner: 1, loser: 0, count: 1 }]).strengths // [0.549, -0.549]
 */
export function fitBradleyTerry(
  nItems: number,
  wins: readonly { winner: number; loser: number; count: number }[],
  options: { strengthPenalty?: number } = {},
): { strengths: number[]; objective: number; converged: boolean; iterations: number } {
  const ridge = options.strengthPenalty ?? 0;
  if (ridge === 0) {
    const won = new Float64Array(nItems);
    const lost = new Float64Array(nItems);
    for (const w of wins) {
      won[w.winner] += w.count;
      lost[w.loser] += w.count;
    }
    for (let i = 0; i < nItems; i++)
      if (won[i] === 0 || lost[i] === 0)
        throw new RangeError(
          `fitBradleyTerry: item ${i} ${
            won[i] === 0 ? "never wins" : "never loses"
          }, so the maximum-likelihood strengths do not exist; give a strengthPenalty`,
        );
  }
  const fit = fitHierarchicalBradleyTerry(
    { nQuestions: 1, nOptions: nItems, nRaters: 1, wins: wins.map((w) => ({ ...w, question: 0, rater: 0 })) },
    { raterEffects: "none", strengthPenalty: ridge, optimizer: { gradientTolerance: 1e-10 } },
  );
  return {
    strengths: fit.strengths[0],
    objective: fit.objective,
    converged: fit.converged,
    iterations: fit.iterations,
  };
}

/**
 * The pairwise wins of one rating row: (i, j) for every i, j with scores[i] > scores[j] (ties give nothing).
 *
 * @example pairwiseWins([80, 20, 80]) // [[0, 1], [2, 1]]
 */
export function pairwiseWins(scores: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < scores.length; i++)
    for (let j = 0; j < scores.length; j++) if (i !== j && scores[i] > scores[j]) out.push([i, j]);
  return out;
}

/** One rater's scores for the options of one question (a question may have several rows from the same rater). */
export interface AnnotationRow {
  question: string;
  rater: string;
  scores: readonly number[];
}

/** Annotation rows in a canonical order (question, rater, scores), so results never depend on input order. */
export function sortAnnotationRows<T extends AnnotationRow>(rows: readonly T[]): T[] {
  return [...rows].sort(
    (a, b) =>
      compareCodePoints(a.question, b.question) ||
      compareCodePoints(a.rater, b.rater) ||
      compareCodePoints(JSON.stringify(a.scores), JSON.stringify(b.scores)),
  );
}

/** Aggregated win counts of annotation rows, questions and raters indexed by the given lists. */
export function winsFromAnnotations(
  rows: readonly AnnotationRow[],
  questions: readonly string[],
  raters: readonly string[],
  nOptions: number,
): PairwiseData {
  const qIndex = new Map(questions.map((q, i) => [q, i]));
  const rIndex = new Map(raters.map((r, i) => [r, i]));
  const counts = new Map<number, number>();
  for (const row of rows) {
    const q = qIndex.get(row.question);
    const r = rIndex.get(row.rater);
    if (q === undefined || r === undefined)
      throw new RangeError(`winsFromAnnotations: unknown question or rater in ${JSON.stringify(row)}`);
    if (row.scores.length !== nOptions)
      throw new RangeError(
        `winsFromAnnotations: question "${row.question}" needs ${nOptions} scores, got ${row.scores.length}`,
      );
    for (const [w, l] of pairwiseWins(row.scores)) {
      const key = ((q * raters.length + r) * nOptions + w) * nOptions + l;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  const wins: WinCount[] = [...counts.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([key, count]) => {
      const l = key % nOptions;
      const w = Math.floor(key / nOptions) % nOptions;
      const qr = Math.floor(key / (nOptions * nOptions));
      return { question: Math.floor(qr / raters.length), rater: qr % raters.length, winner: w, loser: l, count };
    });
  return { nQuestions: questions.length, nOptions, nRaters: raters.length, wins };
}

/** softmax(v)_i = e^{v_i} / Σ_j e^{v_j}, computed stably. */
export function softmax(v: readonly number[]): number[] {
  const m = maxOf(v);
  const e = v.map((x) => Math.exp(x - m));
  const total = e.reduce((s, x) => s + x, 0);
  return e.map((x) => x / total);
}

/**
 * The p-th percentile (0–100) of ascending values with linear interpolation between order statistics, numpy's
 * default (`np.percentile(..., method="linear")`, Hyndman & Fan type 7).
 *
 * @example percentile([1, 2, 3, 4], 25) // 1.75
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError("percentile requires at least one value");
  const h = ((sorted.length - 1) * p) / 100;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

export interface PreferenceLabelOptions extends Omit<HbtOptions, "start"> {
  /**
   * The version of MENTAT's fit whose penalty, bounds and replicate count apply where not given; default
   * CURRENT_MENTAT_FIT.
   */
  fitVersion?: MentatFitVersion;
  /** Bootstrap replicates; default the version's (100 for MENTAT's current fit). 0 skips the intervals. */
  bootstrap?: number;
  /** Seed of the resampling (CPython `random.Random(seed)`); default 0. */
  seed?: number;
  /** Of the percentile intervals; default 0.95. */
  confidenceLevel?: number;
  /** Called after each bootstrap replicate (progress for long runs). */
  onReplicate?: (done: number, total: number) => void;
}

export interface QuestionLabel {
  question: string;
  nAnnotations: number;
  /** β, summing to zero, in the question's option order. */
  strengths: number[];
  /** softmax(β): the preference probability of each option. */
  labels: number[];
  lower: number[];
  upper: number[];
  /**
   * The question's wins have no finite maximum (an option never beaten or never winning; bradley-terry-separation.ts):
   * without a ridge its strengths are where the optimiser stopped.
   */
  separated: boolean;
  /** Bootstrap replicates in which the resampled wins of this question were separated. */
  separatedReplicates: number;
}

export interface RaterParameters {
  rater: string;
  slope: number;
  offset: number;
  nAnnotations: number;
  nWins: number;
}

export interface PreferenceLabels {
  questions: QuestionLabel[];
  raters: RaterParameters[];
  objective: number;
  iterations: number;
  converged: boolean;
  bootstrap: { replicates: number; seed: number; confidenceLevel: number; notConverged: number };
  options: {
    fitVersion: MentatFitVersion;
    raterEffects: RaterEffects;
    penalty: number;
    strengthPenalty: number;
    slopeBounds: [number, number];
    offsetBounds: [number, number];
  };
}

/**
 * Everything a bootstrap refit needs, computed once from the annotation rows: the rows in canonical order, the
 * questions and experts, the full-data fit (the refits' starting point). Plain data, so it can be sent to a worker
 * thread (app/mentat/parallel-fit.server.ts) as it is.
 */
export interface PreferenceFitPlan {
  nOptions: number;
  /** The annotation rows in canonical order (sortAnnotationRows): grouped by question, questions in code-point order. */
  rows: AnnotationRow[];
  questions: string[];
  raters: string[];
  /** Index in `rows` of each question's first row, and its number of rows. */
  groupStart: number[];
  groupSize: number[];
  fitVersion: MentatFitVersion;
  hbt: HbtOptions;
  fit: HbtFit;
  separated: boolean[];
  replicates: number;
  seed: number;
  level: number;
}

/** What one bootstrap refit contributes to the intervals. */
export interface ReplicateOutcome {
  /** softmax(β) of every question, question-major (nQuestions × nOptions). */
  probabilities: number[];
  /** Questions whose resampled wins were separated. */
  separated: number[];
  /** The refit did not converge, or a separated question had no ridge to hold it. */
  notConverged: boolean;
}

/**
 * The full-data fit and the bookkeeping of the bootstrap (see fitPreferenceLabels). Throws a RangeError when a row
 * has the wrong number of scores or a score is not finite, or an option is out of range.
 */
export function planPreferenceFit(
  rows: readonly AnnotationRow[],
  nOptions: number,
  options: Omit<PreferenceLabelOptions, "onReplicate"> = {},
): PreferenceFitPlan {
  for (const row of rows)
    if (row.scores.length !== nOptions || row.scores.some((s) => !Number.isFinite(s)))
      throw new RangeError(`fitPreferenceLabels: question "${row.question}" needs ${nOptions} finite scores`);
  if (rows.length === 0) throw new RangeError("fitPreferenceLabels requires at least one annotation row");
  const fitVersion = options.fitVersion ?? CURRENT_MENTAT_FIT;
  const version = MENTAT_FIT_VERSIONS[fitVersion];
  if (!version) throw new RangeError(`unknown MENTAT fit version "${fitVersion}"`);
  const replicates = options.bootstrap ?? version.bootstrap;
  const seed = options.seed ?? 0;
  const level = options.confidenceLevel ?? 0.95;
  if (!(level > 0 && level < 1)) throw new RangeError(`confidenceLevel must be in (0, 1), got ${level}`);
  if (!(Number.isInteger(replicates) && replicates >= 0)) throw new RangeError("bootstrap must be a whole number ≥ 0");
  const sorted = sortAnnotationRows(rows);
  const questions = [...new Set(sorted.map((r) => r.question))].sort(compareCodePoints);
  const raters = [...new Set(sorted.map((r) => r.rater))].sort(compareCodePoints);
  const hbt: HbtOptions = {
    raterEffects: options.raterEffects ?? HBT_DEFAULTS.raterEffects,
    penalty: options.penalty ?? version.penalty,
    strengthPenalty: options.strengthPenalty ?? HBT_DEFAULTS.strengthPenalty,
    slopeBounds: options.slopeBounds ?? version.slopeBounds,
    offsetBounds: options.offsetBounds ?? version.offsetBounds,
    method: options.method ?? "newton",
    optimizer: options.optimizer,
  };
  const data = winsFromAnnotations(sorted, questions, raters, nOptions);
  const fit = fitHierarchicalBradleyTerry(data, hbt);
  const groupStart: number[] = [];
  const groupSize: number[] = [];
  let q = -1;
  sorted.forEach((row, i) => {
    if (q < 0 || row.question !== questions[q]) {
      q++;
      groupStart.push(i);
      groupSize.push(0);
    }
    groupSize[q]++;
  });
  return {
    nOptions,
    rows: sorted,
    questions,
    raters,
    groupStart,
    groupSize,
    fitVersion,
    hbt,
    fit,
    // Separation only defeats the fit without a ridge; it is reported either way (docs/mentat.md, "Separation").
    separated: separatedQuestions(data),
    replicates,
    seed,
    level,
  };
}

/**
 * The resampled rows of every replicate, as indices into `plan.rows`: replicate b occupies
 * [b·n, (b + 1)·n) for n = plan.rows.length. Replicate b draws, for each question in code-point order,
 * `rng.randrange(size)` size times from one `random.Random(seed)` shared by all replicates in order — the stream
 * the Python reference replays. Drawn once, before any refit, so each replicate's resample depends only on (seed,
 * b), however the refits are then shared out between workers.
 */
export function bootstrapDraws(plan: PreferenceFitPlan): Int32Array {
  const n = plan.rows.length;
  const out = new Int32Array(plan.replicates * n);
  const rng = new PyRandom(plan.seed);
  let at = 0;
  for (let b = 0; b < plan.replicates; b++)
    for (let q = 0; q < plan.groupStart.length; q++) {
      const start = plan.groupStart[q];
      const size = plan.groupSize[q];
      for (let i = 0; i < size; i++) out[at++] = start + rng.randbelow(size);
    }
  return out;
}

/**
 * Refit b of the bootstrap, on its resampled rows (`draws` from bootstrapDraws), from the default start (β = 0,
 * s = 1, o = 0) like the full-data fit. Starting from the full-data fit instead (as the Python reference does) reaches
 * the same optimum to the fixtures' tolerance but took about twice the iterations at 10× MENTAT's size (the
 * optimiser starts without curvature information either way, and the full-data optimum sits in a flatter valley).
 */
export function refitReplicate(plan: PreferenceFitPlan, draws: Int32Array, b: number): ReplicateOutcome {
  const n = plan.rows.length;
  const sample: AnnotationRow[] = new Array(n);
  for (let i = 0; i < n; i++) sample[i] = plan.rows[draws[b * n + i]];
  const sampleData = winsFromAnnotations(sample, plan.questions, plan.raters, plan.nOptions);
  const refit = fitHierarchicalBradleyTerry(sampleData, plan.hbt);
  const sampleSeparated = separatedQuestions(sampleData);
  const unbounded = plan.hbt.strengthPenalty === 0 && sampleSeparated.some(Boolean);
  return {
    probabilities: refit.strengths.flatMap((beta) => softmax(beta)),
    separated: sampleSeparated.flatMap((s, q) => (s ? [q] : [])),
    notConverged: !refit.converged || unbounded,
  };
}

/** The labels, intervals and expert parameters from the plan and its replicates' outcomes (in replicate order). */
export function assemblePreferenceLabels(
  plan: PreferenceFitPlan,
  outcomes: readonly ReplicateOutcome[],
): PreferenceLabels {
  const { fit, questions, raters, hbt, nOptions, replicates, level, fitVersion } = plan;
  if (outcomes.length !== replicates)
    throw new RangeError(`assemblePreferenceLabels: ${outcomes.length} outcomes for ${replicates} replicates`);
  const separatedReplicates = questions.map(() => 0);
  const draws: number[][][] = questions.map(() => Array.from({ length: nOptions }, () => []));
  let notConverged = 0;
  for (const outcome of outcomes) {
    for (const q of outcome.separated) separatedReplicates[q]++;
    if (outcome.notConverged) notConverged++;
    for (let q = 0; q < questions.length; q++)
      for (let i = 0; i < nOptions; i++) draws[q][i].push(outcome.probabilities[q * nOptions + i]);
  }
  const tail = ((1 - level) / 2) * 100;
  const labelled: QuestionLabel[] = questions.map((question, q) => {
    const labels = softmax(fit.strengths[q]);
    const intervals = draws[q].map((values) => [...values].sort((a, b) => a - b));
    return {
      question,
      nAnnotations: plan.groupSize[q],
      strengths: fit.strengths[q],
      labels,
      lower: replicates ? intervals.map((v) => percentile(v, tail)) : labels,
      upper: replicates ? intervals.map((v) => percentile(v, 100 - tail)) : labels,
      separated: plan.separated[q],
      separatedReplicates: separatedReplicates[q],
    };
  });
  const rIndex = new Map(raters.map((r, i) => [r, i]));
  const winsByRater = new Float64Array(raters.length);
  const rowsByRater = new Float64Array(raters.length);
  for (const row of plan.rows) {
    const r = rIndex.get(row.rater)!;
    rowsByRater[r]++;
    winsByRater[r] += pairwiseWins(row.scores).length;
  }
  const unbounded = hbt.strengthPenalty === 0 && plan.separated.some(Boolean);
  return {
    questions: labelled,
    raters: raters.map((rater, r) => ({
      rater,
      slope: fit.slopes[r],
      offset: fit.offsets[r],
      nAnnotations: rowsByRater[r],
      nWins: winsByRater[r],
    })),
    objective: fit.objective,
    iterations: fit.iterations,
    converged: fit.converged && !unbounded,
    bootstrap: { replicates, seed: plan.seed, confidenceLevel: level, notConverged },
    options: {
      fitVersion,
      raterEffects: hbt.raterEffects!,
      penalty: hbt.penalty!,
      strengthPenalty: hbt.strengthPenalty!,
      slopeBounds: [...hbt.slopeBounds!] as [number, number],
      offsetBounds: [...hbt.offsetBounds!] as [number, number],
    },
  };
}

/**
 * Preference labels for every question of the annotation rows: one joint hierarchical fit (strengths per question,
 * slope and offset per rater shared across questions), softmax(β) per question, and percentile bootstrap intervals
 * from `bootstrap` refits, each on rows resampled with replacement within each question (so every question keeps
 * its number of annotations; the draws are bootstrapDraws'). This is the one-thread path; the worker pool
 * (app/mentat/parallel-fit.server.ts) runs the same plan, draws and refits and gives the same numbers.
 *
 * Throws a RangeError when a row has the wrong number of scores or a score is not finite.
 */
export function fitPreferenceLabels(
  rows: readonly AnnotationRow[],
  nOptions: number,
  options: PreferenceLabelOptions = {},
): PreferenceLabels {
  const plan = planPreferenceFit(rows, nOptions, options);
  const draws = bootstrapDraws(plan);
  const outcomes: ReplicateOutcome[] = [];
  for (let b = 0; b < plan.replicates; b++) {
    outcomes.push(refitReplicate(plan, draws, b));
    options.onReplicate?.(b + 1, plan.replicates);
  }
  return assemblePreferenceLabels(plan, outcomes);
}
