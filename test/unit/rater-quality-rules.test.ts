/**
 * The rater-quality rules (docs/rater-quality.md, "Sampling and wash-out"): the retest sample is seeded and
 * reproducible and has round(fraction × n) items; nothing comes back before the wash-out (cases and days both); the
 * calibration draw fills up to the rate and skips excluded cases; a new item goes among the open ones.
 */
import { describe, expect, it } from "vitest";
import {
  DAY_MS,
  drawCalibration,
  dueRetests,
  placeAmongOpen,
  retestSample,
  targetCount,
  washOutHolds,
} from "../../app/work-items/domain/rater-quality";

const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("retest sample", () => {
  it("takes round(fraction × n) items, the same for the same seed and person, another for another seed", () => {
    expect(targetCount(0.1, 40)).toBe(4);
    expect(targetCount(0.1, 45)).toBe(5); // 4.5 rounds half up
    expect(targetCount(0.1, 44)).toBe(4);
    expect(targetCount(0, 40)).toBe(0);
    const a = retestSample(7, "ann-1", ids(40), 0.1);
    expect(a).toHaveLength(4);
    expect(new Set(a).size).toBe(4);
    expect(retestSample(7, "ann-1", ids(40), 0.1)).toEqual(a);
    expect(retestSample(8, "ann-1", ids(40), 0.1)).not.toEqual(a);
    expect(retestSample(7, "ann-2", ids(40), 0.1)).not.toEqual(a);
    // Order of the input does not matter.
    expect(retestSample(7, "ann-1", ids(40).reverse(), 0.1)).toEqual(a);
  });

  it("respects the fraction over many people (each exactly round(f × n))", () => {
    for (let p = 0; p < 50; p++) {
      const n = 10 + p;
      expect(retestSample(3, `p${p}`, ids(n), 0.15)).toHaveLength(Math.floor(0.15 * n + 0.5));
    }
  });
});

describe("wash-out", () => {
  const first = { itemId: 1, submittedAt: 1_000 };
  const later = (k: number) => Array.from({ length: k }, (_, i) => ({ itemId: 100 + i, submittedAt: 2_000 + i }));

  it("needs N other cases submitted after the first label and D days since it", () => {
    const rule = { items: 3, days: 2 };
    const now = 1_000 + 2 * DAY_MS;
    expect(washOutHolds(rule, first, [first, ...later(2)], now)).toBe(false);
    expect(washOutHolds(rule, first, [first, ...later(3)], now)).toBe(true);
    expect(washOutHolds(rule, first, [first, ...later(3)], now - 1)).toBe(false);
    // Cases submitted before the first label do not count.
    expect(washOutHolds(rule, first, [first, { itemId: 9, submittedAt: 500 }, ...later(2)], now)).toBe(false);
  });

  it("never re-presents a sampled case before its wash-out, and each at most once", () => {
    const assigned = ids(20);
    const sample = retestSample(11, "ann", assigned, 0.2);
    const submissions = assigned.map((id) => ({ itemId: id, submittedAt: id * 1000 }));
    const base = {
      seed: 11,
      person: "ann",
      fraction: 0.2,
      washOut: { items: 5, days: 1 },
      assigned,
      submissions,
      already: new Set<number>(),
    };
    // One day after the last submission: every sampled case but those with fewer than 5 later submissions.
    const now = 20_000 + DAY_MS;
    const due = dueRetests({ ...base, now });
    expect(due.every((id) => sample.includes(id))).toBe(true);
    expect(due.sort()).toEqual(sample.filter((id) => 20 - id >= 5).sort());
    // Not one day yet: nothing.
    expect(dueRetests({ ...base, now: 1000 + DAY_MS - 1 })).toEqual([]);
    // Already re-presented: not again.
    expect(dueRetests({ ...base, now, already: new Set(due) })).toEqual([]);
    // Not submitted: not due.
    expect(dueRetests({ ...base, now, submissions: [] })).toEqual([]);
    // Fraction 0: nothing, ever.
    expect(dueRetests({ ...base, now, fraction: 0 })).toEqual([]);
  });
});

describe("calibration draw and placement", () => {
  it("fills up to round(rate × assigned), skipping given and excluded cases, reproducibly", () => {
    const input = {
      seed: 2,
      person: "ann",
      rate: 0.1,
      assigned: 30,
      pool: ids(10),
      given: new Set<number>(),
      excluded: new Set([3]),
    };
    const d = drawCalibration(input);
    expect(d).toHaveLength(3);
    expect(d).not.toContain(3);
    expect(drawCalibration(input)).toEqual(d);
    expect(drawCalibration({ ...input, given: new Set([d[0]!]) })).toHaveLength(2);
    expect(drawCalibration({ ...input, given: new Set(d) })).toEqual([]);
  });

  it("puts a new item before an open item past the next three, or after the last, never where Next leads", () => {
    const keys = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const k = placeAmongOpen({ seed: 1, person: "p", itemTag: `x${i}`, openKeys: [2, 3, 5, 8, 9], lastKey: 10 });
      keys.add(k > 10 ? "after 10" : k > 8 ? "before 9" : "before 8");
      expect((k > 5 && k < 8) || (k > 8 && k < 9) || (k > 10 && k < 11)).toBe(true);
    }
    expect(keys).toEqual(new Set(["before 8", "before 9", "after 10"]));
    // Counted from the item just submitted: the open items before it (skipped earlier) are not candidates.
    for (let i = 0; i < 100; i++) {
      const k = placeAmongOpen({
        seed: 2,
        person: "p",
        itemTag: `y${i}`,
        openKeys: [1, 4, 5, 6, 6.6, 9],
        lastKey: 12,
        from: 3,
      });
      expect((k > 6 && k < 6.6) || (k > 6.6 && k < 9) || (k > 12 && k < 13)).toBe(true);
    }
    // Three open items or fewer after it: after the last item.
    const last = placeAmongOpen({ seed: 1, person: "p", itemTag: "z", openKeys: [4, 5, 7], lastKey: 7 });
    expect(last > 7 && last < 8).toBe(true);
  });
});
