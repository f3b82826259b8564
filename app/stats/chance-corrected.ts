/**
 * Percent agreement, Gwet's AC1/AC2 and Fleiss' kappa for any number of raters with missing ratings, in the
 * generalised form of Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., ch. 2-5, exactly as the R package
 * irrCAC computes them from raw ratings (pa.coeff.raw, gwet.ac1.raw, fleiss.kappa.raw):
 *
 * - r_i ratings of item i, r_ik of them in category k, r*_ik = Σ_l w_kl r_il;
 * - observed agreement p_a = mean over the n' items with r_i >= 2 of Σ_k r_ik (r*_ik - 1) / (r_i (r_i - 1));
 * - prevalence π_k = mean over all n items of r_ik / r_i;
 * - variance = Σ_i (v_i - coefficient)² / (n (n - 1)) with the linearised per-item terms v_i of Gwet (2014) §5.3
 *   (irrCAC's `ac1.ivec.x`, `kappa.ivec.x`), and a Student-t interval on n - 1 degrees of freedom.
 *
 * n counts every item with at least one rating; items rated once add no agreement but do count in π and in n.
 * One deliberate exception (docs/statistics.md, "Deliberate differences from irrCAC"): with a single observed
 * category irrCAC sets AC1's chance agreement to 1e-15 and reports 1; here the coefficient is undefined (null).
 */
import type { RatingTable } from "./rating-table";
import {
  checkConfidenceLevel,
  DEGENERATE_EPSILON,
  undefinedInterval,
  withInterval,
  type ChanceCorrectedCoefficient,
  type IntervalEstimate,
  type IntervalOptions,
  type Sample,
  type WeightScheme,
} from "./result";
import { agreementWeights, WEIGHTS_UNDEFINED } from "./weights";

export type PercentAgreement = IntervalEstimate & Sample;

/** Per-item observed agreement and category prevalence: the first pass shared by every coefficient here. */
interface AgreementPass {
  sample: Sample;
  /** Σ_k r_ik (r*_ik - 1) / (r_i (r_i - 1)) for items with r_i >= 2, else 0. */
  itemAgreement: Float64Array;
  observedAgreement: number;
  prevalence: Float64Array;
}

function agreementPass(table: RatingTable, weights: Float64Array | null): AgreementPass {
  const { itemStart, ratingCategory } = table;
  const n = table.items.length;
  const q = table.categories.length;
  const itemAgreement = new Float64Array(n);
  const prevalence = new Float64Array(q);
  const counts = new Int32Array(q);
  const present = new Int32Array(Math.max(1, table.maxRatingsPerItem));
  let pairable = 0;
  let agreementSum = 0;

  for (let i = 0; i < n; i++) {
    const from = itemStart[i];
    const to = itemStart[i + 1];
    const r = to - from;
    let distinct = 0;
    for (let p = from; p < to; p++) {
      const k = ratingCategory[p];
      if (counts[k]++ === 0) present[distinct++] = k;
      prevalence[k] += 1 / r;
    }
    if (r >= 2) {
      let sum = 0;
      for (let a = 0; a < distinct; a++) {
        const k = present[a];
        const rk = counts[k];
        if (weights === null) {
          sum += rk * (rk - 1);
        } else {
          let weighted = 0;
          for (let b = 0; b < distinct; b++) weighted += weights[k * q + present[b]] * counts[present[b]];
          sum += rk * (weighted - 1);
        }
      }
      itemAgreement[i] = sum / (r * (r - 1));
      agreementSum += itemAgreement[i];
      pairable++;
    }
    for (let a = 0; a < distinct; a++) counts[present[a]] = 0;
  }
  for (let k = 0; k < q; k++) prevalence[k] /= n;

  return {
    sample: { nItems: n, nPairableItems: pairable, nRaters: table.raters.length },
    itemAgreement,
    observedAgreement: pairable > 0 ? agreementSum / pairable : NaN,
    prevalence,
  };
}

