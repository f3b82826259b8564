/**
 * Krippendorff's alpha for any number of raters with missing ratings: α = 1 - D_o / D_e, computed from the
 * values of the pairable units (units with at least two values), following Krippendorff (2011), "Computing
 * Krippendorff's Alpha-Reliability", with its nominal, ordinal and interval difference functions.
 */
import type { RatingTable } from "./rating-table";
import type { Estimate } from "./result";

export type MeasurementLevel = "nominal" | "ordinal" | "interval";

export interface KrippendorffAlpha extends Estimate {
  level: MeasurementLevel;
  /** D_o: mean metric difference between values of the same unit. */
  observedDisagreement: number | null;
  /** D_e: mean metric difference between any two pairable values. */
  expectedDisagreement: number | null;
  /** Units with at least two values. */
  nUnits: number;
  /** n.. : the number of values in those units. */
  nValues: number;
  nRaters: number;
}

/**
 * Krippendorff's alpha at the nominal, ordinal or interval level.
 *
 * The ordinal difference δ²_ck = (Σ_{g=c..k} n_g - (n_c + n_k)/2)² equals (m_k - m_c)² with the mid-rank
 * m_c = Σ_{g<c} n_g + n_c/2, and the interval difference is (x_c - x_k)² on the category scores, so both are
 * squared differences of per-category values. The sum over pairs of a unit's values is then
 * 2 (m Σx² - (Σx)²), which keeps the computation linear in the number of ratings instead of building the q×q
 * coincidence matrix. Categories are ordered as in the table; interval uses the table's scores.
 *
 * @example krippendorffAlpha(table, "ordinal").value // 0.815 for Krippendorff's (2011) 4-coder example
 */
export function krippendorffAlpha(table: RatingTable, level: MeasurementLevel): KrippendorffAlpha {
  const { itemStart, ratingCategory } = table;
  const q = table.categories.length;
  const marginal = new Float64Array(q); // n_c over pairable units
  const pairableRaters = new Uint8Array(table.raters.length);
  let nUnits = 0;
  let nValues = 0;
  for (let i = 0; i < table.items.length; i++) {
    const m = itemStart[i + 1] - itemStart[i];
    if (m < 2) continue;
    nUnits++;
    nValues += m;
    for (let p = itemStart[i]; p < itemStart[i + 1]; p++) {
      marginal[ratingCategory[p]]++;
      pairableRaters[table.ratingRater[p]] = 1;
    }
  }
  const nRaters = pairableRaters.reduce((s, v) => s + v, 0);
  const base = { level, nUnits, nValues, nRaters };
  if (nUnits === 0) {
    return {
      value: null,
      reason: "Krippendorff's alpha needs at least one unit with two or more values",
      observedDisagreement: null,
      expectedDisagreement: null,
      ...base,
    };
  }

  let observed: number;
  let expected: number;
  if (level === "nominal") {
    const counts = new Int32Array(q);
    let within = 0;
    for (let i = 0; i < table.items.length; i++) {
      const from = itemStart[i];
      const to = itemStart[i + 1];
      const m = to - from;
      if (m < 2) continue;
      let same = 0;
      for (let p = from; p < to; p++) same += 2 * counts[ratingCategory[p]]++ + 1; // builds Σ_c n_uc²
      within += (m * m - same) / (m - 1);
      for (let p = from; p < to; p++) counts[ratingCategory[p]] = 0;
    }
    let squares = 0;
    for (let k = 0; k < q; k++) squares += marginal[k] * marginal[k];
    observed = within / nValues;
    expected = (nValues * nValues - squares) / (nValues * (nValues - 1));
  } else {
    const values = new Float64Array(q);
    if (level === "ordinal") {
      // Mid-ranks scaled by 1/n.. so that squares stay small; alpha is invariant to the scale.
      let below = 0;
      for (let k = 0; k < q; k++) {
        values[k] = (below + marginal[k] / 2) / nValues;
        below += marginal[k];
      }
    } else {
      values.set(table.scores);
    }
    // Centre on the pairable mean: the moment formulas then lose no precision to cancellation.
    let mean = 0;
    for (let k = 0; k < q; k++) mean += marginal[k] * values[k];
    mean /= nValues;
    for (let k = 0; k < q; k++) values[k] -= mean;
    let within = 0;
    for (let i = 0; i < table.items.length; i++) {
      const from = itemStart[i];
      const to = itemStart[i + 1];
      const m = to - from;
      if (m < 2) continue;
      let sum = 0;
      let squares = 0;
      for (let p = from; p < to; p++) {
        const x = values[ratingCategory[p]];
        sum += x;
        squares += x * x;
      }
      within += (2 * (m * squares - sum * sum)) / (m - 1);
    }
    let squares = 0;
    for (let k = 0; k < q; k++) squares += marginal[k] * values[k] * values[k];
    observed = within / nValues;
    // Σ_c Σ_k n_c n_k (x_c - x_k)² = 2 (n.. Σ n_c x_c² - (Σ n_c x_c)²), and Σ n_c x_c = 0 after centring.
    expected = (2 * nValues * squares) / (nValues * (nValues - 1));
  }

  if (!(expected > 1e-15 * Math.max(1, observed))) {
    return {
      value: null,
      reason: "all pairable values are identical (no variation): alpha is 0/0",
      observedDisagreement: observed,
      expectedDisagreement: expected,
      ...base,
    };
  }
  return {
    value: 1 - observed / expected,
    observedDisagreement: observed,
    expectedDisagreement: expected,
    ...base,
  };
}
