import { describe, expect, it } from "vitest";
import { agreementWeights, buildRatingTable, ratingCount, sortLabels } from "../../app/stats/index";

describe("buildRatingTable", () => {
  const table = buildRatingTable([
    { item: "n2", rater: "B", label: "10" },
    { item: "n1", rater: "A", label: "9" },
    { item: "n2", rater: "A", label: "9" },
    { item: "n1", rater: "A", label: "9" }, // identical duplicate: kept once
    { item: "n3", rater: "C", label: "-1.5" },
  ]);
  it("keeps items and raters in order of first appearance", () => {
    expect(table.items).toEqual(["n2", "n1", "n3"]);
    expect(table.raters).toEqual(["B", "A", "C"]);
  });
  it("orders numeric labels by value and scores them by value", () => {
    expect(table.categories).toEqual(["-1.5", "9", "10"]);
    expect([...table.scores]).toEqual([-1.5, 9, 10]);
  });
  it("groups ratings by item and drops identical duplicates", () => {
    expect([...table.itemStart]).toEqual([0, 2, 3, 4]);
    expect(ratingCount(table)).toBe(4);
    expect(table.maxRatingsPerItem).toBe(2);
    expect([...table.ratingRater.subarray(0, 2)]).toEqual([0, 1]);
    expect([...table.ratingCategory.subarray(0, 2)]).toEqual([2, 1]);
  });
  it("scores non-numeric categories by rank and honours a given order, unused categories included", () => {
    const ordered = buildRatingTable([{ item: "x", rater: "A", label: "moderate" }], {
      categories: ["none", "mild", "moderate", "severe"],
    });
    expect(ordered.categories).toEqual(["none", "mild", "moderate", "severe"]);
    expect([...ordered.scores]).toEqual([1, 2, 3, 4]);
    expect([...ordered.ratingCategory]).toEqual([2]);
  });
});

describe("sortLabels", () => {
  it("sorts numbers by value and text by code point, independent of locale", () => {
    expect(sortLabels(["10", "9", "1e1", "0.5"])).toEqual(["0.5", "9", "10", "1e1"]);
    expect(sortLabels(["b", "B", "a", "é"])).toEqual(["B", "a", "b", "é"]);
    expect(sortLabels(["2", "x"])).toEqual(["2", "x"]);
  });
});

describe("agreementWeights", () => {
  it("matches irrCAC's linear.weights(1:3) and quadratic.weights(1:3) (irrCAC weighting vignette output)", () => {
    expect([...agreementWeights([1, 2, 3], "linear")!]).toEqual([1, 0.5, 0, 0.5, 1, 0.5, 0, 0.5, 1]);
    expect([...agreementWeights([1, 2, 3], "quadratic")!]).toEqual([1, 0.75, 0, 0.75, 1, 0.75, 0, 0.75, 1]);
    expect([...agreementWeights([1, 2, 3], "identity")!]).toEqual([1, 0, 0, 0, 1, 0, 0, 0, 1]);
  });
  it("uses score distances, not ranks, for numeric categories", () => {
    expect([...agreementWeights([0, 1, 4], "linear")!]).toEqual([1, 0.75, 0, 0.75, 1, 0.25, 0, 0.25, 1]);
  });
  it("is undefined (null) with fewer than two distinct scores", () => {
    expect(agreementWeights([3], "linear")).toBeNull();
    expect(agreementWeights([2, 2], "quadratic")).toBeNull();
  });
});