/**
 * Gwet's linearised variance of a coefficient (p_a - p_e)/(1 - p_e) whose chance agreement has per-item
 * contributions p_e,i = Σ_k r_ik g_k / r_i (Gwet 2014 §5.3; irrCAC gwet.ac1.raw / fleiss.kappa.raw).
 */
function linearisedVariance(
  table: RatingTable,
  pass: AgreementPass,
  coefficient: number,
  chance: number,
  chanceWeights: Float64Array,
): number {
  const { itemStart, ratingCategory } = table;
  const { nItems: n, nPairableItems: pairable } = pass.sample;
  const scale = n / pairable;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const from = itemStart[i];
    const to = itemStart[i + 1];
    const r = to - from;
    let itemChance = 0;
    for (let p = from; p < to; p++) itemChance += chanceWeights[ratingCategory[p]];
    itemChance /= r;
    const agreementTerm = (scale * (pass.itemAgreement[i] - (r >= 2 ? chance : 0))) / (1 - chance);
    const v = agreementTerm - (2 * (1 - coefficient) * (itemChance - chance)) / (1 - chance);
    sum += (v - coefficient) * (v - coefficient);
  }
  return sum / (n * (n - 1));
}

function noPairReason(table: RatingTable): string | null {
  if (table.items.length === 0) return "there are no ratings";
  if (table.raters.length < 2) return `only one rater ("${table.raters[0]}") rated the items`;
  return null;
}

/**
 * Percent agreement: the mean, over items rated by at least two raters, of the proportion of agreeing rater
 * pairs within the item (Gwet 2014 §2.3; irrCAC pa.coeff.raw, whose standard error and interval are also
 * reproduced). With two raters and no missing ratings this is the share of items with identical labels.
 *
 * @example percentAgreement(buildRatingTable(rows)).value // 0.8181818 for irrCAC's cac.raw4raters
 */
export function percentAgreement(table: RatingTable, options: IntervalOptions = {}): PercentAgreement {
  const level = checkConfidenceLevel(options.confidenceLevel ?? 0.95);
  const pass = agreementPass(table, null);
  const reason =
    noPairReason(table) ?? (pass.sample.nPairableItems === 0 ? "no item was rated by two or more raters" : null);
  if (reason !== null) return { ...undefinedInterval(reason, level), ...pass.sample };
  const { nItems: n, nPairableItems: pairable } = pass.sample;
  const pa = pass.observedAgreement;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const v = (n / pairable) * pass.itemAgreement[i];
    sum += (v - pa) * (v - pa);
  }
  const variance = n >= 2 ? sum / (n * (n - 1)) : null;
  return { value: pa, ...withInterval(pa, variance, n, level), confidenceLevel: level, ...pass.sample };
}

