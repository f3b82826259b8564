/**
 * Agreement coefficients against an independent Python implementation, to 1e-9.
 *
 * The expected numbers in test/fixtures/stats/reference.json were produced by
 *   python3 test/fixtures/stats/reference.py > test/fixtures/stats/reference.json
 * (numpy + scipy; written from Gwet 2014 / irrCAC's published formulas and Krippendorff 2011's coincidence
 * matrices, not from this code). They cover the published data sets with more digits than were published, and
 * seeded random data with missing ratings, numeric and string labels and weights, for which nothing is published.
 */
import { describe, expect, it } from "vitest";
import {
  buildRatingTable,
  cohenKappa,
  cohenWeightedKappa,
  confusionMatrix,
  fleissKappa,
  gwetAc1,
  gwetAc2,
  krippendorffAlpha,
  percentAgreement,
  type IntervalEstimate,
} from "../../app/stats/index";
import reference from "../fixtures/stats/reference.json";

interface Interval {
  value: number;
  se: number;
  ci95: [number, number] | null;
}
interface Dataset {
  rows: [string, string, string][];
  categories: string[];
  n_items: number;
  percent_agreement: Interval;
  gwet_ac1: Interval & { pa: number; pe: number };
  gwet_ac2_linear: Interval;
  gwet_ac2_quadratic: Interval;
  fleiss_kappa: Interval & { pa: number; pe: number };
  krippendorff_alpha: Record<"nominal" | "ordinal" | "interval", number>;
  cohen_kappa?: Interval & { n_items: number; table: number[][] };
  cohen_kappa_linear?: Interval;
  cohen_kappa_quadratic?: Interval;
}

const TOLERANCE = 1e-9;

function expectInterval(actual: IntervalEstimate, expected: Interval) {
  expect(actual.value).toBeCloseTo(expected.value, 9);
  expect(Math.abs((actual.standardError as number) - expected.se)).toBeLessThan(TOLERANCE);
  expect(actual.confidenceInterval).not.toBeNull();
  expect(expected.ci95).not.toBeNull();
  expect(Math.abs(actual.confidenceInterval![0] - expected.ci95![0])).toBeLessThan(TOLERANCE);
  expect(Math.abs(actual.confidenceInterval![1] - expected.ci95![1])).toBeLessThan(TOLERANCE);
}

const datasets = (reference as unknown as { datasets: Record<string, Dataset> }).datasets;

describe.each(Object.entries(datasets))("%s", (_name, data) => {
  const rows = data.rows.map(([item, rater, label]) => ({ item, rater, label }));
  const table = buildRatingTable(rows, { categories: data.categories });

  it("percent agreement with irrCAC's standard error", () => {
    expectInterval(percentAgreement(table), data.percent_agreement);
    expect(percentAgreement(table).nItems).toBe(data.n_items);
  });
  it("Gwet's AC1 with observed and chance agreement, se and CI", () => {
    const ac1 = gwetAc1(table);
    expectInterval(ac1, data.gwet_ac1);
    expect(ac1.observedAgreement).toBeCloseTo(data.gwet_ac1.pa, 12);
    expect(ac1.chanceAgreement).toBeCloseTo(data.gwet_ac1.pe, 12);
  });
  it("Gwet's AC2, linear and quadratic weights", () => {
    expectInterval(gwetAc2(table, "linear"), data.gwet_ac2_linear);
    expectInterval(gwetAc2(table, "quadratic"), data.gwet_ac2_quadratic);
  });
  it("Fleiss' kappa with se and CI", () => {
    const kappa = fleissKappa(table);
    expectInterval(kappa, data.fleiss_kappa);
    expect(kappa.chanceAgreement).toBeCloseTo(data.fleiss_kappa.pe, 12);
  });
  it("Krippendorff's alpha, nominal, ordinal and interval", () => {
    for (const level of ["nominal", "ordinal", "interval"] as const) {
      expect(krippendorffAlpha(table, level).value).toBeCloseTo(data.krippendorff_alpha[level], 9);
    }
  });
  if (data.cohen_kappa) {
    const cohen = data.cohen_kappa;
    it("Cohen's kappa, weighted kappa and the confusion matrix", () => {
      expectInterval(cohenKappa(table), cohen);
      expect(cohenKappa(table).nItems).toBe(cohen.n_items);
      expectInterval(cohenWeightedKappa(table, "linear"), data.cohen_kappa_linear!);
      expectInterval(cohenWeightedKappa(table, "quadratic"), data.cohen_kappa_quadratic!);
      expect(confusionMatrix(table).value?.counts).toEqual(cohen.table);
    });
  }
});
