/**
 * The rater-quality report's statistics against hand computation (docs/rater-quality.md, "Statistics"). The numbers
 * below are worked out in the comments; sklearn is not on this machine, so none came from it.
 */
import { describe, expect, it } from "vitest";
import type { CaseLabel } from "../../app/labels/labels";
import {
  calibrationAccuracy,
  pairFigures,
  retestReport,
  type LabelPair,
} from "../../app/annotation/domain/rater-quality";

const S = (icd10: string, earliestSection: number): CaseLabel => ({
  sufficiency: "sufficient",
  icd10,
  earliestSection,
});
const I: CaseLabel = { sufficiency: "insufficient", missingInfo: ["imaging"], missingInfoOther: null };
const pair = (first: CaseLabel, second: CaseLabel): LabelPair => ({ first, second, numSections: 5 });

// One annotator's first and second labels of six cases.
const RETEST: LabelPair[] = [
  pair(S("F32.1", 2), S("F32.1", 2)),
  pair(S("F32.1", 3), S("F33.0", 4)),
  pair(S("F20.0", 2), I),
  pair(I, I),
  pair(I, S("F41.1", 1)),
  pair(S("F41.1", 1), S("F40.0", 1)),
];

describe("test–retest figures", () => {
  const f = pairFigures(RETEST);
  it("sufficiency: % agreement, Cohen's κ and AC1 as computed by hand", () => {
    // Matrix (first × second): S→S 3, S→I 1, I→S 1, I→I 1. p_o = 4/6.
    expect(f.sufficiency.matrix).toEqual([
      [3, 1],
      [1, 1],
    ]);
    expect(f.sufficiency.percent_agreement).toBeCloseTo(4 / 6, 12);
    // κ: marginals 4/6, 2/6 on both sides → p_e = (16 + 4)/36 = 5/9; κ = (2/3 − 5/9)/(1 − 5/9) = 0.25.
    expect(f.sufficiency.cohen_kappa).toBeCloseTo(0.25, 12);
    // AC1: π_S = 2/3, π_I = 1/3, p_e = Σ π(1 − π)/(q − 1) = 4/9; AC1 = (2/3 − 4/9)/(5/9) = 0.4.
    expect(f.sufficiency.gwet_ac1.value).toBeCloseTo(0.4, 12);
    expect(f.sufficiency.gwet_ac1.ci95).not.toBeNull();
  });

  it("diagnosis at code, category and block over the both-sufficient cases", () => {
    // Both sufficient: (F32.1, F32.1), (F32.1, F33.0), (F41.1, F40.0).
    expect(f.diagnosis.n).toBe(3);
    expect(f.diagnosis.diagnosis_level.percent_agreement).toBeCloseTo(1 / 3, 12);
    expect(f.diagnosis.category.percent_agreement).toBeCloseTo(1 / 3, 12);
    // F32/F33 are both in F30–F39, F41/F40 both in F40–F48.
    expect(f.diagnosis.group.percent_agreement).toBeCloseTo(1, 12);
  });

  it("earliest section: exact, linear weighted κ and AC2", () => {
    // Pairs (2,2), (3,4), (1,1) on the scale 1..5; linear weights w = 1 − |i − j|/4.
    expect(f.earliest_section.exact_agreement).toBeCloseTo(2 / 3, 12);
    // p_o(w) = (1 + 0.75 + 1)/3 = 0.916667. p_e(w) = (1/9) Σ_{i∈{1,2,3}, j∈{1,2,4}} w_ij = 6.25/9.
    // κ_w = (0.916667 − 0.694444)/(1 − 0.694444) = 0.727273.
    expect(f.earliest_section.weighted.linear.cohen_kappa_weighted).toBeCloseTo(0.2222222 / 0.3055556, 5);
    // AC2: T_w = Σ w = 25 − 40/4 = 15; π = (1/3, 1/3, 1/6, 1/6, 0); Σ π(1 − π) = 26/36;
    // p_e = T_w/(q(q − 1)) · 26/36 = 0.75 · 0.722222 = 0.541667; AC2 = (0.916667 − 0.541667)/(0.458333) = 0.818182.
    expect(f.earliest_section.weighted.linear.gwet_ac2.value).toBeCloseTo(0.375 / 0.4583333, 5);
  });

  it("pools pairs over annotators", () => {
    const r = retestReport([
      { annotator: "a", pairs: RETEST.slice(0, 3) },
      { annotator: "b", pairs: RETEST.slice(3) },
    ]);
    expect(r.annotators.map((x) => [x.annotator, x.n])).toEqual([
      ["a", 3],
      ["b", 3],
    ]);
    expect(r.pooled.sufficiency.cohen_kappa).toBeCloseTo(0.25, 12);
  });

  it("says why an empty figure is empty in its own words, never the inter-rater report's", () => {
    const empty = retestReport([{ annotator: "a", pairs: [] }]);
    for (const f of [empty.pooled, empty.annotators[0]!]) {
      expect(f.reasons["sufficiency.percent_agreement"]).toBe("no retest has been submitted yet");
      expect(f.reasons["earliest_section.exact_agreement"]).toBe("no retest was called sufficient both times");
      for (const reason of Object.values(f.reasons)) expect(reason).not.toMatch(/primary annotations|both annotators/);
    }
    // Pairs, none sufficient both times: the diagnosis figures say so.
    const insufficient = retestReport([{ annotator: "a", pairs: [pair(I, I)] }]);
    expect(insufficient.pooled.reasons["earliest_section.exact_agreement"]).toBe(
      "no retest was called sufficient both times",
    );
  });
});

describe("calibration accuracy", () => {
  // Reference first, the annotator's label second.
  const CAL: LabelPair[] = [
    pair(S("F32.1", 2), S("F32.0", 2)),
    pair(S("F41.1", 3), S("F41.1", 4)),
    pair(I, S("F20.0", 1)),
    pair(I, I),
  ];
  it("counts each level against the reference and marks what is below the threshold", () => {
    const a = calibrationAccuracy("ann", CAL, 0.8);
    expect(a.sufficiency).toEqual({ n: 4, n_correct: 3, accuracy: 0.75 });
    expect(a.diagnosis_level).toEqual({ n: 2, n_correct: 1, accuracy: 0.5 });
    expect(a.category).toEqual({ n: 2, n_correct: 2, accuracy: 1 });
    expect(a.group).toEqual({ n: 2, n_correct: 2, accuracy: 1 });
    expect(a.earliest_section).toEqual({ n: 2, n_correct: 1, accuracy: 0.5 });
    expect(a.below).toEqual(["sufficiency", "diagnosis_level"]);
    expect(calibrationAccuracy("ann", CAL, 0.5).below).toEqual([]);
    expect(calibrationAccuracy("ann", CAL, null).below).toEqual([]);
  });
});
