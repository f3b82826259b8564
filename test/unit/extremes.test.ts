/**
 * maxOf / minOf / pushAll (app/stats/extremes.ts): Math.max, Math.min and push's answers, on lists far past the
 * number of arguments a spread can pass.
 */
import { describe, expect, it } from "vitest";
import { maxOf, minOf, pushAll } from "~/stats/extremes";

describe("extremes", () => {
  it("answer as Math.max / Math.min on small lists, NaN and empty included", () => {
    for (const list of [[1], [3, -2, 7], [-5, -1], [0, NaN, 4], [Infinity, 2], []]) {
      expect(maxOf(list)).toBe(Math.max(...list));
      expect(minOf(list)).toBe(Math.min(...list));
    }
    expect(maxOf([], 0)).toBe(0);
    expect(minOf(new Set([4, 2, 9]).values())).toBe(2);
  });

  it("take 1,000,000 values, where a spread throws RangeError", () => {
    const big = Array.from({ length: 1_000_000 }, (_, i) => (i * 7919) % 1_000_003);
    expect(() => Math.max(...big)).toThrow(RangeError);
    expect(maxOf(big)).toBe(big.reduce((a, b) => (a > b ? a : b)));
    expect(minOf(big)).toBe(0);
    const target = [1];
    expect(() => [].push(...(big as never[]))).toThrow(RangeError);
    pushAll(target, big);
    expect(target.length).toBe(1_000_001);
    expect(target[1_000_000]).toBe(big[999_999]);
  });
});
