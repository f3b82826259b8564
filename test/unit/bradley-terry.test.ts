/**
 * The Bradley–Terry fits (app/mentat/domain/bradley-terry.ts) and their optimiser (app/stats/bounded-lbfgs.ts) against
 * independent references:
 * - published: Agresti (2002), Categorical Data Analysis 2nd ed., §10.6, Table 10.11 column 3 — the plain
 *   Bradley–Terry fit of the 1987 American League East results (baseball.csv = BradleyTerry2's data/baseball.csv),
 *   abilities relative to Baltimore 0.68 (Cleveland), 1.11 (Boston), 1.25 (New York), 1.29 (Toronto),
 *   1.44 (Detroit), 1.58 (Milwaukee); BradleyTerry2's tests/testthat/test-baseball.R checks the same rounded values;
 * - scipy: test/fixtures/bradley-terry/reference.py (scipy.optimize.minimize, L-BFGS-B and MENTAT's SLSQP with
 *   sum-to-zero constraints) → expected.json, including bootstrap intervals replayed with random.Random;
 * - synthetic data with known parameters (recovery).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { minimizeBounded } from "../../app/stats/bounded-lbfgs";
import {
  fitBradleyTerry,
  fitHierarchicalBradleyTerry,
  fitPreferenceLabels,
  hbtObjective,
  pairwiseWins,
  percentile,
  softmax,
  sortAnnotationRows,
  winsFromAnnotations,
  type AnnotationRow,
  type PairwiseData,
  type RaterEffects,
} from "../../app/mentat/domain/bradley-terry";
import { PyRandom } from "../../app/python-compat/random";

const FIXTURES = new URL("../fixtures/bradley-terry/", import.meta.url);
const expected = JSON.parse(readFileSync(new URL("expected.json", FIXTURES), "utf8"));

interface ReferenceFit {
  strengths: number[][];
  slopes: number[];
  offsets: number[];
  objective: number;
}

function baseballWins(): { teams: string[]; wins: { winner: number; loser: number; count: number }[] } {
  const teams = ["Baltimore", "Boston", "Cleveland", "Detroit", "Milwaukee", "New York", "Toronto"];
  const lines = readFileSync(new URL("baseball.csv", FIXTURES), "utf8").trim().split("\n").slice(1);
  const wins = lines.flatMap((line) => {
    const [home, away, homeWins, awayWins] = line.split(",");
    return [
      { winner: teams.indexOf(home), loser: teams.indexOf(away), count: Number(homeWins) },
      { winner: teams.indexOf(away), loser: teams.indexOf(home), count: Number(awayWins) },
    ];
  });
  return { teams, wins };
}

describe("minimizeBounded (projected L-BFGS)", () => {
  it("solves a one-dimensional problem with its optimum outside the box", () => {
    const r = minimizeBounded(
      (x, g) => {
        g[0] = 2 * (x[0] - 3);
        return (x[0] - 3) ** 2;
      },
      [0],
      [0],
      [2],
    );
    expect(r.x[0]).toBe(2);
    expect(r.converged).toBe(true);
  });

  it("matches scipy's L-BFGS-B on a bounded 6-dimensional Rosenbrock function (reference.py)", () => {
    const ref = expected.rosenbrock;
    const n = ref.start.length;
    const rosen = (x: Float64Array, g: Float64Array) => {
      let f = 0;
      g.fill(0);
      for (let i = 0; i < n - 1; i++) {
        const a = x[i + 1] - x[i] * x[i];
        const b = 1 - x[i];
        f += 100 * a * a + b * b;
        g[i] += -400 * x[i] * a - 2 * b;
        g[i + 1] += 200 * a;
      }
      return f;
    };
    const r = minimizeBounded(rosen, ref.start, new Array(n).fill(ref.lower), new Array(n).fill(ref.upper), {
      maxIterations: 10_000,
      gradientTolerance: 1e-10,
    });
    expect(r.converged).toBe(true);
    expect(r.value).toBeCloseTo(ref.value, 9);
    Array.from(r.x).forEach((v, i) => expect(v).toBeCloseTo(ref.x[i], 5));
    expect(r.x[0]).toBe(0.8); // the active bound is met exactly
  });

  it("refuses inconsistent bounds", () => {
    expect(() => minimizeBounded(() => 0, [0], [1], [0])).toThrow(RangeError);
  });
});

describe("plain Bradley–Terry", () => {
  it("reproduces Agresti's published abilities for the 1987 AL East (Table 10.11)", () => {
    const { teams, wins } = baseballWins();
    const fit = fitBradleyTerry(teams.length, wins);
    expect(fit.converged).toBe(true);
    const relative = Object.fromEntries(teams.map((t, i) => [t, fit.strengths[i] - fit.strengths[0]]));
    // Agresti (2002) Table 10.11, column 3, to the two decimals published.
    const published = {
      Milwaukee: 1.58,
      Detroit: 1.44,
      Toronto: 1.29,
      "New York": 1.25,
      Boston: 1.11,
      Cleveland: 0.68,
    };
    for (const [team, value] of Object.entries(published)) expect(relative[team]).toBeCloseTo(value, 2);
    // And scipy's maximum-likelihood fit of the same data to many digits.
    expected.baseball.relativeToBaltimore.forEach((v: number, i: number) =>
      expect(fit.strengths[i] - fit.strengths[0]).toBeCloseTo(v, 6),
    );
    expect(fit.strengths.reduce((s, v) => s + v, 0)).toBeCloseTo(0, 12);
  });

  it("has the closed form ±log(w/l)/2 for two items", () => {
    const fit = fitBradleyTerry(2, [
      { winner: 0, loser: 1, count: 3 },
      { winner: 1, loser: 0, count: 1 },
    ]);
    expect(fit.strengths[0]).toBeCloseTo(Math.log(3) / 2, 8);
  });

  it("refuses data where the maximum does not exist, unless a ridge is given", () => {
    const wins = [{ winner: 0, loser: 1, count: 2 }];
    expect(() => fitBradleyTerry(2, wins)).toThrow(/never (wins|loses)/);
    expect(fitBradleyTerry(2, wins, { strengthPenalty: 0.1 }).strengths[0]).toBeGreaterThan(0);
  });
});

describe("pairwise wins and helpers", () => {
  it("gives i over j when i's score is higher, and nothing for ties", () => {
    expect(pairwiseWins([80, 20, 80])).toEqual([
      [0, 1],
      [2, 1],
    ]);
    expect(pairwiseWins([50, 50, 50, 50, 50])).toEqual([]);
  });

  it("aggregates wins per question, rater and ordered pair", () => {
    const data = winsFromAnnotations(
      [
        { question: "q1", rater: "a", scores: [3, 1] },
        { question: "q1", rater: "a", scores: [5, 2] },
        { question: "q1", rater: "b", scores: [1, 3] },
      ],
      ["q1"],
      ["a", "b"],
      2,
    );
    expect(data.wins).toEqual([
      { question: 0, rater: 0, winner: 0, loser: 1, count: 2 },
      { question: 0, rater: 1, winner: 1, loser: 0, count: 1 },
    ]);
  });

  it("computes numpy's linear percentiles and a stable softmax", () => {
    expect(percentile([1, 2, 3, 4], 25)).toBeCloseTo(1.75, 12); // np.percentile([1,2,3,4], 25)
    expect(percentile([1, 2, 3, 4], 97.5)).toBeCloseTo(3.925, 12);
    expect(softmax([1000, 1000])).toEqual([0.5, 0.5]);
    expect(softmax([0, Math.log(3)])[1]).toBeCloseTo(0.75, 12);
  });

  it("has an analytic gradient equal to finite differences", () => {
    const rows = expected.hierarchical[0].rows as AnnotationRow[];
    const { questions, raters } = expected.hierarchical[0];
    const data = winsFromAnnotations(rows, questions, raters, 5);
    const f = hbtObjective(data);
    const n = questions.length * 5 + 2 * raters.length;
    const rng = new PyRandom(3);
    const x = Float64Array.from({ length: n }, (_, i) =>
      i < questions.length * 5 ? rng.random() - 0.5 : 0.9 + 0.2 * rng.random(),
    );
    const g = new Float64Array(n);
    f(x, g);
    const scratch = new Float64Array(n);
    for (const i of [0, 7, questions.length * 5, n - 1]) {
      const h = 1e-6;
      const up = Float64Array.from(x);
      up[i] += h;
      const down = Float64Array.from(x);
      down[i] -= h;
      expect(g[i]).toBeCloseTo((f(up, scratch) - f(down, scratch)) / (2 * h), 5);
    }
  });
});

describe("hierarchical Bradley–Terry against scipy (reference.py → expected.json)", () => {
  for (const c of expected.hierarchical as {
    name: string;
    raterEffects: RaterEffects;
    penalty: number;
    strengthPenalty: number;
    questions: string[];
    raters: string[];
    rows: AnnotationRow[];
    lbfgsb: ReferenceFit;
    slsqp?: ReferenceFit;
    bootstrap?: { replicates: number; seed: number; lower: number[][]; upper: number[][] };
  }[]) {
    it(`${c.name} (${c.raterEffects}): same optimum as scipy`, () => {
      const data = winsFromAnnotations(sortAnnotationRows(c.rows), c.questions, c.raters, 5);
      const fit = fitHierarchicalBradleyTerry(data, {
        raterEffects: c.raterEffects,
        penalty: c.penalty,
        strengthPenalty: c.strengthPenalty,
        // reference.py fits with MENTAT's first bounds (docs/mentat.md, "Versions of MENTAT's fit").
        slopeBounds: [0.8, 1.25],
      });
      expect(fit.converged).toBe(true);
      for (const ref of [c.lbfgsb, c.slsqp].filter(Boolean) as ReferenceFit[]) {
        expect(Math.abs(fit.objective - ref.objective)).toBeLessThan(1e-8 * ref.objective);
        fit.strengths.forEach((row, q) => row.forEach((v, i) => expect(v).toBeCloseTo(ref.strengths[q][i], 4)));
        fit.slopes.forEach((v, r) => expect(v).toBeCloseTo(ref.slopes[r], 4));
        fit.offsets.forEach((v, r) => expect(v).toBeCloseTo(ref.offsets[r], 4));
      }
      fit.strengths.forEach((row) => expect(row.reduce((s, v) => s + v, 0)).toBeCloseTo(0, 12));
      fit.slopes.forEach((s) => expect(s >= 0.8 && s <= 1.25).toBe(true));
      fit.offsets.forEach((o) => expect(o >= -3 && o <= 3).toBe(true));
    });
    if (c.bootstrap) {
      const boot = c.bootstrap;
      it(`${c.name}: bootstrap intervals replay Python's random.Random(${boot.seed}) resampling`, () => {
        const labels = fitPreferenceLabels(c.rows, 5, {
          fitVersion: "2025-01-19",
          penalty: c.penalty,
          bootstrap: boot.replicates,
          seed: boot.seed,
          strengthPenalty: c.strengthPenalty,
        });
        expect(labels.questions.map((q) => q.question)).toEqual(c.questions);
        labels.questions.forEach((q, qi) => {
          q.lower.forEach((v, i) => expect(v).toBeCloseTo(boot.lower[qi][i], 5));
          q.upper.forEach((v, i) => expect(v).toBeCloseTo(boot.upper[qi][i], 5));
          q.labels.forEach((p, i) => expect(p >= q.lower[i] - 0.05 && p <= q.upper[i] + 0.05).toBe(true));
          expect(q.labels.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 12);
        });
      });
    }
  }

  it("gives the same labels whatever the order of the annotation rows", () => {
    const rows = expected.hierarchical[1].rows as AnnotationRow[];
    const a = fitPreferenceLabels(rows, 5, { bootstrap: 5, seed: 1 });
    const b = fitPreferenceLabels([...rows].reverse(), 5, { bootstrap: 5, seed: 1 });
    expect(b).toEqual(a);
  });
});

/** Rankings from latent utilities slope·β + standard Gumbel noise: their pairwise marginals are exactly σ(slope·Δβ). */
function synthetic(seed: number, nQuestions: number, slopes: number[], perRater: number) {
  const rng = new PyRandom(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rng.random())) * Math.cos(2 * Math.PI * rng.random());
  const beta = Array.from({ length: nQuestions }, () => {
    const b = Array.from({ length: 5 }, gauss);
    const mean = b.reduce((s, v) => s + v, 0) / 5;
    return b.map((v) => v - mean);
  });
  const rows: AnnotationRow[] = [];
  beta.forEach((b, q) =>
    slopes.forEach((s, r) => {
      for (let t = 0; t < perRater; t++)
        rows.push({
          question: `q${String(q).padStart(2, "0")}`,
          rater: `r${r}`,
          scores: b.map((v) => s * v - Math.log(-Math.log(1 - rng.random()))),
        });
    }),
  );
  return { beta, rows };
}

