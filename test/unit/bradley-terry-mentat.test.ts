/**
 * Preference labels by default are MENTAT's: its preferece_HBT.py objective without a ridge on the strengths, and
 * separated questions (no finite maximum) detected and reported rather than left at wherever the optimiser stopped
 * (docs/mentat.md, "Separation").
 *
 * Expected values (with MENTAT's first version of the fit, penalty 2 and slopes 0.8–1.25, named
 * `fitVersion: "2025-01-19"`): test/fixtures/bradley-terry/mentat_default.py → mentat-default.json — the unregularised objective
 * minimised with scipy's L-BFGS-B and with SLSQP under sum-to-zero constraints (as MENTAT does), the ridge fit for
 * comparison, separation found by brute force over option subsets, and the bootstrap's separated replicates
 * counted on Python's own random.Random resampling.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fitPreferenceLabels, HBT_DEFAULTS, type AnnotationRow } from "../../app/mentat/domain/bradley-terry";
import { separatedQuestions } from "../../app/mentat/domain/bradley-terry-separation";

interface Case {
  name: string;
  questions: string[];
  rows: AnnotationRow[];
  separated: boolean[];
  lbfgsb: { labels: number[][]; objective: number };
  slsqp: { labels: number[][] };
  ridge: { strengthPenalty: number; labels: number[][] };
  max_ridge_shift: number;
  bootstrap?: { replicates: number; seed: number; separated: number[]; replicates_with_separation: number };
}
const cases: Case[] = JSON.parse(
  readFileSync(new URL("../fixtures/bradley-terry/mentat-default.json", import.meta.url), "utf8"),
).cases;
const byName = (name: string) => cases.find((c) => c.name === name)!;
// mentat_default.py fits the objective with the first version's penalty and bounds (penalty 2, slopes 0.8–1.25).
const FIRST = "2025-01-19" as const;

describe("MENTAT's objective by default", () => {
  it("has no ridge on the strengths unless asked", () => {
    expect(HBT_DEFAULTS.strengthPenalty).toBe(0);
    expect(
      fitPreferenceLabels(byName("connected").rows, 5, { fitVersion: FIRST, bootstrap: 0 }).options.strengthPenalty,
    ).toBe(0);
  });

  it("gives scipy's labels for MENTAT's objective when every question has a finite maximum", () => {
    const c = byName("connected");
    const labels = fitPreferenceLabels(c.rows, 5, { fitVersion: FIRST, bootstrap: 0 });
    expect(labels.converged).toBe(true);
    expect(Math.abs(labels.objective - c.lbfgsb.objective)).toBeLessThan(1e-8 * c.lbfgsb.objective);
    labels.questions.forEach((q, qi) => {
      expect(q.separated).toBe(false);
      q.labels.forEach((p, i) => {
        expect(p).toBeCloseTo(c.lbfgsb.labels[qi][i], 5);
        expect(p).toBeCloseTo(c.slsqp.labels[qi][i], 4);
      });
    });
    // The ridge moves these labels by 0.022 at most; with it, Concord still matches scipy's ridge fit.
    expect(c.max_ridge_shift).toBeGreaterThan(0.01);
    const ridged = fitPreferenceLabels(c.rows, 5, {
      fitVersion: FIRST,
      bootstrap: 0,
      strengthPenalty: c.ridge.strengthPenalty,
    });
    expect(ridged.options.strengthPenalty).toBe(0.01);
    ridged.questions.forEach((q, qi) => q.labels.forEach((p, i) => expect(p).toBeCloseTo(c.ridge.labels[qi][i], 5)));
  });

  for (const name of ["separation", "few-raters"]) {
    it(`${name}: flags the separated questions as Python's brute force does and counts the fit as not converged`, () => {
      const c = byName(name);
      const labels = fitPreferenceLabels(c.rows, 5, { fitVersion: FIRST, bootstrap: 0 });
      expect(labels.questions.map((q) => q.separated)).toEqual(c.separated);
      expect(labels.converged).toBe(false);
      // The questions with a finite maximum still get scipy's labels (the diverging ones leave the shared rater
      // parameters alone in the limit).
      labels.questions.forEach((q, qi) => {
        if (!c.separated[qi]) q.labels.forEach((p, i) => expect(p).toBeCloseTo(c.lbfgsb.labels[qi][i], 3));
      });
      // With the ridge a finite optimum exists: still flagged, but converged.
      const ridged = fitPreferenceLabels(c.rows, 5, { fitVersion: FIRST, bootstrap: 0, strengthPenalty: 0.01 });
      expect(ridged.questions.map((q) => q.separated)).toEqual(c.separated);
      expect(ridged.converged).toBe(true);
    });
  }

  it("counts separated bootstrap replicates per question and in notConverged, on Python's resampling", () => {
    const c = byName("few-raters");
    const boot = c.bootstrap!;
    const labels = fitPreferenceLabels(c.rows, 5, { fitVersion: FIRST, bootstrap: boot.replicates, seed: boot.seed });
    expect(labels.questions.map((q) => q.separatedReplicates)).toEqual(boot.separated);
    expect(labels.bootstrap.notConverged).toBe(boot.replicates_with_separation);
    const ridged = fitPreferenceLabels(c.rows, 5, {
      fitVersion: FIRST,
      bootstrap: boot.replicates,
      seed: boot.seed,
      strengthPenalty: 0.01,
    });
    expect(ridged.questions.map((q) => q.separatedReplicates)).toEqual(boot.separated);
    expect(ridged.bootstrap.notConverged).toBe(0);
  });

  it("detects separation from the win graph: an option never beaten, never winning, or a dominant pair", () => {
    const data = (wins: [number, number][]) => ({
      nQuestions: 1,
      nOptions: 3,
      nRaters: 1,
      wins: wins.map(([winner, loser]) => ({ question: 0, rater: 0, winner, loser, count: 1 })),
    });
    expect(
      separatedQuestions(
        data([
          [0, 1],
          [1, 2],
          [2, 0],
        ]),
      ),
    ).toEqual([false]);
    expect(
      separatedQuestions(
        data([
          [0, 1],
          [0, 2],
          [1, 2],
          [2, 1],
        ]),
      ),
    ).toEqual([true]);
    expect(
      separatedQuestions(
        data([
          [1, 0],
          [2, 0],
          [1, 2],
          [2, 1],
        ]),
      ),
    ).toEqual([true]);
    expect(separatedQuestions(data([]))).toEqual([false]);
  });
});
