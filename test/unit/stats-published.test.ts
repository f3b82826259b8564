/**
 * Every coefficient against published worked examples. Each expected number is quoted with its source and checked
 * to the number of decimals it was published with (|computed - published| <= half a unit in the last place).
 *
 * Sources:
 * [K2011]  Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability (Annenberg School, U. Pennsylvania),
 *          worked example "C. Any number of observers, missing values".
 * [F1971]  Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psychol. Bull. 76, 378-382.
 * [irrCAC] Gwet, K. L., R package irrCAC: README.md output (kgwet/irrCAC) and vignette "Weighted
 *          Chance-corrected Agreement Coefficients" (inst/doc/weighting.html) output.
 * [irrPy]  The Python port of irrCAC (afergadis/irrCAC), raw and table test suites, whose
 *          expected values reproduce the R package (3 decimals).
 * [WikiF]  Wikipedia, "Fleiss' kappa", worked example (10 subjects × 14 raters).
 * [WikiC]  Wikipedia, "Cohen's kappa", example (50 proposals, two readers).
 */
import { describe, expect, it } from "vitest";
import {
  buildRatingTable,
  cohenKappa,
  cohenWeightedKappa,
  fleissKappa,
  gwetAc1,
  gwetAc2,
  krippendorffAlpha,
  percentAgreement,
} from "../../app/stats/index";
import {
  ABSTRACTOR_CATEGORIES,
  benGerry,
  cont3x3abstractors,
  cont4x4diagnosis,
  DIAGNOSIS_CATEGORIES,
  fleiss1971,
  gender,
  raw4raters,
  raw5observers,
  wikipediaCohen,
  wikipediaFleiss,
} from "../fixtures/stats/datasets";

/** |actual - published| within half a unit of the published last decimal. */
function expectPublished(actual: number | null | undefined, published: number, decimals: number) {
  expect(actual).not.toBeNull();
  expect(actual).toBeDefined();
  expect(Math.abs((actual as number) - published)).toBeLessThanOrEqual(0.5 * 10 ** -decimals + 1e-12);
}

function expectInterval(actual: [number, number] | null, published: [number, number], decimals: number) {
  expect(actual).not.toBeNull();
  expectPublished(actual![0], published[0], decimals);
  expectPublished(actual![1], published[1], decimals);
}

describe("Krippendorff (2011) worked example: 4 observers × 12 units with missing values", () => {
  const table = buildRatingTable(raw4raters);
  it("nominal alpha = 0.743 [K2011]; irrCAC krippen.alpha.raw gives 0.74342 [irrCAC README]", () => {
    expectPublished(krippendorffAlpha(table, "nominal").value, 0.743, 3);
    expectPublished(krippendorffAlpha(table, "nominal").value, 0.74342, 5);
  });
  it("ordinal alpha = 0.815 [K2011]", () => expectPublished(krippendorffAlpha(table, "ordinal").value, 0.815, 3));
  it("interval alpha = 0.849 [K2011]; irrCAC quadratic-weighted alpha 0.84911 [irrCAC weighting vignette]", () => {
    expectPublished(krippendorffAlpha(table, "interval").value, 0.849, 3);
    expectPublished(krippendorffAlpha(table, "interval").value, 0.84911, 5);
  });
  it("uses the 11 pairable units and their 40 values", () => {
    const alpha = krippendorffAlpha(table, "nominal");
    expect(alpha.nUnits).toBe(11);
    expect(alpha.nValues).toBe(40);
  });
});

describe("irrCAC cac.raw4raters (Gwet 2014 p. 120), unweighted [irrCAC README]", () => {
  const table = buildRatingTable(raw4raters);
  it("percent agreement 0.8181818, se 0.12561, CI (0.542, 1) (pa.coeff.raw)", () => {
    const pa = percentAgreement(table);
    expectPublished(pa.value, 0.8181818, 7);
    expectPublished(pa.standardError, 0.12561, 5);
    expectInterval(pa.confidenceInterval, [0.542, 1], 3);
  });
  it("Gwet's AC1 0.77544, pa 0.8181818, pe 0.1903212, se 0.14295, CI (0.461, 1) (gwet.ac1.raw)", () => {
    const ac1 = gwetAc1(table);
    expectPublished(ac1.value, 0.77544, 5);
    expectPublished(ac1.observedAgreement, 0.8181818, 7);
    expectPublished(ac1.chanceAgreement, 0.1903212, 7);
    expectPublished(ac1.standardError, 0.14295, 5);
    expectInterval(ac1.confidenceInterval, [0.461, 1], 3);
    expect(ac1.nItems).toBe(12);
    expect(ac1.nPairableItems).toBe(11);
    expect(ac1.nRaters).toBe(4);
  });
  it("Fleiss' kappa 0.76117, pe 0.2387153, se 0.15302, CI (0.424, 1) (fleiss.kappa.raw)", () => {
    const kappa = fleissKappa(table);
    expectPublished(kappa.value, 0.76117, 5);
    expectPublished(kappa.chanceAgreement, 0.2387153, 7);
    expectPublished(kappa.standardError, 0.15302, 5);
    expectInterval(kappa.confidenceInterval, [0.424, 1], 3);
  });
});

