import { describe, expect, it } from "vitest";
import { computePaperMetrics } from "../../app/evaluation/domain/paper-metrics";
import { readGold } from "../../app/evaluation/domain/metrics-inputs";
import { stepAction, stepCode } from "../../app/evaluation/domain/metrics-trajectories";
import { summarizeValues, type Metric, type MetricsResult } from "../../app/evaluation/domain/metrics";
import { studentTQuantile } from "../../app/stats/index";
import { gold, record, runFile, s } from "../fixtures/runner/builders";

// scipy.stats.t.ppf(0.975, df) for df = 1..10 (python3 -c "from scipy.stats import t; print([t.ppf(0.975, d) for d in range(1, 11)])")
const T975 = [
  12.706204736174694, 4.302652729749462, 3.1824463052837078, 2.7764451051977934, 2.5705818356363146, 2.4469118511449786,
  2.364624251592784, 2.306004135204166, 2.262157162798205, 2.228138851986274,
];

describe("summaries over seeds (paper appendix 9.5)", () => {
  it("uses Student's t quantile as scipy computes it", () => {
    T975.forEach((t, i) => expect(studentTQuantile(0.975, i + 1)).toBeCloseTo(t, 12));
  });

  it("gives mean, sample s.d. and mean ± t·s/√n", () => {
    // [0.2, 0.4, 0.6]: mean 0.4; s = √((0.04 + 0 + 0.04)/2) = 0.2; half = 4.302652729749462·0.2/√3 = 0.49682...
    const m = summarizeValues([0.2, 0.4, 0.6]) as Metric;
    expect(m.mean).toBeCloseTo(0.4, 15);
    expect(m.sd).toBeCloseTo(0.2, 15);
    expect(m.n).toBe(3);
    const half = (4.302652729749462 * 0.2) / Math.sqrt(3);
    expect(m.ci95![0]).toBeCloseTo(0.4 - half, 12);
    expect(m.ci95![1]).toBeCloseTo(0.4 + half, 12);
  });

  it("has no s.d. or interval with one value, and is null without values", () => {
    expect(summarizeValues([0.3, null])).toEqual({ mean: 0.3, sd: null, ci95: null, n: 1 });
    expect(summarizeValues([null, null])).toBeNull();
    expect(summarizeValues([])).toBeNull();
    expect(summarizeValues([1, 1])).toEqual({ mean: 1, sd: 0, ci95: [1, 1], n: 2 });
  });
});

// Gold: g1 sufficient at section 1 (F32.1); g2 at 2 (F20.0); g3 at 3 (F41.1, annotators disagreed on the
// diagnosis); g4, g5 insufficient; g6 sufficient at 2 (F10.2).
const GOLD = [
  gold({ id: "g1", sufficient: true, code: "F32.1", tau: 1, T: 3 }),
  gold({ id: "g2", sufficient: true, code: "F20.0", tau: 2, T: 3 }),
  gold({ id: "g3", sufficient: true, code: "F41.1", tau: 3, T: 3, diagnosisAgreement: false }),
  gold({ id: "g4", sufficient: false, T: 3 }),
  gold({ id: "g5", sufficient: false, T: 4 }),
  gold({ id: "g6", sufficient: true, code: "F10.2", tau: 2, T: 4 }),
];
const SEQ = "sequential_info_neutral_prompting";
const o = (seed: number, T: number) => ({ strategy: SEQ, seed, T });

