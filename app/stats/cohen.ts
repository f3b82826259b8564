/**
 * Two-rater statistics on the items both raters rated: the confusion matrix and Cohen's (weighted) kappa with the
 * standard error of Gwet (2014) §5.2 as irrCAC's kappa2.table computes it.
 */
import type { RatingTable } from "./rating-table";
import {
  checkConfidenceLevel,
  DEGENERATE_EPSILON,
  undefinedInterval,
  withInterval,
  type ChanceCorrectedCoefficient,
  type IntervalOptions,
  type WeightScheme,
} from "./result";
import { agreementWeights, WEIGHTS_UNDEFINED } from "./weights";

export interface PairOptions {
  /**
   * The two raters to compare, first = rows of the confusion matrix. Defaults to the table's raters when there
   * are exactly two. Naming a rater the table does not have is a programmer error (throws).
   */
  raters?: readonly [string, string];
}

export interface ConfusionMatrix {
  /** raters[0] labels the rows, raters[1] the columns. */
  raters: [string, string];
  categories: readonly string[];
  /** counts[k][l]: items labelled categories[k] by raters[0] and categories[l] by raters[1]. */
  counts: number[][];
  /** Items rated by both raters (the sum of counts). */
  nItems: number;
}

interface Pair {
  raters: [string, string];
  /** Row-major q×q counts. */
  counts: Float64Array;
  nItems: number;
}

function selectPair(table: RatingTable, options: PairOptions): { pair: [number, number] } | { reason: string } {
  if (options.raters) {
    const [a, b] = options.raters.map((name) => {
      const index = table.raters.indexOf(name);
      if (index < 0) throw new RangeError(`rater "${name}" is not in the rating table`);
      return index;
    });
    if (a === b) throw new RangeError("the two raters of a pair must differ");
    return { pair: [a, b] };
  }
  if (table.raters.length !== 2) {
    return {
      reason: `Cohen's kappa and the confusion matrix need exactly two raters; the ratings have ${table.raters.length}`,
    };
  }
  return { pair: [0, 1] };
}

function pairCounts(table: RatingTable, [a, b]: [number, number]): Pair {
  const q = table.categories.length;
  const counts = new Float64Array(q * q);
  const { itemStart, ratingRater, ratingCategory } = table;
  let nItems = 0;
  for (let i = 0; i < table.items.length; i++) {
    let ka = -1;
    let kb = -1;
    for (let p = itemStart[i]; p < itemStart[i + 1]; p++) {
      if (ratingRater[p] === a) ka = ratingCategory[p];
      else if (ratingRater[p] === b) kb = ratingCategory[p];
    }
    if (ka >= 0 && kb >= 0) {
      counts[ka * q + kb]++;
      nItems++;
    }
  }
  return { raters: [table.raters[a], table.raters[b]], counts, nItems };
}

/**
 * The q×q table of the labels two raters gave to the items they both rated.
 *
 * @example confusionMatrix(table).value?.counts // [[20, 5], [10, 15]]
 */
export function confusionMatrix(
  table: RatingTable,
  options: PairOptions = {},
): { value: ConfusionMatrix | null; reason?: string } {
  const selected = selectPair(table, options);
  if ("reason" in selected) return { value: null, reason: selected.reason };
  const { raters, counts, nItems } = pairCounts(table, selected.pair);
  const q = table.categories.length;
  const rows = Array.from({ length: q }, (_, k) => Array.from(counts.subarray(k * q, (k + 1) * q)));
  return { value: { raters, categories: table.categories, counts: rows, nItems } };
}

