/**
 * The rubric scorer against hand-computed examples and against test/fixtures/rubric-grading/expected.json, which
 * reference_scores.py (beside it) made by running HealthBench's own scorer from a clone of simple-evals
 * (grade_sample's metrics, _compute_clipped_stats: clipped mean and np.std of bootstrap means; np.percentile of the
 * same means) with scipy's kendalltau, on verdicts.json.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { holm, kendallTauB, selfPreference, severities } from "../../app/rubric-grading/domain/compare";
import { evaluate, type RefusalPolicy } from "../../app/rubric-grading/domain/evaluation";
import {
  clippedEstimate,
  clippedMean,
  percentile,
  responseMetrics,
  rubricScore,
  type GradedCriterion,
} from "../../app/rubric-grading/domain/score";

const dir = "test/fixtures/rubric-grading";
const fixture = JSON.parse(readFileSync(`${dir}/verdicts.json`, "utf8"));
const expected = JSON.parse(readFileSync(`${dir}/expected.json`, "utf8"));

type Conv = { prompt_id: string; rubrics: { points: number; tags: string[] }[]; example_tags: string[] };

function graded(conv: Conv, verdicts: (boolean | null)[]): GradedCriterion[] {
  return conv.rubrics.map((r, i) => ({ points: r.points, tags: r.tags, met: verdicts[i] }));
}

function input(policy: RefusalPolicy) {
  const convs = fixture.conversations as Conv[];
  return {
    candidates: fixture.candidates,
    judges: fixture.judges,
    conversations: convs.map((c) => c.prompt_id),
    metrics: fixture.candidates.map((c: string) =>
      fixture.judges.map((j: string) =>
        convs.map((conv, k) => {
          const m = responseMetrics(graded(conv, fixture.verdicts[c][j][k]), conv.example_tags);
          return m.overall === null ? null : m;
        }),
      ),
    ),
    refused: fixture.candidates.map((c: string) => fixture.refused[c]),
    selfCandidate: new Map(Object.entries(fixture.self_candidate) as [string, string][]),
    policy,
    bootstrap: fixture.bootstrap,
    pairedTop: fixture.paired_top,
    alpha: fixture.alpha,
  };
}

const close = (a: number | null, b: number | null) => {
  if (a === null || b === null) return expect(a).toBe(b);
  expect(a).toBeCloseTo(b, 12);
};

describe("rubricScore (hand-computed)", () => {
  it("met points over positive points, negatives in the numerator when met", () => {
    // (5 − 2) / (5 + 3) = 0.375
    expect(
      rubricScore([
        { points: 5, tags: [], met: true },
        { points: 3, tags: [], met: false },
        { points: -2, tags: [], met: true },
      ]),
    ).toBe(0.375);
  });
  it("can go below zero per response; the aggregate is clipped", () => {
    const s = rubricScore([
      { points: 2, tags: [], met: false },
      { points: -6, tags: [], met: true },
    ]);
    expect(s).toBe(-3);
    expect(clippedMean([s!, 0.5])).toBe(0);
    expect(clippedMean([1, 1.4])).toBe(1);
  });
  it("is null without positive points, and excluded verdicts leave both sums", () => {
    expect(rubricScore([{ points: -1, tags: [], met: true }])).toBeNull();
    // the 4-point criterion's verdict is excluded: 2 / 2
    expect(
      rubricScore([
        { points: 2, tags: [], met: true },
        { points: 4, tags: [], met: null },
      ]),
    ).toBe(1);
  });
  it("tags: example tags take the overall score, rubric tags their own criteria", () => {
    const m = responseMetrics(
      [
        { points: 4, tags: ["axis:accuracy"], met: true },
        { points: 4, tags: ["axis:completeness"], met: false },
        { points: -4, tags: ["axis:completeness"], met: false },
        { points: -3, tags: ["axis:safety"], met: true },
      ],
      ["theme:hedging"],
    );
    expect(m.overall).toBe((4 - 3) / 8);
    expect(Object.fromEntries(m.tags)).toEqual({
      "theme:hedging": 1 / 8,
      "axis:accuracy": 1,
      "axis:completeness": 0,
    });
  });
  it("numpy's linear percentile", () => {
    expect(percentile([1, 2, 3, 4], 25)).toBe(1.75);
    expect(percentile([5], 97.5)).toBe(5);
  });
});

describe("compare (hand-computed)", () => {
  it("Kendall τ-b with and without ties", () => {
    expect(kendallTauB([1, 2, 3], [1, 3, 2])).toBeCloseTo(1 / 3, 15);
    // scipy.stats.kendalltau([1, 2, 2, 3], [1, 2, 3, 3]).statistic = 0.8
    expect(kendallTauB([1, 2, 2, 3], [1, 2, 3, 3])).toBeCloseTo(0.8, 15);
    expect(kendallTauB([1, 1], [1, 2])).toBeNull();
  });
  it("severity and self-preference", () => {
    const sev = severities([
      [0.5, 0.7],
      [0.6, 0.8],
      [0.4, 0.6],
    ]);
    expect(sev.grandMean).toBeCloseTo(0.6, 15);
    expect(sev.severity.map((s) => +s.toFixed(12))).toEqual([0, 0.1, -0.1]);
    // judge 1 scores its own candidate 0.8 against 0.7 and 0.6: raw +0.15; its leniency (+0.1) minus the others'
    // mean leniency (−0.05) explains all of it
    const p = selfPreference([0.7, 0.8, 0.6], 1, sev.severity);
    expect(p.raw).toBeCloseTo(0.15, 12);
    expect(p.corrected).toBeCloseTo(0, 12);
  });
  it("Holm–Bonferroni", () => {
    // m = 4: 0.01 ≤ 0.05/4, 0.02 > 0.05/3 stops; adjusted = [0.04, 0.06, 0.06, 0.06] (running max of (m − k)p)
    const h = holm([0.04, 0.01, 0.02, 0.03]);
    expect(h.reject).toEqual([false, true, false, false]);
    expect(h.adjusted.map((x) => +x.toFixed(12))).toEqual([0.06, 0.04, 0.06, 0.06]);
  });
  it("bootstrap: seeded and reproducible", () => {
    const a = clippedEstimate([0.1, 0.9, 0.4, 0.5], { seed: 3, resamples: 200 });
    const b = clippedEstimate([0.1, 0.9, 0.4, 0.5], { seed: 3, resamples: 200 });
    expect(a).toEqual(b);
    expect(a!.mean).toBeCloseTo(0.475, 15);
  });
});

describe("the scorer against the reference's arithmetic in Python (expected.json)", () => {
  it("response-level metrics", () => {
    for (const [key, want] of Object.entries(
      expected.response_metrics as Record<string, Record<string, number> | null>,
    )) {
      const [c, j, k] = key.split("|");
      const conv = fixture.conversations[Number(k)] as Conv;
      const m = responseMetrics(graded(conv, fixture.verdicts[c][j][Number(k)]), conv.example_tags);
      if (want === null) {
        expect(m.overall, key).toBeNull();
        continue;
      }
      const { overall_score, ...tags } = want;
      close(m.overall, overall_score);
      expect([...m.tags.keys()].sort(), key).toEqual(Object.keys(tags).sort());
      for (const [t, v] of Object.entries(tags)) close(m.tags.get(t)!, v);
    }
  });

  for (const policy of ["as_returned", "exclude_refusals"] as const) {
    it(`Table 1, tags, agreement and paired comparisons (${policy})`, () => {
      const want = expected[policy];
      const got = evaluate(input(policy));
      expect(got.table.map((r) => r.candidate)).toEqual(want.ranking);
      for (const row of got.table) {
        const w = want.table[row.candidate];
        for (const [est, exp] of [
          [row.panel, w.panel],
          ...fixture.judges.map((j: string) => [row.judges[j], w.judges[j]]),
        ]) {
          close(est.mean, exp.mean);
          expect(est.n).toBe(exp.n);
          close(est.bootstrapStd, exp.bootstrap_std);
          close(est.ci95[0], exp.ci95[0]);
          close(est.ci95[1], exp.ci95[1]);
        }
      }
      expect(got.tags.length).toBe(Object.keys(want.tags).length);
      for (const t of got.tags) {
        const w = want.tags[`${t.candidate}|${t.tag}`];
        close(t.panel, w.panel);
        expect(t.n).toBe(w.n);
        for (const j of fixture.judges) close(t.judges[j], w.judges[j]);
      }
      for (const k of got.agreement.kendall) close(k.tau, want.kendall[`${k.a}|${k.b}`]);
      close(got.agreement.grandMean, want.grand_mean);
      for (const j of got.agreement.judges) close(j.severity, want.severity[j.judge]);
      expect(got.agreement.selfPreference.map((s) => s.judge).sort()).toEqual(Object.keys(want.self_preference).sort());
      for (const s of got.agreement.selfPreference) {
        close(s.raw, want.self_preference[s.judge].raw);
        close(s.corrected, want.self_preference[s.judge].corrected);
      }
      expect(got.paired.map((p) => [p.a, p.b])).toEqual(want.paired.map((p: { a: string; b: string }) => [p.a, p.b]));
      got.paired.forEach((p, i) => {
        const w = want.paired[i];
        close(p.difference, w.difference);
        close(p.ci95[0], w.ci95[0]);
        close(p.ci95[1], w.ci95[1]);
        close(p.p, w.p);
        close(p.pHolm, w.p_holm);
        expect(p.significant).toBe(w.significant);
        expect(p.significantHolm).toBe(w.significant_holm);
        expect(p.n).toBe(w.n);
      });
    });
  }
});