const SEED_123 = [
  record("g1", [s("Diagnose", "F32.1")], o(123, 3)),
  record("g1", [s("Abstain")], o(123, 3)), // duplicate: the first record counts
  record("g2", [s("Diagnose", "F20.1")], o(123, 3)),
  record("g3", [s("Clarify"), s("Clarify"), s("Abstain")], o(123, 3)),
  record("g4", [s("Clarify"), s("Diagnose", "F32.1")], o(123, 3)),
  record("g5", [s("Clarify"), s(""), s("Clarify"), s("Abstain")], o(123, 4)), // empty output: excluded
  record("g6", [s("Clarify"), s("Diagnose", "F19.2")], o(123, 4)),
  record("zz", [s("Diagnose", "F32.1")], o(123, 3)), // not in the gold labels
];
const SEED_42 = [
  record("g1", [s("Clarify"), s("Diagnose", "F32.1")], o(42, 3)),
  record("g2", [s("Clarify"), s("Diagnose", "F20.0")], o(42, 3)),
  record("g3", [s("Diagnose", "F41.1")], o(42, 3)),
  record("g4", [s("Clarify"), s("Clarify"), s("Abstain")], o(42, 3)),
  record("g5", [s("Abstain")], o(42, 4)), // premature abstention
  record("g6", [s("Clarify"), s(null), s("Abstain")], o(42, 4)), // judge failure: excluded
];

const t1 = 12.706204736174694;