describe("irrCAC cac.raw4raters, weighted Gwet's AC2", () => {
  const table = buildRatingTable(raw4raters);
  it("quadratic: pa 0.9753788, pe 0.7137044, AC2 0.914, se 0.10396, CI (0.685, 1) [irrCAC weighting vignette]", () => {
    const ac2 = gwetAc2(table, "quadratic");
    expectPublished(ac2.observedAgreement, 0.9753788, 7);
    expectPublished(ac2.chanceAgreement, 0.7137044, 7);
    expectPublished(ac2.value, 0.914, 3);
    expectPublished(ac2.standardError, 0.10396, 5);
    expectInterval(ac2.confidenceInterval, [0.685, 1], 3);
  });
  it("linear: pa 0.939, pe 0.571, AC2 0.859, se 0.117, CI (0.600, 1) [irrPy raw/test_gwet.py]", () => {
    const ac2 = gwetAc2(table, "linear");
    expectPublished(ac2.observedAgreement, 0.939, 3);
    expectPublished(ac2.chanceAgreement, 0.571, 3);
    expectPublished(ac2.value, 0.859, 3);
    expectPublished(ac2.standardError, 0.117, 3);
    expectInterval(ac2.confidenceInterval, [0.6, 1], 3);
  });
});

describe("irrCAC raw data sets with missing ratings [irrPy raw/test_gwet.py, test_fleiss.py, test_krippendorff.py]", () => {
  it("cac.raw5obser: AC1 0.497 se 0.122 CI (0.235, 0.758); Fleiss 0.458 se 0.120 CI (0.199, 0.716); alpha 0.481", () => {
    const table = buildRatingTable(raw5observers);
    const ac1 = gwetAc1(table);
    expectPublished(ac1.value, 0.497, 3);
    expectPublished(ac1.standardError, 0.122, 3);
    expectInterval(ac1.confidenceInterval, [0.235, 0.758], 3);
    expectPublished(percentAgreement(table).value, 0.616, 3);
    const kappa = fleissKappa(table);
    expectPublished(kappa.value, 0.458, 3);
    expectPublished(kappa.standardError, 0.12, 3);
    expectInterval(kappa.confidenceInterval, [0.199, 0.716], 3);
    expectPublished(krippendorffAlpha(table, "nominal").value, 0.481, 3);
  });
  it("cac.ben.gerry (two raters, one missing): AC1 0.661 se 0.184 CI (0.257, 1); Fleiss 0.649 se 0.191; alpha 0.665", () => {
    const table = buildRatingTable(benGerry);
    const ac1 = gwetAc1(table);
    expectPublished(ac1.value, 0.661, 3);
    expectPublished(ac1.observedAgreement, 0.727, 3);
    expectPublished(ac1.chanceAgreement, 0.194, 3);
    expectPublished(ac1.standardError, 0.184, 3);
    expectInterval(ac1.confidenceInterval, [0.257, 1], 3);
    // n is every item with a rating (12), not only the 11 rated by both: irrCAC's t has 11 df.
    expect(ac1.nItems).toBe(12);
    expect(ac1.nPairableItems).toBe(11);
    const kappa = fleissKappa(table);
    expectPublished(kappa.value, 0.649, 3);
    expectPublished(kappa.standardError, 0.191, 3);
    expectInterval(kappa.confidenceInterval, [0.228, 1], 3);
    expectPublished(krippendorffAlpha(table, "nominal").value, 0.665, 3);
  });
  it("cac.raw.gender (complete): AC1 0.208 se 0.091 CI (0.014, 0.403); Fleiss 0.129 se 0.141 CI (-0.172, 0.430); alpha 0.143", () => {
    const table = buildRatingTable(gender);
    const ac1 = gwetAc1(table);
    expectPublished(ac1.value, 0.208, 3);
    expectPublished(ac1.standardError, 0.091, 3);
    expectInterval(ac1.confidenceInterval, [0.014, 0.403], 3);
    const kappa = fleissKappa(table);
    expectPublished(kappa.value, 0.129, 3);
    expectPublished(kappa.standardError, 0.141, 3);
    expectInterval(kappa.confidenceInterval, [-0.172, 0.43], 3);
    expectPublished(krippendorffAlpha(table, "nominal").value, 0.143, 3);
  });
});

describe("Fleiss' kappa, published examples", () => {
  it("Fleiss (1971) Table 1: kappa = 0.430 [F1971]", () => {
    expectPublished(fleissKappa(buildRatingTable(fleiss1971)).value, 0.43, 3);
  });
  it("Wikipedia example: P = 0.378, Pe = 0.213, kappa = 0.210 [WikiF]", () => {
    const kappa = fleissKappa(buildRatingTable(wikipediaFleiss));
    expectPublished(kappa.observedAgreement, 0.378, 3);
    expectPublished(kappa.chanceAgreement, 0.213, 3);
    expectPublished(kappa.value, 0.21, 3);
  });
});

