/**
 * The review of model steps' pure rules (docs/evaluation.md, "Clinician review of model steps"): which step, which
 * sections, who reviews what in which order, and the defensible figures.
 */
import { describe, expect, it } from "vitest";
import {
  checkModelReview,
  defensibleSummary,
  planReviewLabels,
  reviewAgreement,
  reviewedStep,
  revealedSections,
} from "../../app/evaluation/domain/model-review";

describe("the step and its sections", () => {
  it("reviews the first diagnosis, else the last step", () => {
    expect(reviewedStep({ firstDiagnosis: 2, stepsExecuted: 4 })).toBe(2);
    expect(reviewedStep({ firstDiagnosis: null, stepsExecuted: 4 })).toBe(4);
    expect(reviewedStep({ firstDiagnosis: null, stepsExecuted: 0 })).toBe(1);
  });

  it("shows the sections the model had seen: the step's under a sequential strategy, all under full information", () => {
    expect(revealedSections("sequential_info_abstention_aware", { stepIndex: 2, sectionOrder: null }, 5)).toBe(2);
    expect(revealedSections("sequential_info_neutral_prompting", { stepIndex: 2, sectionOrder: 3 }, 5)).toBe(3);
    expect(revealedSections("sequential_info_neutral_prompting", { stepIndex: 9, sectionOrder: null }, 5)).toBe(5);
    expect(revealedSections("full_info_no_abstention", { stepIndex: 1, sectionOrder: 1 }, 4)).toBe(4);
  });
});

describe("who reviews what", () => {
  it("gives each item perItem distinct reviewers, balanced, each reviewer's items in a shuffled order", () => {
    const plan = planReviewLabels(31, ["a", "b", "c"], 2, 7);
    const byItem = new Map<number, string[]>();
    for (const p of plan) byItem.set(p.item, [...(byItem.get(p.item) ?? []), p.reviewer]);
    expect(byItem.size).toBe(31);
    for (const r of byItem.values()) expect(new Set(r).size).toBe(2);
    const load = ["a", "b", "c"].map((r) => plan.filter((p) => p.reviewer === r).length);
    expect(Math.max(...load) - Math.min(...load)).toBeLessThanOrEqual(2);
    for (const r of ["a", "b", "c"]) {
      const mine = plan.filter((p) => p.reviewer === r).sort((x, y) => x.position - y.position);
      expect(mine.map((p) => p.position)).toEqual(mine.map((_, i) => i));
      // Not the items' own order.
      expect(mine.map((p) => p.item)).not.toEqual([...mine.map((p) => p.item)].sort((x, y) => x - y));
    }
    expect(planReviewLabels(31, ["a", "b", "c"], 2, 7)).toEqual(plan);
    expect(() => planReviewLabels(3, ["a"], 2, 1)).toThrow(RangeError);
  });
});

describe("the figures", () => {
  it("counts an item defensible when every reviewer said yes, split when they disagree", () => {
    const items = [
      { item: 1, model: "m1", failures: ["premature_diagnosis", "wrong_code"] },
      { item: 2, model: "m1", failures: ["premature_diagnosis"] },
      { item: 3, model: "m2", failures: ["premature_diagnosis"] },
      { item: 4, model: "m2", failures: ["over_abstention"] },
    ];
    const labels = [
      { item: 1, reviewer: "a", defensible: "yes" as const },
      { item: 1, reviewer: "b", defensible: "yes" as const },
      { item: 2, reviewer: "a", defensible: "yes" as const },
      { item: 2, reviewer: "b", defensible: "no" as const },
      { item: 3, reviewer: "a", defensible: "no" as const },
    ];
    const rows = defensibleSummary(items, labels);
    const row = (failure: string, model: string) => rows.find((r) => r.failure === failure && r.model === model);
    expect(row("premature_diagnosis", "")).toMatchObject({ reviewed: 3, defensible: 1, split: 1 });
    expect(row("premature_diagnosis", "m1")).toMatchObject({ reviewed: 2, defensible: 1, split: 1, share: 0.5 });
    expect(row("premature_diagnosis", "m2")).toMatchObject({ reviewed: 1, defensible: 0, split: 0, share: 0 });
    expect(row("over_abstention", "")).toMatchObject({ reviewed: 0, share: null });
    expect(row("wrong_code", "m1")).toMatchObject({ reviewed: 1, defensible: 1 });
    expect(row("any", "")).toMatchObject({ reviewed: 3, defensible: 1, split: 1 });
    expect(row("premature_abstention", "")).toBeUndefined();
    const agreement = reviewAgreement(labels);
    expect(agreement.items).toBe(2);
    expect(agreement.percentAgreement).toBe(0.5);
    expect(reviewAgreement(labels.slice(4)).kappaReason).toBe("no step was reviewed by two reviewers");
  });

  it("needs a judgement and a reason to submit", () => {
    expect(checkModelReview({ defensible: null, reason: " " })).toEqual({
      defensible: "Say whether the step is clinically defensible.",
      reason: "Say why.",
    });
    expect(checkModelReview({ defensible: "no", reason: "too early" })).toEqual({});
  });
});
