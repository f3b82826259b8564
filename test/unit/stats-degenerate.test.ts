/**
 * Degenerate inputs: every coefficient returns a number or null with a reason, never NaN and never a throw for
 * the shape of the data (only programmer errors throw).
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
  summariseAgreement,
  type RatingRow,
  type RatingTable,
} from "../../app/stats/index";

const rows = (...triples: [string, string, string][]): RatingRow[] =>
  triples.map(([item, rater, label]) => ({ item, rater, label }));

function everything(table: RatingTable) {
  return {
    percent: percentAgreement(table),
    ac1: gwetAc1(table),
    ac2: gwetAc2(table, "quadratic"),
    fleiss: fleissKappa(table),
    cohen: cohenKappa(table),
    cohenWeighted: cohenWeightedKappa(table, "linear"),
    nominal: krippendorffAlpha(table, "nominal"),
    ordinal: krippendorffAlpha(table, "ordinal"),
    interval: krippendorffAlpha(table, "interval"),
  };
}

function expectNoNaN(value: unknown): void {
  if (typeof value === "number") expect(Number.isNaN(value)).toBe(false);
  else if (Array.isArray(value)) value.forEach(expectNoNaN);
  else if (value && typeof value === "object") Object.values(value).forEach(expectNoNaN);
}

function expectUndefinedWithReason(results: Record<string, { value: number | null; reason?: string }>) {
  for (const [name, result] of Object.entries(results)) {
    expect(result.value, name).toBeNull();
    expect(result.reason, name).toMatch(/\w/);
  }
}

describe("no ratings at all", () => {
  const table = buildRatingTable([]);
  it("every coefficient is undefined with a reason", () => {
    const all = everything(table);
    expectNoNaN(all);
    expectUndefinedWithReason(all);
    expect(all.percent.reason).toBe("there are no ratings");
  });
});

describe("one rater", () => {
  const table = buildRatingTable(rows(["n1", "A", "yes"], ["n2", "A", "no"]));
  it("every coefficient is undefined and says there is one rater", () => {
    const all = everything(table);
    expectNoNaN(all);
    expectUndefinedWithReason(all);
    expect(all.ac1.reason).toContain('only one rater ("A")');
    expect(all.cohen.reason).toContain("exactly two raters");
    expect(all.nominal.reason).toContain("two or more values");
  });
});

describe("no overlapping items", () => {
  const table = buildRatingTable(rows(["n1", "A", "yes"], ["n2", "B", "no"], ["n3", "A", "no"]));
  it("agreement coefficients are undefined; the confusion matrix is empty", () => {
    const all = everything(table);
    expectNoNaN(all);
    expectUndefinedWithReason(all);
    expect(all.ac1.reason).toBe("no item was rated by two or more raters");
    expect(all.cohen.reason).toBe('raters "A" and "B" have no item in common');
    expect(confusionMatrix(table).value).toEqual({
      raters: ["A", "B"],
      categories: ["no", "yes"],
      counts: [
        [0, 0],
        [0, 0],
      ],
      nItems: 0,
    });
  });
});

describe("a single category", () => {
  const data = rows(["n1", "A", "yes"], ["n1", "B", "yes"], ["n2", "A", "yes"], ["n2", "B", "yes"]);
  it("percent agreement is 1; chance-corrected coefficients are 0/0 and say so", () => {
    const all = everything(buildRatingTable(data));
    expectNoNaN(all);
    expect(all.percent.value).toBe(1);
    const { percent: _defined, ...rest } = all;
    expectUndefinedWithReason(rest);
    expect(all.ac1.reason).toContain("at least two categories");
    expect(all.fleiss.reason).toContain("chance agreement is 1");
    expect(all.cohen.reason).toContain("chance agreement is 1");
    expect(all.nominal.reason).toContain("no variation");
  });
  it("AC1 is 1 with standard error 0 once the category set names a second category (irrCAC categ.labels)", () => {
    const ac1 = gwetAc1(buildRatingTable(data, { categories: ["yes", "no"] }));
    expect(ac1.value).toBe(1);
    expect(ac1.chanceAgreement).toBe(0);
    expect(ac1.standardError).toBe(0);
    expect(ac1.confidenceInterval).toEqual([1, 1]);
    expect(fleissKappa(buildRatingTable(data, { categories: ["yes", "no"] })).value).toBeNull();
  });
});

describe("a single item", () => {
  const table = buildRatingTable(rows(["n1", "A", "1"], ["n1", "B", "2"], ["n1", "C", "2"]));
  it("gives coefficients without a standard error, and says why", () => {
    const ac1 = gwetAc1(table);
    expect(ac1.value).not.toBeNull();
    expect(ac1.standardError).toBeNull();
    expect(ac1.confidenceInterval).toBeNull();
    expect(ac1.standardErrorReason).toBe("the standard error needs at least two items");
    expectNoNaN(everything(table));
  });
});

describe("perfect agreement on two categories", () => {
  const table = buildRatingTable(
    rows(
      ["n1", "A", "yes"],
      ["n1", "B", "yes"],
      ["n2", "A", "no"],
      ["n2", "B", "no"],
      ["n3", "A", "no"],
      ["n3", "B", "no"],
    ),
  );
  it("kappa, AC1, Fleiss and alpha are 1 with zero standard error", () => {
    const all = everything(table);
    expectNoNaN(all);
    for (const result of [all.ac1, all.fleiss, all.cohen, all.nominal]) expect(result.value).toBeCloseTo(1, 14);
    expect(all.cohen.standardError).toBe(0);
    expect(all.ac1.standardError).toBeCloseTo(0, 14);
  });
});

describe("raters other than two for Cohen's kappa", () => {
  const table = buildRatingTable(
    rows(["n1", "A", "x"], ["n1", "B", "x"], ["n1", "C", "x"], ["n2", "A", "y"], ["n2", "B", "x"], ["n2", "C", "y"]),
  );
  it("is undefined with three raters unless a pair is chosen", () => {
    expect(cohenKappa(table).reason).toBe(
      "Cohen's kappa and the confusion matrix need exactly two raters; the ratings have 3",
    );
    expect(confusionMatrix(table).value).toBeNull();
    const pair = cohenKappa(table, { raters: ["A", "C"] });
    expect(pair.raters).toEqual(["A", "C"]);
    expect(pair.value).toBe(1);
  });
  it("throws for a rater that is not in the table (a programmer error)", () => {
    expect(() => cohenKappa(table, { raters: ["A", "Z"] })).toThrow(/rater "Z"/);
  });
});

describe("programmer errors throw", () => {
  it("an item/rater pair with two labels", () => {
    expect(() => buildRatingTable(rows(["n1", "A", "x"], ["n1", "A", "y"]))).toThrow(
      'buildRatingTable: item "n1" has two labels from rater "A" ("x" and "y")',
    );
  });
  it("a label outside the given categories, and a repeated category", () => {
    expect(() => buildRatingTable(rows(["n1", "A", "x"]), { categories: ["y"] })).toThrow(RangeError);
    expect(() => buildRatingTable(rows(["n1", "A", "x"]), { categories: ["x", "x"] })).toThrow(RangeError);
  });
  it("a confidence level outside (0, 1)", () => {
    const table = buildRatingTable(rows(["n1", "A", "x"], ["n1", "B", "x"]));
    expect(() => gwetAc1(table, { confidenceLevel: 95 })).toThrow(RangeError);
  });
});

describe("summariseAgreement on degenerate input", () => {
  it("reports null coefficients with one warning each", () => {
    const summary = summariseAgreement(buildRatingTable(rows(["n1", "A", "yes"], ["n1", "B", "yes"])));
    expect(summary.percent_agreement).toBe(1);
    expect(summary.cohen_kappa).toBeNull();
    expect(summary.gwet_ac1).toEqual({ value: null, se: null, ci95: null });
    expect(summary.fleiss_kappa).toBeNull();
    expect(summary.krippendorff_alpha).toBeNull();
    expect(summary.warnings).toEqual([
      expect.stringMatching(/^cohen_kappa: /),
      expect.stringMatching(/^gwet_ac1: /),
      expect.stringMatching(/^fleiss_kappa: /),
      expect.stringMatching(/^krippendorff_alpha: /),
    ]);
    expectNoNaN(summary);
  });
});