describe("two raters: irrCAC cont3x3abstractors (Gwet 2014)", () => {
  const table = buildRatingTable(cont3x3abstractors, { categories: ABSTRACTOR_CATEGORIES });
  it("Cohen's kappa 0.7964094, se 0.05891072, CI (0.68, 0.913) (kappa2.table) [irrCAC README]", () => {
    const kappa = cohenKappa(table);
    expectPublished(kappa.value, 0.7964094, 7);
    expectPublished(kappa.standardError, 0.05891072, 8);
    expectInterval(kappa.confidenceInterval, [0.68, 0.913], 3);
    expect(kappa.nItems).toBe(100);
  });
  it("percent agreement 0.89 (pa2.table) [irrCAC README]", () => {
    expectPublished(percentAgreement(table).value, 0.89, 2);
  });
  it("AC1 0.8493305 as gwet.ac1.table [irrCAC README]; the raw-data se is the table se 0.04321747 × √(n/(n-1))", () => {
    const ac1 = gwetAc1(table);
    expectPublished(ac1.value, 0.8493305, 7);
    expectPublished(ac1.standardError, 0.04321747 * Math.sqrt(100 / 99), 8);
  });
  it("quadratic weighted kappa 0.8921569, se 0.03535151, CI (0.822, 0.962) [irrCAC weighting vignette]", () => {
    const kappa = cohenWeightedKappa(table, "quadratic");
    expectPublished(kappa.value, 0.8921569, 7);
    expectPublished(kappa.standardError, 0.03535151, 8);
    expectInterval(kappa.confidenceInterval, [0.822, 0.962], 3);
  });
  it("quadratic AC2 0.9402369 as gwet.ac1.table [irrCAC weighting vignette]; se = 0.01792019 × √(n/(n-1))", () => {
    const ac2 = gwetAc2(table, "quadratic");
    expectPublished(ac2.value, 0.9402369, 7);
    expectPublished(ac2.standardError, 0.01792019 * Math.sqrt(100 / 99), 8);
  });
  it("linear weighted kappa 0.843 CI (0.748, 0.938); linear AC2 0.900 [irrPy table/test_cohen.py, test_gwet.py]", () => {
    const kappa = cohenWeightedKappa(table, "linear");
    expectPublished(kappa.value, 0.843, 3);
    expectInterval(kappa.confidenceInterval, [0.748, 0.938], 3);
    expectPublished(gwetAc2(table, "linear").value, 0.9, 3);
  });
});

describe("two raters: irrCAC cont4x4diagnosis [irrPy table/test_cohen.py, test_gwet.py]", () => {
  const table = buildRatingTable(cont4x4diagnosis, { categories: DIAGNOSIS_CATEGORIES });
  it("Cohen's kappa 0.432, se 0.046, CI (0.341, 0.522)", () => {
    const kappa = cohenKappa(table);
    expectPublished(kappa.value, 0.432, 3);
    expectPublished(kappa.standardError, 0.046, 3);
    expectInterval(kappa.confidenceInterval, [0.341, 0.522], 3);
  });
  it("weighted kappa: linear 0.407 se 0.053 CI (0.302, 0.512); quadratic 0.383 se 0.066 CI (0.254, 0.513)", () => {
    const linear = cohenWeightedKappa(table, "linear");
    expectPublished(linear.value, 0.407, 3);
    expectPublished(linear.standardError, 0.053, 3);
    expectInterval(linear.confidenceInterval, [0.302, 0.512], 3);
    const quadratic = cohenWeightedKappa(table, "quadratic");
    expectPublished(quadratic.value, 0.383, 3);
    expectPublished(quadratic.standardError, 0.066, 3);
    expectInterval(quadratic.confidenceInterval, [0.254, 0.513], 3);
  });
  // These standard errors are gwet.ac1.table's; gwetAc1 follows gwet.ac1.raw, larger by √(n/(n-1)), n = 223.
  const tableSe = (se: number | null) => (se as number) / Math.sqrt(223 / 222);
  it("AC1 0.456 se 0.043; AC2 linear 0.377 se 0.056; AC2 quadratic 0.299 se 0.075", () => {
    expectPublished(gwetAc1(table).value, 0.456, 3);
    expectPublished(tableSe(gwetAc1(table).standardError), 0.043, 3);
    expectPublished(gwetAc2(table, "linear").value, 0.377, 3);
    expectPublished(tableSe(gwetAc2(table, "linear").standardError), 0.056, 3);
    expectPublished(gwetAc2(table, "quadratic").value, 0.299, 3);
    expectPublished(tableSe(gwetAc2(table, "quadratic").standardError), 0.075, 3);
  });
});

describe("Cohen's kappa, Wikipedia example [WikiC]", () => {
  it("p_o = 0.7, p_e = 0.5, kappa = 0.4", () => {
    const kappa = cohenKappa(buildRatingTable(wikipediaCohen, { categories: ["yes", "no"] }));
    expectPublished(kappa.observedAgreement, 0.7, 10);
    expectPublished(kappa.chanceAgreement, 0.5, 10);
    expectPublished(kappa.value, 0.4, 10);
  });
});
