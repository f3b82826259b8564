import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  accuracy,
  balancedAccuracy,
  classificationReport,
  cohenKappa,
  confusionMatrix,
  labelsOf,
  macroF1,
  majorityConsensus,
  majorityVote,
  scoresByLabel,
  weightedF1,
} from "~/judge-validation/domain/classification";

// expected.json: `python3 test/fixtures/classification/generate.py > test/fixtures/classification/expected.json`,
// numpy formulas written from scikit-learn's documented definitions (scikit-learn is not installed here); the first
// three cases are published worked examples (scikit-learn's f1_score and balanced_accuracy_score documentation,
// and the textbook 2×2 Cohen's κ = 0.4). null stands for Python's NaN, which is also what the TypeScript returns.
interface Case {
  name: string;
  note: string;
  truth: (string | null)[];
  predicted: (string | null)[];
  n: number;
  labels: string[];
  accuracy: number | null;
  balanced_accuracy: number | null;
  macro_f1: number | null;
  weighted_f1: number | null;
  cohen_kappa: number | null;
  per_label: Record<string, { precision: number; recall: number; f1: number; support: number }>;
  confusion: Record<string, Record<string, number>>;
}
const { cases } = JSON.parse(
  readFileSync(new URL("../fixtures/classification/expected.json", import.meta.url), "utf8"),
) as { cases: Case[] };

const close = (actual: number | null, expected: number | null) => {
  if (expected === null) expect(actual).toBeNull();
  else expect(actual).toBeCloseTo(expected, 12);
};

describe("classificationReport against the Python reference values", () => {
  for (const c of cases) {
    it(`${c.name}${c.note ? ` (${c.note})` : ""}`, () => {
      const report = classificationReport(c.truth, c.predicted);
      expect(report.n).toBe(c.n);
      expect(report.labels).toEqual(c.labels);
      close(report.accuracy, c.accuracy);
      close(report.balancedAccuracy, c.balanced_accuracy);
      close(report.macroF1, c.macro_f1);
      close(report.weightedF1, c.weighted_f1);
      close(report.cohenKappa, c.cohen_kappa);
      expect(report.confusion).toEqual(c.confusion);
      expect(Object.keys(report.perLabel)).toEqual(Object.keys(c.per_label));
      for (const [label, want] of Object.entries(c.per_label)) {
        const got = report.perLabel[label];
        expect(got.support).toBe(want.support);
        close(got.precision, want.precision);
        close(got.recall, want.recall);
        close(got.f1, want.f1);
      }
    });
  }

  it("has the published examples", () => {
    const byName = Object.fromEntries(cases.map((c) => [c.name, c]));
    expect(byName["sklearn f1_score docs"].macro_f1).toBeCloseTo(0.2667, 4);
    expect(byName["sklearn balanced_accuracy_score docs"].balanced_accuracy).toBe(0.625);
    expect(byName["Cohen 2x2 textbook"].cohen_kappa).toBeCloseTo(0.4, 12);
  });
});

describe("single scores", () => {
  const t = ["DIAGNOSE", "CLARIFY", "ABSTAIN", "CLARIFY", "DIAGNOSE"];
  const p = ["DIAGNOSE", "UNPARSED", "ABSTAIN", "CLARIFY", "UNPARSED"];

  it("agree with the report", () => {
    const report = classificationReport(t, p);
    expect(accuracy(t, p)).toBe(report.accuracy);
    expect(balancedAccuracy(t, p)).toBe(report.balancedAccuracy);
    expect(macroF1(t, p)).toBe(report.macroF1);
    expect(weightedF1(t, p)).toBe(report.weightedF1);
    expect(cohenKappa(t, p)).toBe(report.cohenKappa);
    expect(scoresByLabel(t, p)).toEqual(report.perLabel);
    expect(confusionMatrix(t, p)).toEqual(report.confusion);
  });

  it("by hand: an invented label drags macro-F1 but not balanced accuracy", () => {
    // F1: ABSTAIN 1, CLARIFY 2/3, DIAGNOSE 2/3, UNPARSED 0 → macro 7/12; recalls over true classes 1, 1/2, 1/2 → 2/3.
    expect(macroF1(t, p)).toBeCloseTo(7 / 12, 15);
    expect(balancedAccuracy(t, p)).toBeCloseTo(2 / 3, 15);
    expect(labelsOf(t, p)).toEqual(["ABSTAIN", "CLARIFY", "DIAGNOSE", "UNPARSED"]);
  });

  it("say what they require", () => {
    expect(() => accuracy(["a"], [])).toThrow(/accuracy requires as many predicted labels as true labels, got 1 and 0/);
    expect(() => classificationReport(["a"], [])).toThrow(/classificationReport/);
  });
});

describe("majority of three votes", () => {
  it("takes a label with at least two votes", () => {
    expect(majorityVote(["CLARIFY", "CLARIFY", "ABSTAIN"])).toEqual({ status: "majority", label: "CLARIFY", votes: 3 });
    expect(majorityVote(["DIAGNOSE", "DIAGNOSE", "DIAGNOSE"])).toEqual({
      status: "majority",
      label: "DIAGNOSE",
      votes: 3,
    });
    expect(majorityVote(["DIAGNOSE", null, "DIAGNOSE"])).toEqual({ status: "majority", label: "DIAGNOSE", votes: 2 });
  });

  it("reports a 1-1-1 split as a tie, and too few votes apart", () => {
    expect(majorityVote(["CLARIFY", "DIAGNOSE", "ABSTAIN"])).toEqual({ status: "tie", label: null, votes: 3 });
    expect(majorityVote(["CLARIFY", "DIAGNOSE", null])).toEqual({ status: "tie", label: null, votes: 2 });
    expect(majorityVote(["CLARIFY", null, null])).toEqual({ status: "too_few_votes", label: null, votes: 1 });
    expect(majorityVote([])).toEqual({ status: "too_few_votes", label: null, votes: 0 });
  });

  it("needs a unique top label when more raters vote", () => {
    expect(majorityVote(["a", "a", "b", "b"])).toMatchObject({ status: "tie" });
    expect(majorityVote(["a", "a", "a", "b", "b"], { minVotes: 3 })).toMatchObject({ status: "majority", label: "a" });
  });

  it("builds the consensus of every item and lists ties", () => {
    const consensus = majorityConsensus([
      ["ann_0001", ["CLARIFY", "CLARIFY", "ABSTAIN"]],
      ["ann_0002", ["CLARIFY", "DIAGNOSE", "ABSTAIN"]],
      ["ann_0003", ["DIAGNOSE", null, null]],
      ["ann_0004", ["ABSTAIN", "ABSTAIN", null]],
    ] as const);
    expect(consensus).toEqual({
      majority: { ann_0001: "CLARIFY", ann_0002: null, ann_0003: null, ann_0004: "ABSTAIN" },
      ties: ["ann_0002"],
      tooFewVotes: ["ann_0003"],
    });
  });
});
