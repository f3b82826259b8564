/**
 * Student's t quantile and distribution function, and the incomplete beta function under them, against scipy
 * 1.17 (scipy.stats.t.ppf / t.cdf / beta.cdf), computed by test/fixtures/stats/reference.py into reference.json.
 */
import { describe, expect, it } from "vitest";
import { logGamma, regularizedIncompleteBeta, studentTCdf, studentTQuantile } from "../../app/stats/index";
import reference from "../fixtures/stats/reference.json";

const { quantiles, cdf, incomplete_beta: beta } = reference.student_t;

function expectRelative(actual: number, expected: number, tolerance: number) {
  if (expected === 0) expect(Math.abs(actual)).toBeLessThan(1e-300);
  else expect(Math.abs(actual - expected) / Math.abs(expected)).toBeLessThan(tolerance);
}

describe("studentTQuantile", () => {
  it.each(quantiles)("p = $p, df = $df matches scipy t.ppf ($t)", ({ p, df, t }) => {
    expectRelative(studentTQuantile(p, df), t, 1e-10);
  });
  it("gives the tabulated two-sided 5% critical values (t.975: 12.706 at 1 df, 2.228 at 10, 1.960 at ∞)", () => {
    expect(studentTQuantile(0.975, 1)).toBeCloseTo(12.706, 3);
    expect(studentTQuantile(0.975, 10)).toBeCloseTo(2.228, 3);
    expect(studentTQuantile(0.975, 1e7)).toBeCloseTo(1.96, 3);
  });
  it("rejects p outside (0, 1) and non-positive degrees of freedom", () => {
    expect(() => studentTQuantile(1, 5)).toThrow(RangeError);
    expect(() => studentTQuantile(0, 5)).toThrow(RangeError);
    expect(() => studentTQuantile(0.5, 0)).toThrow(RangeError);
    expect(() => studentTQuantile(Number.NaN, 3)).toThrow(RangeError);
  });
});

describe("studentTCdf", () => {
  it.each(cdf)("t = $t, df = $df matches scipy t.cdf ($p)", ({ t, df, p }) => {
    expectRelative(studentTCdf(t, df), p, 1e-10);
  });
  it("is the inverse of the quantile", () => {
    for (const df of [1, 3, 29, 500]) {
      for (const p of [0.01, 0.3, 0.8, 0.999]) expect(studentTCdf(studentTQuantile(p, df), df)).toBeCloseTo(p, 12);
    }
  });
});

describe("regularizedIncompleteBeta", () => {
  it.each(beta)("I_$x($a, $b) matches scipy beta.cdf ($value)", ({ x, a, b, value }) => {
    expectRelative(regularizedIncompleteBeta(x, a, b), value, 1e-10);
  });
  it("is 0 at x = 0 and 1 at x = 1", () => {
    expect(regularizedIncompleteBeta(0, 2, 3)).toBe(0);
    expect(regularizedIncompleteBeta(1, 2, 3)).toBe(1);
  });
});

describe("logGamma", () => {
  it("matches ln Γ at known points: Γ(1) = Γ(2) = 1, Γ(1/2) = √π, Γ(10) = 9!", () => {
    expect(logGamma(1)).toBeCloseTo(0, 14);
    expect(logGamma(2)).toBeCloseTo(0, 14);
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 14);
    expect(logGamma(10)).toBeCloseTo(Math.log(362880), 12);
  });
});