function cohen(
  table: RatingTable,
  scheme: WeightScheme,
  options: PairOptions & IntervalOptions,
): ChanceCorrectedCoefficient & { raters: [string, string] | null } {
  const level = checkConfidenceLevel(options.confidenceLevel ?? 0.95);
  const selected = selectPair(table, options);
  const empty = { nItems: 0, nPairableItems: 0, nRaters: 0, weights: scheme };
  const none = { observedAgreement: null, chanceAgreement: null };
  if ("reason" in selected) return { ...undefinedInterval(selected.reason, level), ...empty, ...none, raters: null };
  const pair = pairCounts(table, selected.pair);
  const n = pair.nItems;
  const base = { nItems: n, nPairableItems: n, nRaters: 2, weights: scheme, raters: pair.raters };
  if (n === 0) {
    const reason = `raters "${pair.raters[0]}" and "${pair.raters[1]}" have no item in common`;
    return { ...undefinedInterval(reason, level), ...base, ...none };
  }
  const q = table.categories.length;
  const w = agreementWeights(table.scores, scheme);
  if (w === null) return { ...undefinedInterval(WEIGHTS_UNDEFINED, level), ...base, ...none };

  const p = pair.counts.map((c) => c / n);
  const rowMargin = new Float64Array(q);
  const columnMargin = new Float64Array(q);
  for (let k = 0; k < q; k++) {
    for (let l = 0; l < q; l++) {
      rowMargin[k] += p[k * q + l];
      columnMargin[l] += p[k * q + l];
    }
  }
  let pa = 0;
  let pe = 0;
  // weightedColumn[k] = Σ_l w_kl p_+l and weightedRow[l] = Σ_k w_kl p_k+ (irrCAC's pb.k and pbl.).
  const weightedColumn = new Float64Array(q);
  const weightedRow = new Float64Array(q);
  for (let k = 0; k < q; k++) {
    for (let l = 0; l < q; l++) {
      const wkl = w[k * q + l];
      if (wkl === 0) continue;
      pa += wkl * p[k * q + l];
      pe += wkl * rowMargin[k] * columnMargin[l];
      weightedColumn[k] += wkl * columnMargin[l];
      weightedRow[l] += wkl * rowMargin[k];
    }
  }
  if (1 - pe < DEGENERATE_EPSILON) {
    const reason = "both raters used a single category, the same one: chance agreement is 1 and kappa is 0/0";
    return { ...undefinedInterval(reason, level), ...base, ...none };
  }
  const value = (pa - pe) / (1 - pe);
  let sum = 0;
  for (let k = 0; k < q; k++) {
    for (let l = 0; l < q; l++) {
      const pkl = p[k * q + l];
      if (pkl === 0) continue;
      const d = w[k * q + l] - (1 - value) * (weightedColumn[k] + weightedRow[l]);
      sum += pkl * d * d;
    }
  }
  const centre = pa - 2 * (1 - value) * pe;
  const variance = (sum - centre * centre) / (n * (1 - pe) * (1 - pe));
  return {
    value,
    ...withInterval(value, variance, n, level),
    confidenceLevel: level,
    ...base,
    observedAgreement: pa,
    chanceAgreement: pe,
  };
}

/**
 * Cohen's kappa for two raters on the items both rated: (p_o - p_e) / (1 - p_e) with p_e = Σ_k p_k+ p_+k
 * (Cohen 1960, Educ. Psychol. Meas. 20:37-46). Standard error and interval as irrCAC kappa2.table
 * (Gwet 2014 §5.2). Items rated by only one of the two raters are left out (complete-case analysis).
 *
 * @example cohenKappa(table).value // 0.4 for Wikipedia's 50-proposal example (20, 5 / 10, 15)
 */
export function cohenKappa(
  table: RatingTable,
  options: PairOptions & IntervalOptions = {},
): ChanceCorrectedCoefficient & { raters: [string, string] | null } {
  return cohen(table, "identity", options);
}

/**
 * Cohen's weighted kappa (Cohen 1968, Psychol. Bull. 70:213-220) with irrCAC's linear or quadratic agreement
 * weights on the category scores: (Σ w_kl p_kl - Σ w_kl p_k+ p_+l) / (1 - Σ w_kl p_k+ p_+l), on the items both
 * raters rated; standard error as irrCAC kappa2.table with those weights.
 *
 * @example cohenWeightedKappa(table, "quadratic").value // 0.8921569 for irrCAC's cont3x3abstractors
 */
export function cohenWeightedKappa(
  table: RatingTable,
  weights: "linear" | "quadratic",
  options: PairOptions & IntervalOptions = {},
): ChanceCorrectedCoefficient & { raters: [string, string] | null } {
  return cohen(table, weights, options);
}
