/**
 * `metrics --compat reference`: figures 8, 9 and appendix figure 5 keep only the models of the reference scripts'
 * name maps, and the output says which models they dropped (docs/safe-psych.md, "Figures 8, 9 and appendix
 * figure 5").
 *
 * Expected values: test/fixtures/metrics-figures/figures.py → expected.json, the figures computed from per-sample
 * rows as figure8.py, figure9.py and appendixfigure5.py compute them (filters, groupings, percentages, and
 * appendixfigure5.py's plot selection: at least 5 cases, sorted by accuracy, head(6) + tail(6), de-duplicated),
 * written out in plain Python step by step after the script's pandas calls (pandas is not installed here).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { accuracyScript, computeReferenceMetrics } from "../../app/evaluation/compat";
import {
  appendixFigure5Selection,
  appendixFigure5Table,
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

  it("appendix figure 5: the categories appendixfigure5.py plots, and the ones it leaves out, from the rows", () => {
    const a5 = appendixFigure5Table(expected.rows);
    const want = expected.appendix_figure5_selection;
    // Seven categories, three with fewer than 5 cases: the other four are both the best 6 and the worst 6.
    expect(a5.plotted.map((r) => [r.gt_3char, r.total_cases, r.correct_3char, r.section])).toEqual(
      want.plotted.map((r: Record<string, unknown>) => [r.gt_3char, r.total_cases, r.correct_3char, r.section]),
    );
    a5.plotted.forEach((r, i) => expect(r.accuracy_3char_pct).toBeCloseTo(want.plotted[i].accuracy_3char_pct, 12));
    expect(a5.dropped.map((r) => [r.gt_3char, r.total_cases, r.reason])).toEqual(
      want.dropped.map((r: Record<string, unknown>) => [r.gt_3char, r.total_cases, r.reason]),
    );
    expect(a5.filter.dropped).toEqual(expected.dropped.figure9);
  });

  it("appendix figure 5: 16 categories, the middle ones and a tie at the 6th place left out as the script does", () => {
    const { categories, selection } = expected.appendix_figure5_many;
    const a5 = appendixFigure5Selection(
      Object.entries(categories as Record<string, { total_cases: number; correct_3char: number }>).map(
        ([gt_3char, c]) => ({ gt_3char, ...c }),
      ),
    );
    expect(a5.plotted.map((r) => [r.gt_3char, r.section])).toEqual(
      selection.plotted.map((r: Record<string, unknown>) => [r.gt_3char, r.section]),
    );
    a5.plotted.forEach((r, i) => expect(r.accuracy_3char_pct).toBeCloseTo(selection.plotted[i].accuracy_3char_pct, 12));
    expect(a5.dropped.map((r) => [r.gt_3char, r.reason])).toEqual(
      selection.dropped.map((r: Record<string, unknown>) => [r.gt_3char, r.reason]),
    );
    expect(a5.plotted).toHaveLength(12);
    // F13, F31 and F40 tie at 50%: ties keep category-code order, so F40 is the one past the 6th place.
    expect(a5.plotted.slice(4, 6).map((r) => r.gt_3char)).toEqual(["F13", "F31"]);
    expect(a5.dropped.find((r) => r.gt_3char === "F40")?.reason).toBe("between the 6 best and the 6 worst");
  });

  it("appendix figure 5 on a table worked by hand", () => {
    // F32: 6 of 6 right = 100%; F41: 2 of 5 = 40%; F20: 0 of 5 = 0%; F43: 4 of 4 = 100% but fewer than 5 cases.
    // Three categories are left after MIN_CASES: head(6) takes all three as "Top 6", tail(6) the same three, which
    // drop_duplicates removes: F32, F41, F20, all "Top 6"; F43 is left out.
    const a5 = appendixFigure5Selection([
      { gt_3char: "F43", total_cases: 4, correct_3char: 4 },
      { gt_3char: "F41", total_cases: 5, correct_3char: 2 },
      { gt_3char: "F32", total_cases: 6, correct_3char: 6 },
      { gt_3char: "F20", total_cases: 5, correct_3char: 0 },
    ]);
    expect(a5.plotted).toEqual([
      { gt_3char: "F32", total_cases: 6, correct_3char: 6, accuracy_3char_pct: 100, section: "Top 6" },
      { gt_3char: "F41", total_cases: 5, correct_3char: 2, accuracy_3char_pct: 40, section: "Top 6" },
      { gt_3char: "F20", total_cases: 5, correct_3char: 0, accuracy_3char_pct: 0, section: "Top 6" },
    ]);
    expect(a5.dropped).toEqual([
      { gt_3char: "F43", total_cases: 4, correct_3char: 4, accuracy_3char_pct: 100, reason: "fewer than 5 cases" },
    ]);
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
    // One case per category: appendixfigure5.py plots none of them (fewer than 5 cases each).
    expect(acc.appendix_figure5_accuracy_by_category).toEqual([]);
    expect(
      acc.figure_model_filter.appendix_figure5.categories_dropped.map((r) => [r.gt_3char, r.total_cases, r.reason]),
    ).toEqual([
      ["F32", 1, "fewer than 5 cases"],
      ["F41", 1, "fewer than 5 cases"],
    ]);
    expect(acc.figure_model_filter.figure9).toEqual({ kept: ["gemma-3-4b"], dropped: ["local-x"] });
    expect(acc.figure_model_filter.appendix_figure5).toMatchObject({ kept: ["gemma-3-4b"], dropped: ["local-x"] });
    expect(acc.figure8_accuracy_3char_by_model.map((r) => r.model)).toEqual(["gemma-3-4b"]);
    const out = computeReferenceMetrics(GOLD, files, []);
    expect(out.warnings).toContain(
      "diagnosis_accuracy/figure9.py and appendixfigure5.py keep only the models of their name map: dropped local-x",
    );
    expect(out.warnings).toContain(
      "diagnosis_accuracy/appendixfigure5.py plots only categories with at least 5 cases, the 6 best and the 6 worst: dropped F32 (1 case, fewer than 5 cases), F41 (1 case, fewer than 5 cases)",
    );
  });
});
