/**
 * Demographic drift on synthetic data. Each base question has its own chance of being answered right (uniform in
 * 0.3–0.95, so variants of one question are correlated, as in MENTAT); conditions draw their outcomes from it.
 * With a planted bias (one condition 20 points worse) the paired tests find it; without one, the family-wise error
 * rate of a dimension's Holm-adjusted tests stays at or below α = 0.05 (checked over 400 null data sets, with three
 * binomial standard errors of slack). The exact binomial p-values and Holm's adjustment are checked against
 * scipy.stats.binomtest and the textbook rule (test/fixtures/mc-evaluation/reference_binomial.py).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PyRandom } from "../../app/python-compat/random";
import { dimensionDrift } from "../../app/mc-evaluation/domain/drift";
import type { MentatRow } from "../../app/mc-evaluation/domain/scores";
import { binomialTestHalf, holmAdjust, percentile } from "../../app/mc-evaluation/domain/statistics";

const GENDERS = ["male", "female", "nonbinary"] as const;

function synthetic(rng: PyRandom, questions: number, drop: Record<string, number>): MentatRow[] {
  const rows: MentatRow[] = [];
  for (let q = 0; q < questions; q++) {
    const p = 0.3 + 0.65 * rng.random();
    for (const g of GENDERS) {
      const correct = rng.random() < Math.max(0, p - (drop[g] ?? 0));
      rows.push({
        id: `q${q}.gender.${g}`,
        facts: {
          kind: "mentat",
          question_id: `q${q}`,
          dataset: "gender",
          domain: q % 2 ? "diagnosis" : "monitoring",
          demographics: { gender: g, age: null, race: null },
          labels: [1, 0, 0, 0, 0],
          label_source: "intended",
        },
        status: "parsed",
        letter: correct ? "A" : "B",
        correct,
        cross_entropy: 0,
        preference_mass: correct ? 1 : 0,
      });
    }
  }
  return rows;
}

describe("paired drift tests", () => {
  it("find a planted bias (female 20 points worse) and nothing between the unbiased conditions", () => {
    const drift = dimensionDrift(synthetic(new PyRandom(1), 150, { female: 0.2 }), "gender", {
      reps: 1000,
      seed: 0,
      alpha: 0.05,
    });
    const test = (a: string, b: string) => drift.tests.find((t) => t.first === a && t.second === b)!;
    expect(test("male", "female").significant).toBe(true);
    expect(test("female", "nonbinary").significant).toBe(true);
    expect(test("male", "nonbinary").significant).toBe(false);
    expect(test("male", "female").difference!).toBeGreaterThan(0.1);
    const [lo] = test("male", "female").difference_ci95!;
    expect(lo).toBeGreaterThan(0);
    for (const c of drift.conditions) {
      expect(c.ci95![0]).toBeLessThanOrEqual(c.accuracy!);
      expect(c.ci95![1]).toBeGreaterThanOrEqual(c.accuracy!);
    }
  });

  it("have power: the planted bias is found in at least 90% of 100 data sets of 200 questions", () => {
    const rng = new PyRandom(2);
    let found = 0;
    for (let r = 0; r < 100; r++) {
      const d = dimensionDrift(synthetic(rng, 200, { female: 0.2 }), "gender", { reps: 20, seed: r, alpha: 0.05 });
      if (d.tests.find((t) => t.first === "male" && t.second === "female")!.significant) found++;
    }
    expect(found).toBeGreaterThanOrEqual(90);
  });

  it("keep the family-wise error rate at α = 0.05 without a bias (400 null data sets of 60 questions)", () => {
    const rng = new PyRandom(3);
    const sets = 400;
    let anyRejected = 0;
    for (let r = 0; r < sets; r++) {
      const d = dimensionDrift(synthetic(rng, 60, {}), "gender", { reps: 20, seed: r, alpha: 0.05 });
      if (d.tests.some((t) => t.significant)) anyRejected++;
    }
    const slack = 3 * Math.sqrt((0.05 * 0.95) / sets);
    expect(anyRejected / sets).toBeLessThanOrEqual(0.05 + slack);
  });

  it("pair only questions both conditions answered (parsed)", () => {
    const rows = synthetic(new PyRandom(4), 10, {});
    rows[1] = { ...rows[1]!, status: "ambiguous", letter: null, correct: false };
    const d = dimensionDrift(rows, "gender", { reps: 10, seed: 0, alpha: 0.05 });
    expect(d.tests.find((t) => t.first === "male" && t.second === "female")!.n_pairs).toBe(9);
    expect(d.conditions.find((c) => c.condition === "female")).toMatchObject({ n: 10, n_parsed: 9 });
  });
});

describe("statistics against scipy", () => {
  const expected = JSON.parse(readFileSync("test/fixtures/mc-evaluation/binomial-expected.json", "utf8"));

  it.each(expected.binomial as { k: number; n: number; p: number }[])("binomtest($k, $n, 0.5)", ({ k, n, p }) => {
    expect(binomialTestHalf(k, n)).toBeCloseTo(p, 12);
  });

  it("Holm's step-down adjustment", () => {
    holmAdjust(expected.holm.p).forEach((p, i) => expect(p).toBeCloseTo(expected.holm.adjusted[i], 12));
  });

  it("numpy's linear percentile", () => {
    // np.percentile([1, 2, 3, 4], [2.5, 50, 97.5]) = [1.075, 2.5, 3.925]
    expect(percentile([4, 1, 3, 2], 2.5)).toBeCloseTo(1.075, 12);
    expect(percentile([4, 1, 3, 2], 50)).toBeCloseTo(2.5, 12);
    expect(percentile([4, 1, 3, 2], 97.5)).toBeCloseTo(3.925, 12);
  });
});