describe("paper mode on a hand-computed example (two seeds)", () => {
  const output = computePaperMetrics(GOLD, [runFile(SEED_123, "m", SEQ, 123), runFile(SEED_42, "m", SEQ, 42)]);
  const r = output.results[0] as MetricsResult;

  it("finds one model × strategy over two seeds", () => {
    expect(output.mode).toBe("paper");
    expect(output.results).toHaveLength(1);
    expect(r).toMatchObject({ model: "m", strategy: SEQ, n_seeds: 2, seeds: [42, 123] });
    expect(output.gold).toEqual({ cases: 6, sufficient: 4, insufficient: 2, unusable: 0 });
  });

  it("counts what it excludes", () => {
    // trajectories 8 + 6; duplicates: g1 (seed 123); unknown: zz; empty output: g5 (123); judge failure: g6 (42);
    // scored 5 + 5.
    expect(r.qc).toMatchObject({
      trajectories: 14,
      duplicates: 1,
      unknown_cases: 1,
      excluded_empty_output: 1,
      excluded_judge_failure: 1,
      scored: 10,
      diagnosed_without_code: 0,
    });
  });

  it("under- and over-abstention", () => {
    // seed 123: insufficient scored {g4: diagnosed} → under 1/1 = 1; sufficient {g1, g2, g3, g6}, g3 never diagnosed
    //   → over 1/4 = 0.25.
    // seed 42: insufficient {g4, g5} none diagnosed → under 0/2 = 0; sufficient {g1, g2, g3} all diagnosed → over 0.
    // under: mean 0.5, s = √(0.25 + 0.25) = 0.7071…, half = t₁·s/√2 = t₁·0.5
    expect(r.metrics.under_abstention!.mean).toBe(0.5);
    expect(r.metrics.under_abstention!.sd).toBeCloseTo(Math.SQRT1_2, 15);
    expect(r.metrics.under_abstention!.ci95![0]).toBeCloseTo(0.5 - t1 * 0.5, 10);
    expect(r.metrics.under_abstention!.ci95![1]).toBeCloseTo(0.5 + t1 * 0.5, 10);
    // over: [0.25, 0] → mean 0.125, s = 0.125·√2, half = t₁·0.125
    expect(r.metrics.over_abstention!.mean).toBe(0.125);
    expect(r.metrics.over_abstention!.ci95![1]).toBeCloseTo(0.125 + t1 * 0.125, 10);
    expect(r.metrics.over_abstention!.n).toBe(2);
  });

  it("stage-1 clarification over cases whose expert stage-1 label is Clarify", () => {
    // Clarify cases: not sufficient at section 1 → g2, g3, g4, g5, g6 (g1 is Diagnose at stage 1).
    // seed 123 (g5 excluded): g2 ✗ (diagnosed), g3 ✓, g4 ✓, g6 ✓ → 3/4; seed 42 (g6 excluded): g2 ✓, g3 ✗, g4 ✓,
    // g5 ✗ (abstained) → 2/4. Mean 0.625.
    expect(r.metrics.stage1_clarification_rate!.mean).toBe(0.625);
    expect(r.qc.stage1_clarify_cases).toBe(8);
  });

  it("timing over sufficient cases with an earliest section", () => {
    // seed 123: g1 on time (1 = τ1), g2 premature (1 < 2), g3 never, g6 on time (2 = 2) → 1/4, 2/4, 0, 1/4
    // seed 42: g1 late (2 > 1), g2 on time, g3 premature (1 < 3) → 1/3, 1/3, 1/3, 0
    const t = r.metrics.timing;
    expect(t.premature!.mean).toBeCloseTo((0.25 + 1 / 3) / 2, 15);
    expect(t.on_time!.mean).toBeCloseTo((0.5 + 1 / 3) / 2, 15);
    expect(t.late!.mean).toBeCloseTo(1 / 6, 15);
    expect(t.never!.mean).toBe(0.125);
  });

  it("accuracy at three levels, by timing, by agreement and per category", () => {
    // seed 123: g1 F32.1/F32.1 ✓✓✓; g2 F20.0/F20.1 ✗✓✓; g6 F10.2/F19.2 ✗✗✓ → 1/3, 2/3, 1
    // seed 42: g1, g2, g3 exact → 1, 1, 1. Means: 2/3, 5/6, 1 (s.d. 0).
    const a = r.metrics.accuracy;
    expect(a.diagnosis!.mean).toBeCloseTo(2 / 3, 15);
    expect(a.category!.mean).toBeCloseTo(5 / 6, 15);
    expect(a.group).toEqual({ mean: 1, sd: 0, ci95: [1, 1], n: 2 });
    // Premature: seed 123 {g2} → 0; seed 42 {g3} → 1. On time: seed 123 {g1, g6} → 1/2; seed 42 {g2} → 1.
    expect(r.accuracy_by_timing!.premature.diagnosis!.mean).toBe(0.5);
    expect(r.accuracy_by_timing!.on_time.diagnosis!.mean).toBe(0.75);
    expect(r.accuracy_by_timing!.late.diagnosis).toEqual({ mean: 1, sd: null, ci95: null, n: 1 }); // seed 42's g1 only
    // Agreement cases g1, g2, g6: seed 123 → 1/3, seed 42 → 1. Disagreement g3: seed 42 only → 1.
    expect(r.accuracy_by_agreement.agreement.diagnosis!.mean).toBeCloseTo(2 / 3, 15);
    expect(r.accuracy_by_agreement.disagreement.diagnosis).toEqual({ mean: 1, sd: null, ci95: null, n: 1 });
    expect(r.accuracy_by_category.map((c) => [c.category, c.cases])).toEqual([
      ["F20", 2],
      ["F32", 2],
      ["F10", 1],
      ["F41", 1],
    ]);
  });

  it("cumulative curves beside the expert sufficiency curve", () => {
    // seed 123 (5 scored): first diagnoses g1 1, g2 1, g4 2, g6 2 → by stage 2/5, 4/5, 4/5, 4/5, 4/5;
    //   experts: g1 τ1; g2, g6 τ2; g3 τ3 → 1/5, 3/5, 4/5, 4/5, 4/5
    // seed 42 (5 scored): g3 1, g1 2, g2 2 → 1/5, 3/5, 3/5…; experts: g1, g2, g3 → 1/5, 2/5, 3/5, 3/5, 3/5
    const c = r.cumulative!;
    expect(c.stages).toEqual([1, 2, 3, 4, 5]);
    expect(c.model.map((m) => m!.mean)).toEqual([0.30000000000000004, 0.7, 0.7, 0.7, 0.7]);
    expect(c.expert.map((m) => m!.mean)).toEqual([0.2, 0.5, 0.7, 0.7, 0.7]);
    // Over all gold cases: g1 by 1; g2, g6 by 2; g3 by 3 → 1/6, 3/6, 4/6, 4/6, 4/6.
    expect(output.expert_curve).toEqual([1 / 6, 3 / 6, 4 / 6, 4 / 6, 4 / 6]);
  });

  it("gives null for an empty denominator and no sequential metrics for full information", () => {
    const full = computePaperMetrics(GOLD, [
      runFile(
        [record("g4", [s("Abstain")], { strategy: "full_info_no_abstention", seed: 1, T: 3 })],
        "m",
        "full_info_no_abstention",
        1,
      ),
    ]).results[0];
    expect(full.metrics.over_abstention).toBeNull(); // no sufficient case
    expect(full.metrics.under_abstention).toEqual({ mean: 0, sd: null, ci95: null, n: 1 });
    expect(full.metrics.stage1_clarification_rate).toBeNull();
    expect(full.metrics.timing).toEqual({ premature: null, on_time: null, late: null, never: null });
    expect(full.metrics.accuracy).toEqual({ diagnosis: null, category: null, group: null });
    expect(full.cumulative).toBeNull();
    expect(full.accuracy_by_timing).toBeNull();
  });
});

