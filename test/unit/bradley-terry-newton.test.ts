/**
 * The projected Newton method of the hierarchical Bradley–Terry fit (app/mentat/domain/bradley-terry-newton.ts)
 * against the L-BFGS-B path it replaced as default (`method: "lbfgsb"`): both minimise the same objective, so on
 * seeded datasets they must give the same labels, intervals and rater parameters. L-BFGS-B is run here with
 * a tighter tolerance than its default (projected gradient ≤ 1e-10, no stop on a small reduction), so the comparison
 * is between two converged fits and not between stopping rules. The scipy fixtures (bradley-terry.test.ts,
 * bradley-terry-mentat.test.ts) check the default method against MENTAT's Python code.
 */
import { describe, expect, it } from "vitest";
import {
  fitHierarchicalBradleyTerry,
  fitPreferenceLabels,
  hbtObjective,
  sortAnnotationRows,
  winsFromAnnotations,
  type AnnotationRow,
  type RaterEffects,
} from "../../app/mentat/domain/bradley-terry";
import { PyRandom } from "../../app/python-compat/random";

const TIGHT = { gradientTolerance: 1e-10, relativeReductionTolerance: 0, maxIterations: 20000 };

/** Q questions of 5 options, `perQuestion` rows each from 6 experts with slopes and offsets of their own. */
function dataset(seed: number, questions: number, perQuestion: number, separate = false): AnnotationRow[] {
  const rng = new PyRandom(seed);
  const slope = Array.from({ length: 6 }, () => 0.7 + 0.6 * rng.random());
  const rows: AnnotationRow[] = [];
  for (let q = 0; q < questions; q++) {
    const beta = Array.from({ length: 5 }, () => 2 * rng.random() - 1);
    for (let a = 0; a < perQuestion; a++) {
      const r = rng.randbelow(6);
      const scores = beta.map((b) =>
        Math.max(0, Math.min(100, Math.round(50 + 20 * slope[r] * b + 60 * (rng.random() - 0.5)))),
      );
      // The first question's option 0 wins every comparison it is in: separated.
      if (separate && q === 0) scores[0] = 101 + a;
      rows.push({ question: `q${q}`, rater: `expert-${r}`, scores });
    }
  }
  return rows;
}

const cases: { name: string; rows: AnnotationRow[]; separated: boolean }[] = [
  { name: "seed 1, 8 questions", rows: dataset(1, 8, 30), separated: false },
  { name: "seed 2, 20 questions", rows: dataset(2, 20, 25), separated: false },
  { name: "seed 3, 12 questions, one separated", rows: dataset(3, 12, 30, true), separated: true },
];

describe("Newton and L-BFGS-B reach the same optimum", () => {
  for (const c of cases)
    for (const raterEffects of ["slope+offset", "slope", "none"] as RaterEffects[])
      it(`${c.name}, ${raterEffects}`, () => {
        const options = { bootstrap: 12, seed: 5, raterEffects };
        const newton = fitPreferenceLabels(c.rows, 5, { ...options, method: "newton" });
        const lbfgsb = fitPreferenceLabels(c.rows, 5, { ...options, method: "lbfgsb", optimizer: TIGHT });
        expect(newton.questions.some((q) => q.separated)).toBe(c.separated);
        newton.questions.forEach((q, i) => {
          const o = lbfgsb.questions[i];
          expect(q.separated).toBe(o.separated);
          expect(q.separatedReplicates).toBe(o.separatedReplicates);
          for (const [a, b] of [
            [q.labels, o.labels],
            [q.lower, o.lower],
            [q.upper, o.upper],
          ])
            a.forEach((p, j) => expect(Math.abs(p - b[j])).toBeLessThan(1e-6));
        });
        newton.raters.forEach((r, i) => {
          expect(Math.abs(r.slope - lbfgsb.raters[i].slope)).toBeLessThan(1e-6);
          expect(Math.abs(r.offset - lbfgsb.raters[i].offset)).toBeLessThan(1e-6);
        });
        expect(newton.converged).toBe(lbfgsb.converged);
        expect(newton.bootstrap.notConverged).toBe(lbfgsb.bootstrap.notConverged);
        // Newton's objective is never above L-BFGS-B's (beyond rounding) and needs far fewer iterations.
        expect(newton.objective).toBeLessThanOrEqual(lbfgsb.objective + 1e-9 * Math.abs(lbfgsb.objective));
        expect(newton.iterations).toBeLessThan(lbfgsb.iterations);
      });

  it("respects the slope and offset bounds, with parameters held at them (projected Newton)", () => {
    // Narrow bounds so that the optimum has slopes and offsets on their bounds.
    const rows = sortAnnotationRows(dataset(4, 10, 30));
    const questions = [...new Set(rows.map((r) => r.question))].sort();
    const raters = [...new Set(rows.map((r) => r.rater))].sort();
    const data = winsFromAnnotations(rows, questions, raters, 5);
    const bounds = { slopeBounds: [0.99, 1.01] as const, offsetBounds: [-0.05, 0.05] as const };
    const newton = fitHierarchicalBradleyTerry(data, { ...bounds, method: "newton" });
    const lbfgsb = fitHierarchicalBradleyTerry(data, { ...bounds, method: "lbfgsb", optimizer: TIGHT });
    expect(newton.converged).toBe(true);
    const atBound = [...newton.slopes, ...newton.offsets].filter(
      (v) => Math.abs(Math.abs(v - 1) - 0.01) < 1e-12 || Math.abs(Math.abs(v) - 0.05) < 1e-12,
    );
    expect(atBound.length).toBeGreaterThan(0);
    newton.slopes.forEach((s, r) => {
      expect(s).toBeGreaterThanOrEqual(0.99);
      expect(s).toBeLessThanOrEqual(1.01);
      expect(Math.abs(s - lbfgsb.slopes[r])).toBeLessThan(1e-7);
      expect(Math.abs(newton.offsets[r] - lbfgsb.offsets[r])).toBeLessThan(1e-7);
    });
    newton.strengths.forEach((row, q) =>
      row.forEach((b, i) => expect(Math.abs(b - lbfgsb.strengths[q][i])).toBeLessThan(1e-6)),
    );
    // The same objective function evaluated at both answers.
    const f = hbtObjective(data, bounds);
    const pack = (fit: typeof newton) => Float64Array.from([...fit.strengths.flat(), ...fit.slopes, ...fit.offsets]);
    const g = new Float64Array(pack(newton).length);
    expect(Math.abs(f(pack(newton), g) - f(pack(lbfgsb), g))).toBeLessThan(1e-9);
  });
});