function gwet(table: RatingTable, scheme: WeightScheme, options: IntervalOptions): ChanceCorrectedCoefficient {
  const level = checkConfidenceLevel(options.confidenceLevel ?? 0.95);
  const q = table.categories.length;
  const weights = scheme === "identity" ? null : agreementWeights(table.scores, scheme);
  const pass = agreementPass(table, weights);
  const base = { ...pass.sample, weights: scheme, observedAgreement: null, chanceAgreement: null };
  const name = scheme === "identity" ? "AC1" : "AC2";
  const reason =
    noPairReason(table) ??
    (pass.sample.nPairableItems === 0 ? "no item was rated by two or more raters" : null) ??
    (q < 2
      ? `all ratings are "${table.categories[0]}": ${name}'s chance agreement needs at least two categories ` +
        "(list the possible categories to include unused ones)"
      : null) ??
    (scheme !== "identity" && weights === null ? WEIGHTS_UNDEFINED : null);
  if (reason !== null) return { ...undefinedInterval(reason, level), ...base };

  // p_e = (T_w / (q (q - 1))) Σ_k π_k (1 - π_k), T_w the sum of all weights (Gwet 2014 eq. 4.2.2 / 3.5.3).
  let weightTotal = q;
  if (weights !== null) weightTotal = weights.reduce((s, w) => s + w, 0);
  const factor = weightTotal / (q * (q - 1));
  let spread = 0;
  const chanceWeights = new Float64Array(q);
  for (let k = 0; k < q; k++) {
    const pi = pass.prevalence[k];
    spread += pi * (1 - pi);
    chanceWeights[k] = factor * (1 - pi);
  }
  const pa = pass.observedAgreement;
  const pe = factor * spread;
  if (1 - pe < DEGENERATE_EPSILON) {
    return { ...undefinedInterval(`${name} is undefined: chance agreement is 1`, level), ...base };
  }
  const value = (pa - pe) / (1 - pe);
  const n = pass.sample.nItems;
  const variance = n >= 2 ? linearisedVariance(table, pass, value, pe, chanceWeights) : null;
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
 * Gwet's AC1 for two or more raters with missing ratings: (p_a - p_e) / (1 - p_e) with chance agreement
 * p_e = Σ_k π_k (1 - π_k) / (q - 1) (Gwet 2008, BJMSP 61:29-48; Gwet 2014 ch. 4), its standard error and
 * Student-t confidence interval as irrCAC's gwet.ac1.raw computes them, for any number of raters. With two raters
 * and no missing ratings the coefficient equals gwet.ac1.table's and the standard error is gwet.ac1.table's
 * times √(n / (n - 1)) (the raw-data form divides by n - 1 where the table form divides by n).
 * q is the number of categories of the table (observed labels unless the categories were given).
 *
 * @example gwetAc1(buildRatingTable(rows)) // value 0.77544, standardError 0.14295 for cac.raw4raters
 */
export function gwetAc1(table: RatingTable, options: IntervalOptions = {}): ChanceCorrectedCoefficient {
  return gwet(table, "identity", options);
}

/**
 * Gwet's AC2: AC1 with linear or quadratic agreement weights on the category scores, for ordinal and interval
 * labels (Gwet 2014 ch. 3; irrCAC gwet.ac1.raw with `weights = "linear" | "quadratic"`), with standard error and
 * confidence interval.
 *
 * @example gwetAc2(table, "quadratic") // value 0.914, standardError 0.10396 for cac.raw4raters
 */
export function gwetAc2(
  table: RatingTable,
  weights: "linear" | "quadratic",
  options: IntervalOptions = {},
): ChanceCorrectedCoefficient {
  return gwet(table, weights, options);
}

/**
 * Fleiss' kappa, generalised to missing ratings: (p_a - p_e) / (1 - p_e) with p_e = Σ_k π_k² (Fleiss 1971,
 * Psychol. Bull. 76:378-382; the missing-data form and variance of Gwet 2014 ch. 2 and §5.3, as irrCAC's
 * fleiss.kappa.raw). With every item rated by the same number of raters it is Fleiss' original kappa.
 *
 * @example fleissKappa(table).value // 0.430 for Fleiss (1971) Table 1
 */
export function fleissKappa(table: RatingTable, options: IntervalOptions = {}): ChanceCorrectedCoefficient {
  const level = checkConfidenceLevel(options.confidenceLevel ?? 0.95);
  const pass = agreementPass(table, null);
  const base = { ...pass.sample, weights: "identity" as const, observedAgreement: null, chanceAgreement: null };
  const reason =
    noPairReason(table) ?? (pass.sample.nPairableItems === 0 ? "no item was rated by two or more raters" : null);
  if (reason !== null) return { ...undefinedInterval(reason, level), ...base };
  const pa = pass.observedAgreement;
  let pe = 0;
  for (const pi of pass.prevalence) pe += pi * pi;
  if (1 - pe < DEGENERATE_EPSILON) {
    const only = table.categories.length === 1 ? `"${table.categories[0]}"` : "one category";
    return {
      ...undefinedInterval(`all ratings are ${only}: Fleiss' kappa is 0/0 when chance agreement is 1`, level),
      ...base,
    };
  }
  const value = (pa - pe) / (1 - pe);
  const n = pass.sample.nItems;
  const variance = n >= 2 ? linearisedVariance(table, pass, value, pe, pass.prevalence) : null;
  return {
    value,
    ...withInterval(value, variance, n, level),
    confidenceLevel: level,
    ...base,
    observedAgreement: pa,
    chanceAgreement: pe,
  };
}
