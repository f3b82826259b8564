/**
 * `metrics --compat reference`: figures 8, 9 and appendix figure 5 keep only the models of the reference scripts'
 * name maps, and the output says which models they dropped (docs/safe-psych.md, "Figures 8, 9 and appendix
 * figure 5").
 *
 * Expected values: test/fixtures/metrics-figures/figures.py → expected.json, the figures computed from per-sample
 * rows as figure8.py, figure9.py and appendixfigure5.py compute them (filters, groupings, percentages).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { accuracyScript, computeReferenceMetrics } from "../../app/evaluation/compat";
import {
  figure8Table,
  figure9Table,
  FIGURE8_MODELS,
  FIGURE9_MODELS,
} from "../../app/evaluation/compat/reference-figures";
import { gold, record, runFile, s } from "../fixtures/runner/builders";

const expected = JSON.parse(
  readFileSync(new URL("../fixtures/metrics-figures/expected.json", import.meta.url), "utf8"),
);

describe("the reference figures' model filter", () => {
  it("figure 8: 3-character accuracy per model and strategy over its nine named models, as figure8.py", () => {
    const f8 = figure8Table(expected.rows);
    expect(f8.rows.map((r) => r.model)).toEqual(expected.figure8.map((r: { model: string }) => r.model));
    f8.rows.forEach((r, i) => {
      for (const [strategy, v] of Object.entries(expected.figure8[i].accuracy_3char_pct)) {
        const got = r.accuracy_3char_pct[strategy as keyof typeof r.accuracy_3char_pct];
        if (v === null) expect(got).toBeNull();
        else expect(got).toBeCloseTo(v as number, 12);
      }
    });
    expect(f8.filter.dropped).toEqual(expected.dropped.figure8);
    expect(FIGURE8_MODELS).toHaveLength(9);
  });

  it("figure 9: accuracy by doctor agreement over its ten named models, as figure9.py", () => {
    const f9 = figure9Table(expected.rows);
    for (const status of ["agreement", "disagreement"] as const) {
      expect(f9.bars[status].total).toBe(expected.figure9[status].total);
      for (const k of ["diagnosis", "category", "group"] as const)
        expect(f9.bars[status][k]).toBeCloseTo(expected.figure9[status][k], 12);
    }
    expect(f9.filter.dropped).toEqual(expected.dropped.figure9);
    expect(FIGURE9_MODELS).toContain("gemini-2.5-flash-thinking");
  });

  it("accuracyScript applies the filter to figure 9 and appendix figure 5 and reports the dropped models", () => {
    const GOLD = [
      gold({ id: "r1", sufficient: true, code: "F32.1", tau: 1, T: 3 }),
      gold({ id: "r2", sufficient: true, code: "F41.1", tau: 1, T: 3, diagnosisAgreement: false }),
    ];
    const FULL = "full_info_no_abstention";
    const o = { strategy: FULL, seed: 123, T: 3 };
    const files = [
      runFile(
        [record("r1", [s("Diagnose", "F32.1")], o), record("r2", [s("Diagnose", "F41.1")], o)],
        "gemma-3-4b",
        FULL,
        123,
      ),
      runFile(
        [record("r1", [s("Diagnose", "F20.0")], o), record("r2", [s("Diagnose", "F20.0")], o)],
        "local-x",
        FULL,
        123,
      ),
    ];
    const acc = accuracyScript(GOLD, files);
    if (acc.status !== "ok") throw new Error(acc.error);
    // Only gemma-3-4b's two right answers count; local-x's two wrong ones are left out, as figure9.py leaves them.
    expect(acc.figure9_accuracy_by_agreement).toEqual({
      agreement: { total: 1, diagnosis: 1, category: 1, group: 1 },
      disagreement: { total: 1, diagnosis: 1, category: 1, group: 1 },
    });
    expect(acc.appendix_figure5_accuracy_by_category.map((r) => r.total_cases)).toEqual([1, 1]);
    expect(acc.figure_model_filter.figure9).toEqual({ kept: ["gemma-3-4b"], dropped: ["local-x"] });
    expect(acc.figure8_accuracy_3char_by_model.map((r) => r.model)).toEqual(["gemma-3-4b"]);
    const out = computeReferenceMetrics(GOLD, files, []);
    expect(out.warnings).toContain(
      "diagnosis_accuracy/figure9.py and appendixfigure5.py keep only the models of their name map: dropped local-x",
    );
  });
});
