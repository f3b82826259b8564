import { describe, expect, it } from "vitest";
import { computePaperMetrics } from "../../app/evaluation/domain/paper-metrics";
import {
  accuracyScript,
  clarificationScript,
  computeReferenceMetrics,
  extractCodeX,
  pct,
  prematureScript,
  pyRound2,
  pyStr,
  seedScript,
} from "../../app/evaluation/compat";
import { gold, record, runFile, s } from "../fixtures/runner/builders";

// Gold (docs/formats.md#data_gtjson layout). r2's annotators disagreed on the diagnosis, r4's on sufficiency; nobody exported
// presenting_symptoms_label (the reference's released data_gt.json has none).
const GOLD = [
  gold({ id: "r1", sufficient: true, code: "F32.1", tau: 2, T: 3 }),
  gold({ id: "r2", sufficient: true, code: "F41.1", tau: 1, T: 3, diagnosisAgreement: false }),
  gold({ id: "r3", sufficient: false, T: 4 }),
  gold({ id: "r4", sufficient: true, code: "F29", tau: 3, T: 3, sufficiencyAgreement: false }),
  gold({ id: "r5", sufficient: false, T: 3 }),
];

const NEUTRAL = "sequential_info_neutral_prompting";
const FULL_AWARE = "full_info_abstention_aware";
const FULL = "full_info_no_abstention";
const o = (strategy: string, seed: number, T = 3, stopping?: string) => ({ strategy, seed, T, stopping });

const NEUTRAL_123 = [
  record("r1", [s("Clarify"), s("Diagnose", "F32.1")], o(NEUTRAL, 123)),
  record("r2", [s("Diagnose", "F41.1")], o(NEUTRAL, 123)),
  record("r3", [s("Clarify"), s("Diagnose", "F32.0")], o(NEUTRAL, 123, 4)),
  record("r4", [s("Clarify"), s("Clarify"), s("Abstain", "F20.0")], o(NEUTRAL, 123)),
  record("r5", [s("Clarify"), s(""), s("Abstain")], o(NEUTRAL, 123)), // an empty answer at step 2
];
const NEUTRAL_42 = [
  record("r1", [s("Diagnose", "F32.1")], o(NEUTRAL, 42)),
  // A re-judge says Diagnose at step 2 (no code there); the abstention script ignores it.
  record(
    "r2",
    [s("Clarify"), { action: "Clarify", extra: { new_judge_action: "Diagnose" } }, s("Abstain", "F41.1", "F41.0")],
    o(NEUTRAL, 42),
  ),
  record("r3", [s("Abstain")], o(NEUTRAL, 42, 4)),
  record("r4", [s("Clarify"), s("Clarify"), s("Diagnose", "F29.1")], o(NEUTRAL, 42)),
  record("r5", [s("Clarify"), s("Clarify"), s("Abstain")], o(NEUTRAL, 42)),
];
const AWARE_123 = [
  record("r1", [s("Diagnose", "F32.1")], o(FULL_AWARE, 123)),
  record("r2", [s("Abstain", "F41.1", "F41.0")], o(FULL_AWARE, 123)),
  record("r3", [s("Diagnose", "F32.1")], o(FULL_AWARE, 123, 4)),
  record("r4", [s("Diagnose", "F20.0")], o(FULL_AWARE, 123)),
  record("r5", [s("Abstain")], o(FULL_AWARE, 123)),
];
const AWARE_42 = [
  record("r1", [s("Diagnose", "F32.1")], o(FULL_AWARE, 42)),
  record("r2", [s("Diagnose", "F41.1")], o(FULL_AWARE, 42)),
  record("r3", [s("Abstain")], o(FULL_AWARE, 42, 4)),
  record("r4", [s(null)], o(FULL_AWARE, 42, 3, "Finished")), // judge failure
  record("r5", [s("Abstain")], o(FULL_AWARE, 42)),
];
const FULL_123 = [
  record("r1", [s("Diagnose", "F32.2")], o(FULL, 123)),
  record("r2", [s("Diagnose", "F49")], o(FULL, 123)),
  record("r4", [s("Diagnose")], o(FULL, 123)), // a diagnosis without a code
];