const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;

describe("hierarchical Bradley–Terry: recovery of known parameters", () => {
  const slopes = [0.85, 0.95, 1.0, 1.05, 1.15, 1.2];

  it("recovers strengths and slopes exactly from noise-free (expected) win counts", () => {
    // E[wins of i over j by r] = N·σ(s_r(β_i − β_j)). The data fix s_r·β, so compare what is identified: the
    // slopes relative to their mean and the strengths times the mean slope. The slope penalty shrinks slopes
    // towards each other by O(penalty / N): weak here, so the recovery is exact to 4 digits.
    const { beta } = synthetic(5, 8, slopes, 0);
    const N = 100;
    const wins: PairwiseData["wins"][number][] = [];
    beta.forEach((b, q) =>
      slopes.forEach((s, r) => {
        for (let i = 0; i < 5; i++)
          for (let j = 0; j < 5; j++)
            if (i !== j)
              wins.push({ question: q, rater: r, winner: i, loser: j, count: N / (1 + Math.exp(-s * (b[i] - b[j]))) });
      }),
    );
    const fit = fitHierarchicalBradleyTerry(
      { nQuestions: beta.length, nOptions: 5, nRaters: slopes.length, wins },
      { raterEffects: "slope", penalty: 0.01, strengthPenalty: 0, slopeBounds: [0.5, 2] },
    );
    expect(fit.converged).toBe(true);
    const scale = mean(fit.slopes) / mean(slopes);
    fit.slopes.forEach((s, r) => expect(s / mean(fit.slopes)).toBeCloseTo(slopes[r] / mean(slopes), 4));
    fit.strengths.forEach((row, q) => row.forEach((v, i) => expect(v * scale).toBeCloseTo(beta[q][i], 4)));
  });

  // 360 rankings per question: a strength's standard error is about 0.12, so 0.5 is ~4 SE for the largest of 100.
  it("recovers strengths, relative slopes and labels from sampled ratings within sampling error", () => {
    const { beta, rows } = synthetic(99, 20, slopes, 60);
    const labels = fitPreferenceLabels(rows, 5, { raterEffects: "slope", bootstrap: 0 });
    const fitted = labels.raters.map((r) => r.slope);
    const scale = mean(fitted) / mean(slopes);
    labels.raters.forEach((r, i) =>
      expect(Math.abs(r.slope / mean(fitted) - slopes[i] / mean(slopes))).toBeLessThan(0.06),
    );
    labels.questions.forEach((q, qi) => {
      q.strengths.forEach((v, i) => expect(Math.abs(v * scale - beta[qi][i])).toBeLessThan(0.5));
      const truth = softmax(beta[qi]);
      q.labels.forEach((p, i) => expect(Math.abs(p - truth[i])).toBeLessThan(0.06));
    });
  });

  it("with offsets (MENTAT's default), keeps the option order but offsets only balance the penalty", () => {
    const { beta, rows } = synthetic(99, 20, slopes, 60);
    const labels = fitPreferenceLabels(rows, 5, { bootstrap: 0 });
    let sameTop = 0;
    labels.questions.forEach((q, qi) => {
      const truth = softmax(beta[qi]);
      if (q.labels.indexOf(Math.max(...q.labels)) === truth.indexOf(Math.max(...truth))) sameTop++;
    });
    expect(sameTop).toBeGreaterThanOrEqual(18);
    // Nothing in a wins-only likelihood pulls an offset down: with ~600 comparisons per rater every offset sits at
    // its upper bound, whatever the rater's behaviour (see the module comment).
    labels.raters.forEach((r) => expect(r.offset).toBe(3));
  });

  it("keeps strengths finite and centred under complete separation (the ridge)", () => {
    const c = expected.hierarchical.find((h: { name: string }) => h.name === "separation");
    const labels = fitPreferenceLabels(c.rows, 5, { bootstrap: 0, strengthPenalty: 0.01 });
    const q1 = labels.questions[0];
    expect(q1.labels[0]).toBeGreaterThan(0.9);
    expect(Math.max(...q1.strengths)).toBeLessThan(10);
  });
});