describe("reading records", () => {
  it("takes a re-judge's action over the judge's, and survives new_judge_output: null", () => {
    expect(stepAction({ judge_action: "Abstain", new_judge_action: " diagnose " })).toEqual({
      action: "diagnose",
      overridden: true,
    });
    expect(stepAction({ judge_action: "Abstain", new_judge_output: { action: "Clarify" } })).toEqual({
      action: "clarify",
      overridden: true,
    });
    expect(stepAction({ judge_action: "Abstain", new_judge_output: null })).toEqual({
      action: "abstain",
      overridden: false,
    });
    expect(stepAction({ judge_action: "" })).toEqual({ action: null, overridden: false });
  });

  it("takes the first valid ICD-10 code of the judge's ICD_CODES line", () => {
    expect(stepCode({ judge_output_raw: "PRIMARY_ANSWER: committed\nICD_CODES: G30.1, f321, F33" })).toBe("F32.1");
    expect(stepCode({ judge_output_raw: "ICD_CODES: F02.80 (dementia)" })).toBe("F02.80");
    expect(stepCode({ judge_output_raw: "ICD_CODES: empty", structured_action_raw: { icd_codes: ["F41.1"] } })).toBe(
      "F41.1",
    );
    expect(stepCode({ judge_output_raw: "" })).toBeNull();
  });

  it("reads gold leniently and counts what it cannot use", () => {
    const g = readGold([
      { id: 1, diagnosis_sufficiency: "1", diagnosis: "f321", earliest_sufficient_section: "2" },
      { id: "x", diagnosis_sufficiency: "maybe" },
      { diagnosis_sufficiency: "1" },
      { id: "y", original_row: { diagnosis_sufficiency: "0" } },
    ]);
    expect(g.cases.get("1")).toEqual({ id: "1", sufficient: true, tau: 2, code: "F32.1", agreementCase: false });
    expect(g.cases.get("y")?.sufficient).toBe(false);
    expect(g.unusable).toBe(2);
  });

  it("uses the re-judged action everywhere in paper mode (unlike the abstention script)", () => {
    const rec = record(
      "g3",
      [s("Clarify"), { action: "Clarify", extra: { new_judge_action: "Diagnose" } }, s("Abstain", "F41.1")],
      o(1, 3),
    );
    const r = computePaperMetrics(GOLD, [runFile([rec], "m", SEQ, 1)]).results[0];
    expect(r.metrics.over_abstention!.mean).toBe(0); // diagnosed at step 2 by the re-judge
    expect(r.metrics.timing.premature!.mean).toBe(1); // 2 < τ3
    expect(r.qc.diagnosed_without_code).toBe(1); // the Clarify judge output of step 2 lists no code
    expect(r.metrics.accuracy.diagnosis!.mean).toBe(0);
  });

  it("skips unreadable lines with a warning", () => {
    const file = runFile([record("g1", [s("Diagnose", "F32.1")], o(1, 3))], "m", SEQ, 1);
    const out = computePaperMetrics(GOLD, [{ ...file, text: file.text + '{"sample_id": "g2", "traj' }]);
    expect(out.results[0].qc.trajectories).toBe(1);
    expect(out.warnings).toContain("1 lines of trajectory files are not valid JSON and were skipped");
  });
});