const FILES = [
  runFile(NEUTRAL_123, "m", NEUTRAL, 123),
  runFile(NEUTRAL_42, "m", NEUTRAL, 42),
  runFile(AWARE_123, "m", FULL_AWARE, 123),
  runFile(AWARE_42, "m", FULL_AWARE, 42),
  runFile(FULL_123, "m", FULL, 123),
];
const SEED_FILES = FILES.map((f) => ({ ...f, path: f.path.replace(/^runs\//, "runs_seeds/") }));

type Row = Record<string, unknown>;
const ok = <T>(out: ({ status: "ok" } & T) | { status: "crashed"; error: string }): T => {
  expect(out.status).toBe("ok");
  return out as T;
};

describe("Python helpers", () => {
  it("round as Python's round(x, 2) does, half to even on the exact binary value", () => {
    // python3 -c "print([round(v, 2) for v in (0.125, 0.375, 2.675, 1.005, 33.33333333333333, 12.345, 0.5)])"
    expect([0.125, 0.375, 2.675, 1.005, 33.33333333333333, 12.345, 0.5].map(pyRound2)).toEqual([
      0.12, 0.38, 2.67, 1, 33.33, 12.35, 0.5,
    ]);
    // python3 -c "print([round(100 * k / n, 2) for k, n in ((1, 3), (2, 3), (1, 800), (3, 800), (5, 7))])"
    expect(
      [
        [1, 3],
        [2, 3],
        [1, 800],
        [3, 800],
        [5, 7],
      ].map(([k, n]) => pct(k, n)),
    ).toEqual([33.33, 66.67, 0.12, 0.38, 71.43]);
    expect(pct(1, 0)).toBe(0);
  });

  it("write str() of JSON values as Python does", () => {
    expect([null, true, false, 3, 2.5, "x", [1, "a"], { k: null }].map(pyStr)).toEqual([
      "None",
      "True",
      "False",
      "3",
      "2.5",
      "x",
      "[1, 'a']",
      "{'k': None}",
    ]);
  });

  it("extract code X: the first code-like word, after predicted_icd10_codes: if present", () => {
    expect(extractCodeX("PRIMARY_ANSWER: committed\nICD_CODES: f32.10, F33")).toBe("F32.10");
    expect(extractCodeX("F20 then predicted_icd10_codes: none, F41.1 here\nF99")).toBe("F41.1");
    expect(extractCodeX("code F32.A and")).toBe("F32.A");
    expect(extractCodeX("éF32.1 is glued to a letter; F33.1 is not")).toBe("F33.1");
    expect(extractCodeX("")).toBeNull();
    expect(extractCodeX(null)).toBeNull();
  });
});

describe("abstention_rate/process.py (docs/evaluation.md#abstention-script)", () => {
  const out = computeReferenceMetrics(GOLD, FILES, SEED_FILES);
  const table = out.reference_scripts!["abstention_rate/process.py"] as { summary: Row[]; empty_output_qc: Row[] };

  it("counts Finished and undiagnosed trajectories as abstained, drops empty outputs, ignores re-judges", () => {
    // Neutral, pooled over both seeds. Sufficient rows: 123 r1 0, r2 0, r4 1 (never diagnosed); 42 r1 0, r2 1
    // (judge_action never Diagnose: the re-judge is ignored here), r4 0 → 2/6 abstained → over 1/3.
    // Insufficient: 123 r3 0; 42 r3 1, r5 1 (123 r5 dropped: empty output) → 2/3 abstained → under 1 − 2/3.
    const neutral = out.results.find((r) => r.strategy === NEUTRAL)!;
    expect(neutral.metrics.over_abstention).toEqual({ mean: 2 / 6, sd: null, ci95: null, n: 1 });
    expect(neutral.metrics.under_abstention!.mean).toBeCloseTo(1 - 2 / 3, 15);
    expect(neutral.sources).toMatchObject({ under_abstention: "abstention_rate/process.py" });
    // Full info, abstention aware: sufficient 123 r1 0, r2 1, r4 0; 42 r1 0, r2 0 (42 r4 dropped: empty judge
    // output) → over 1/5. Insufficient: 123 r3 0, r5 1; 42 r3 1, r5 1 → under 1 − 3/4 = 0.25.
    const aware = out.results.find((r) => r.strategy === FULL_AWARE)!;
    expect(aware.metrics.over_abstention!.mean).toBeCloseTo(0.2, 15);
    expect(aware.metrics.under_abstention!.mean).toBe(0.25);
  });

  it("writes the summary and quality-control tables as the script does", () => {
    const neutralRows = table.summary.filter((r) => r.strategy === NEUTRAL);
    expect(neutralRows).toEqual([
      {
        scenario: "sequential_info",
        metric_type: "trajectory_level",
        strategy: NEUTRAL,
        model: "m",
        final_human_sufficiency: "insufficient",
        n_cases: 2,
        n_abstained: 2,
        n_diagnosed: 1,
        abstention_rate: 2 / 3,
        diagnosis_rate: 1 / 3,
      },
      {
        scenario: "sequential_info",
        metric_type: "trajectory_level",
        strategy: NEUTRAL,
        model: "m",
        final_human_sufficiency: "sufficient",
        n_cases: 3,
        n_abstained: 2,
        n_diagnosed: 4,
        abstention_rate: 1 / 3,
        diagnosis_rate: 2 / 3,
      },
    ]);
    expect(table.summary.map((r) => [r.scenario, r.strategy, r.final_human_sufficiency])).toEqual([
      ["full_info", FULL_AWARE, "insufficient"],
      ["full_info", FULL_AWARE, "sufficient"],
      ["full_info", FULL, "sufficient"],
      ["sequential_info", NEUTRAL, "insufficient"],
      ["sequential_info", NEUTRAL, "sufficient"],
    ]);
    // Steps: 123 → 2 + 1 + 2 + 3 + 3 = 11; 42 → 1 + 3 + 1 + 3 + 3 = 11. Ten rows, one (123 r5) not valid.
    expect(table.empty_output_qc.find((r) => r.strategy === NEUTRAL)).toEqual({
      model: "m",
      strategy: NEUTRAL,
      n_cases: 5,
      valid_cases: 9,
      total_steps_checked: 22,
      cases_with_empty_model_output: 1,
      cases_with_empty_judge_output: 1,
      total_empty_model_outputs: 1,
      total_empty_judge_outputs: 1,
    });
  });
});

describe("clarification_seeking/process.py (docs/evaluation.md#stage-1-clarification-script)", () => {
  it("as released: no presenting_symptoms_label, so every case is in the denominator", () => {
    // 123: r1 Clarify ✓, r2 ✗, r3 ✓, r4 ✓, r5 ✓ → 4/5; 42: r1 ✗, r2 ✓, r3 ✗ (Abstain), r4 ✓, r5 ✓ → 3/5
    const rows = ok(clarificationScript(GOLD, FILES)).rows;
    expect(rows).toEqual([
      {
        model: "m",
        total_gt_stage1_clarify_cases: 10,
        count_stage1_clarify: 7,
        count_not_stage1_clarify: 3,
        pct_stage1_clarify: 70,
        pct_not_stage1_clarify: 30,
        seeds: [123, 42],
      },
    ]);
  });

  it("with Concord's presenting_symptoms_label, only the expert's stage-1 Clarify cases", () => {
    // r2 (sufficient at 1) is Diagnose: 123 → r1, r3, r4, r5 all ✓ 4/4; 42 → r1 ✗, r3 ✗, r4 ✓, r5 ✓ 2/4 → 6/8
    const labelled = GOLD.map((g) => ({ ...g, presenting_symptoms_label: g.id === "r2" ? "Diagnose" : "Clarify" }));
    const out = computeReferenceMetrics(labelled, FILES, SEED_FILES);
    expect(out.results.find((r) => r.strategy === NEUTRAL)!.metrics.stage1_clarification_rate!.mean).toBe(0.75);
    // The paper mode reads the same from the expert labels, whether or not the field is there.
    const paper = computePaperMetrics(GOLD, FILES).results.find((r) => r.strategy === NEUTRAL)!;
    // 123 (r5 excluded: empty output): r1, r3, r4 ✓ → 1; 42: r1 ✗, r3 ✗, r4 ✓, r5 ✓ → 1/2
    expect(paper.metrics.stage1_clarification_rate!.mean).toBe(0.75);
  });

  it("compares the action without lower-casing it, and reads a re-judge at step 1", () => {
    const recs = [
      record("r1", [{ action: "Diagnose", extra: { new_judge_action: "clarify" } }], o(NEUTRAL, 1)),
      record("r3", [{ action: "Diagnose", extra: { new_judge_output: { action: "Clarify" } } }], o(NEUTRAL, 1)),
    ];
    const rows = ok(clarificationScript(GOLD, [runFile(recs, "m", NEUTRAL, 1)])).rows;
    expect(rows[0]).toMatchObject({ total_gt_stage1_clarify_cases: 2, count_stage1_clarify: 1 });
  });

  it("crashes on new_judge_output: null at step 1, and without a folder to read", () => {
    const recs = [record("r1", [{ action: "Clarify", extra: { new_judge_output: null } }], o(NEUTRAL, 1))];
    expect(clarificationScript(GOLD, [runFile(recs, "m", NEUTRAL, 1)])).toEqual({
      status: "crashed",
      error: "AttributeError: 'NoneType' object has no attribute 'get'",
    });
    expect(clarificationScript(GOLD, [runFile(recs, "m", FULL, 1)]).status).toBe("crashed");
  });
});

describe("premature_diagnoses/process.py and figures_5_6.py (docs/evaluation.md#timing-script)", () => {
  it("times only cases whose annotators agreed on the diagnosis", () => {
    // Kept: r1 (τ2), r4 (τ3); r2 disagreed on the diagnosis, r3 and r5 have no τ. Pooled seeds:
    // 123 r1 on time (2), r4 never; 42 r1 premature (1 < 2, one stage early), r4 on time (3).
    const t = ok(prematureScript(GOLD, FILES));
    expect(t.summary).toEqual([
      {
        model: "m",
        strategy: "neutral",
        total_cases: 4,
        count_premature: 1,
        count_on_time: 2,
        count_late: 0,
        count_never: 1,
        pct_premature: 25,
        pct_on_time: 50,
        pct_late: 0,
        pct_never: 25,
        mean_stages_too_early_among_premature: 1,
        seeds: [123, 42],
      },
    ]);
    // Stages 1..T = 3 for both cases, 4 records each; a diagnose at stage 1 (42 r1), 2 (123 r1), 3 (42 r4).
    expect(t.per_stage.map((r) => [r.stage, r.total_cases, r.count_diagnose, r.pct_diagnose])).toEqual([
      [1, 4, 1, 25],
      [2, 4, 1, 25],
      [3, 4, 1, 25],
    ]);
    const out = computeReferenceMetrics(GOLD, FILES, SEED_FILES);
    const neutral = out.results.find((r) => r.strategy === NEUTRAL)!;
    expect(neutral.metrics.timing).toEqual({
      premature: { mean: 0.25, sd: null, ci95: null, n: 1 },
      on_time: { mean: 0.5, sd: null, ci95: null, n: 1 },
      late: { mean: 0, sd: null, ci95: null, n: 1 },
      never: { mean: 0.25, sd: null, ci95: null, n: 1 },
    });
    // The paper mode times every sufficient case with a τ (r1, r2, r4), per seed, excluding empty outputs:
    // 123: r1 on time, r2 on time (1 = τ1), r4 never; 42: r1 premature, r2 late (re-judged at 2 > 1), r4 on time.
    const paper = computePaperMetrics(GOLD, FILES).results.find((r) => r.strategy === NEUTRAL)!;
    expect(paper.metrics.timing.on_time!.mean).toBeCloseTo((2 / 3 + 1 / 3) / 2, 15);
    expect(paper.metrics.timing.late!.mean).toBeCloseTo(1 / 6, 15);
  });

  it("Fig. 6: model curve over the timed records, expert curve with τ = T moved to stage 5", () => {
    // First diagnoses of the 4 timed records: 2, none, 1, 3 → 1/4, 2/4, 3/4, 3/4, 3/4.
    // Expert: r1 τ2; r2 τ1; r3 insufficient, T4 → 4 = T → 5; r4 τ3 = T → 5; r5 insufficient, T3 → 5.
    const fig = computeReferenceMetrics(GOLD, FILES, SEED_FILES).reference_scripts![
      "premature_diagnoses/figures_5_6.py"
    ] as {
      cumulative: Record<string, number[]>;
      timing_breakdown: Record<string, Record<string, number>>;
    };
    expect(fig.cumulative.neutral).toEqual([0.25, 0.5, 0.75, 0.75, 0.75]);
    expect(fig.cumulative.expert).toEqual([0.2, 0.4, 0.4, 0.4, 1]);
    expect(fig.cumulative.abstention_aware).toEqual([0, 0, 0, 0, 0]);
    expect(fig.timing_breakdown.neutral).toEqual({ premature: 0.25, on_time: 0.5, late: 0, never: 0.25 });
  });

  it("crashes on new_judge_output: null in any step", () => {
    const recs = [
      record(
        "r1",
        [s("Clarify"), { action: "Clarify", extra: { new_judge_output: null } }, s("Abstain")],
        o(NEUTRAL, 1),
      ),
    ];
    expect(prematureScript(GOLD, [runFile(recs, "m", NEUTRAL, 1)]).status).toBe("crashed");
  });
});

describe("diagnosis_accuracy/process.py (docs/evaluation.md#accuracy-script)", () => {
  const acc = ok(accuracyScript(GOLD, FILES));

  it("scores full information by granularity: code-less diagnoses skipped, F40-F49 groups", () => {
    // r1 F32.1 vs F32.2: ✗ ✓ ✓; r2 F41.1 vs F49: ✗ ✗ ✓ (F40-F49); r4 diagnosed without a code: skipped.
    expect(acc.accuracy_by_granularity).toEqual([
      {
        model: "m",
        strategy: FULL,
        total_diagnosed_cases: 2,
        correct_diagnosis_level: 0,
        accuracy_diagnosis_level_pct: 0,
        correct_3char: 1,
        accuracy_3char_pct: 50,
        correct_high_class: 2,
        accuracy_high_class_pct: 100,
      },
    ]);
    // Fig. 9 pools full_info_no_abstention by doctor agreement over the models of figure9.py's name map only:
    // "m" is not one of them, so nothing is pooled and the filter says so (metrics-reference-figures.test.ts).
    expect(acc.figure9_accuracy_by_agreement).toEqual({
      agreement: { total: 0, diagnosis: 0, category: 0, group: 0 },
      disagreement: { total: 0, diagnosis: 0, category: 0, group: 0 },
    });
    expect(acc.figure_model_filter.figure9).toEqual({ kept: [], dropped: ["m"] });
  });

  it("scores undiagnosed trajectories through the code fallback, by timing", () => {
    // Neutral rows: 123 r1 on time ✓✓✓; 123 r2 on time (1 = τ1) ✓✓✓; 123 r4 never, fallback X F20.0 vs F29 ✗ ✗ ✓;
    // 42 r1 premature ✓✓✓; 42 r2 late (re-judged diagnose at 2, no code there → last code F41.1) ✓✓✓;
    // 42 r4 on time, F29.1 vs F29 (no decimal in the gold: category compared) ✓✓✓.
    const neutral = acc.accuracy_by_timing.filter((r) => r.strategy === NEUTRAL);
    expect(
      neutral.map((r) => [r.timing_category, r.total_diagnosed_cases, r.correct_diagnosis_level, r.correct_high_class]),
    ).toEqual([
      ["late", 1, 1, 1],
      ["never", 1, 0, 1],
      ["on_time", 3, 3, 3],
      ["premature", 1, 1, 1],
    ]);
    const out = computeReferenceMetrics(GOLD, FILES, SEED_FILES);
    const r = out.results.find((x) => x.strategy === NEUTRAL)!;
    expect(r.metrics.accuracy.diagnosis!.mean).toBeCloseTo(5 / 6, 15);
    expect(r.metrics.accuracy.group!.mean).toBe(1);
    expect(r.accuracy_by_timing!.premature.diagnosis!.mean).toBe(1);
    // Full info, abstention aware: 123 r1 ✓✓✓, r2 undiagnosed but its judge listed F41.1 ✓✓✓, r4 F20.0 ✗✗✓;
    // 42 r1 ✓✓✓, r2 ✓✓✓, r4 no code → skipped. 4/5, 4/5, 5/5.
    const aware = out.results.find((x) => x.strategy === FULL_AWARE)!;
    expect(aware.metrics.accuracy.diagnosis!.mean).toBeCloseTo(0.8, 15);
    expect(aware.qc.accuracy_cases).toBe(5);
  });
});

describe("multiple_seed_runs/process.py (docs/evaluation.md#seeds-script)", () => {
  const seeds = ok(seedScript(GOLD, SEED_FILES));

  it("abstained = stopping reason or any step Abstain (Finished is not), per model and seed", () => {
    // Seed 123: insufficient r3 0, r5 1 → under 1 − 1/2; sufficient r1 0, r2 1, r4 0 → over 1/3; scored (sufficient,
    //   code, not abstained): r1 ✓✓✓, r4 F20.0 vs F29 ✗✗✓ → 1/2, 1/2, 1.
    // Seed 42: insufficient r3 1, r5 1 → under 0; sufficient r1 0, r2 0, r4 0 (Finished) → over 0; scored: r1, r2
    //   (r4 has no code) → 1, 1, 1.
    expect(
      seeds.per_seed.map((r) => [
        r.seed,
        r.final_human_sufficiency,
        r.n_samples,
        r.abstention_rate,
        r.under_abstention,
        r.over_abstention,
      ]),
    ).toEqual([
      [42, "insufficient", 2, 1, 0, null],
      [42, "sufficient", 3, 0, null, 0],
      [123, "insufficient", 2, 0.5, 0.5, null],
      [123, "sufficient", 3, 1 / 3, null, 1 / 3],
    ]);
    const t1 = 12.706204736174694;
    const under = seeds.summary.find((r) => r.metric === "under_abstention")!;
    // [0, 0.5] → mean 0.25, s = √(0.0625·2) = 0.3535…, half = t₁·s/√2 = t₁·0.25
    expect(under.n_seeds).toBe(2);
    expect(under.mean).toBe(0.25);
    expect(under.sd as number).toBeCloseTo(Math.sqrt(0.125), 15);
    expect(under.ci95_upper as number).toBeCloseTo(0.25 + t1 * 0.25, 10);
    expect(under.mean_pct).toBe(25);
    const group = seeds.summary.find((r) => r.metric === "accuracy_high_class")!;
    expect([group.mean, group.sd, group.ci95_lower, group.ci95_upper]).toEqual([1, 0, 1, 1]);
    const diag = seeds.summary.find((r) => r.metric === "accuracy_diagnosis_level")!;
    expect(diag.mean).toBe(0.75);
    expect(seeds.summary.map((r) => r.metric)).toEqual([
      "accuracy_3char",
      "accuracy_diagnosis_level",
      "accuracy_high_class",
      "over_abstention",
      "under_abstention",
    ]);
    // The results carry it as seed variability (the CI bars of Fig. 3), beside the abstention script's points.
    const aware = computeReferenceMetrics(GOLD, FILES, SEED_FILES).results.find((r) => r.strategy === FULL_AWARE)!;
    expect(aware.seed_variability!.under_abstention!.mean).toBe(0.25);
    expect(aware.seed_variability!.over_abstention!.mean).toBeCloseTo(1 / 6, 15);
  });

  it("uses F40-F48, where the accuracy script uses F40-F49", () => {
    const g = [gold({ id: "x", sufficient: true, code: "F41.1", tau: 1, T: 3 })];
    const file = runFile([record("x", [s("Diagnose", "F49")], o(FULL_AWARE, 7))], "m", FULL_AWARE, 7);
    const seedRows = ok(seedScript(g, [{ ...file, path: file.path.replace("runs/", "runs_seeds/") }]));
    expect(seedRows.summary.find((r) => r.metric === "accuracy_high_class")!.mean).toBe(0);
    const accRows = ok(accuracyScript(g, [file])).per_sample;
    expect(accRows[0].match_high_class).toBe(1);
  });

  it("needs `_full_info_abstention_aware_` and `_seed-N` in the folder name, and crashes without records", () => {
    const file = {
      path: "runs_seeds/m_full_info_abstention_aware/trajectories.jsonl",
      text: JSON.stringify(AWARE_123[0]) + "\n",
    };
    expect(seedScript(GOLD, [file])).toEqual({ status: "crashed", error: "ValueError: No matching records found." });
    expect(seedScript(GOLD, [])).toEqual({
      status: "crashed",
      error: "FileNotFoundError: No trajectories.jsonl files found under runs_seeds",
    });
  });
});

describe("reference mode output", () => {
  it("names its mode, keeps every script's tables, and reports a crash as a warning", () => {
    const out = computeReferenceMetrics(GOLD, FILES, []);
    expect(out.mode).toBe("reference");
    expect(out.warnings).toEqual([
      "multiple_seed_runs/process.py would stop with FileNotFoundError: No trajectories.jsonl files found under runs_seeds",
      // Model "m" is in none of the figure scripts' name maps (metrics-reference-figures.test.ts).
      "diagnosis_accuracy/figure8.py keeps only the models of its name map: dropped m",
      "diagnosis_accuracy/figure9.py and appendixfigure5.py keep only the models of their name map: dropped m",
      "data_gt.json has no presenting_symptoms_label (as released): clarification_seeking/process.py counts every case " +
        "in the stage-1 denominator, not only the expert's stage-1 Clarify cases",
    ]);
    expect(out.results.map((r) => [r.model, r.strategy, r.n_seeds])).toEqual([
      ["m", FULL, 1],
      ["m", FULL_AWARE, 2],
      ["m", NEUTRAL, 2],
    ]);
    expect(out.expert_curve).toEqual([0.2, 0.4, 0.4, 0.4, 1]);
  });
});
