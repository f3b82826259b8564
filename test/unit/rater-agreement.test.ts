/**
 * Agreement per pair and over time (docs/statistics.md, "Agreement per pair and over time"), against values computed
 * independently: test/fixtures/study-report/rater_agreement.py writes two small studies (four annotators with one
 * pair sharing no case and one pair using a single code; two annotators) and every percent agreement, Cohen's κ and
 * Gwet's AC1 with its SE and 95% CI, per pair, per ISO week and per batch, from the formulas written out with numpy
 * and scipy's t quantile → rater-agreement.json.
 */
import { describe, expect, it } from "vitest";
import { buildRaterAgreement, DEFAULT_BATCH_SIZE, isoWeekOf } from "../../app/study-report/domain/rater-agreement";
import { COEFFICIENTS, expectMeasure, raterFixture as fixture, recordsOf } from "../support/rater-agreement";

describe.each(["four", "two"] as const)("the %s-annotator study against rater_agreement.py", (name) => {
  const d = fixture[name];
  const report = buildRaterAgreement(recordsOf(d), { batchSize: d.batch_size });

  it("gives every pair of annotators, oriented by username, with n, κ, AC1 and % and their intervals", () => {
    expect(report.annotators).toEqual(d.expected.annotators);
    expect(report.pairwise.pairs.map((p) => p.annotators)).toEqual(d.expected.pairs.map((p) => p.annotators));
    report.pairwise.pairs.forEach((p, i) => {
      expectMeasure(p.sufficiency, d.expected.pairs[i]!.sufficiency, `pairwise.pairs.${i}.sufficiency`, report.reasons);
      expectMeasure(p.diagnosis, d.expected.pairs[i]!.diagnosis, `pairwise.pairs.${i}.diagnosis`, report.reasons);
    });
  });

  it("buckets the cases by the ISO week of the later submission, empty weeks included", () => {
    expect(report.over_time.by_week.map((w) => [w.week, w.start, w.n_cases])).toEqual(
      d.expected.by_week.map((w) => [w.week, w.start, w.n_cases]),
    );
    report.over_time.by_week.forEach((w, i) => {
      const want = d.expected.by_week[i]!;
      expectMeasure(w.sufficiency, want.sufficiency, `over_time.by_week.${i}.sufficiency`, report.reasons);
      expectMeasure(w.diagnosis, want.diagnosis, `over_time.by_week.${i}.diagnosis`, report.reasons);
    });
  });

  it("buckets the cases in batches of k consecutive cases by completion time, ties by case", () => {
    expect(report.over_time.batch_size).toBe(d.batch_size);
    expect(report.over_time.by_batch.map((b) => [b.batch, b.first, b.last, b.from, b.to, b.n_cases])).toEqual(
      d.expected.by_batch.map((b) => [b.batch, b.first, b.last, b.from, b.to, b.n_cases]),
    );
    report.over_time.by_batch.forEach((b, i) => {
      const want = d.expected.by_batch[i]!;
      expectMeasure(b.sufficiency, want.sufficiency, `over_time.by_batch.${i}.sufficiency`, report.reasons);
      expectMeasure(b.diagnosis, want.diagnosis, `over_time.by_batch.${i}.diagnosis`, report.reasons);
    });
  });
});

describe("edge cases", () => {
  const four = buildRaterAgreement(recordsOf(fixture.four), { batchSize: fixture.four.batch_size });

  it("gives a pair that shares no case n 0 and null values with the reason", () => {
    const i = four.pairwise.pairs.findIndex((p) => p.annotators.join() === "ana,dev");
    const pair = four.pairwise.pairs[i]!;
    expect([pair.sufficiency.n, pair.diagnosis.n]).toEqual([0, 0]);
    for (const k of COEFFICIENTS) {
      expect(pair.sufficiency[k].value).toBeNull();
      expect(four.reasons[`pairwise.pairs.${i}.sufficiency.${k}`]).toMatch(/share no case/);
    }
  });

  it("gives null for one category only, as the pooled report does: κ and the diagnosis AC1", () => {
    const i = four.pairwise.pairs.findIndex((p) => p.annotators.join() === "ben,cleo");
    const pair = four.pairwise.pairs[i]!;
    expect(pair.sufficiency.cohen_kappa.value).toBeNull();
    expect(four.reasons[`pairwise.pairs.${i}.sufficiency.cohen_kappa`]).toMatch(/single category/);
    // Both sufficiency categories always count, so AC1 is defined (1) when every note was called sufficient.
    expect(pair.sufficiency.gwet_ac1.value).toBe(1);
    expect(pair.diagnosis.gwet_ac1.value).toBeNull();
    expect(four.reasons[`pairwise.pairs.${i}.diagnosis.gwet_ac1`]).toMatch(/at least two categories/);
  });

  it("withholds the pooled Cohen's κ of a bucket when more than two annotators share the cases", () => {
    expect(four.rule).toBe("pair_order");
    expect(four.over_time.by_week.every((w) => w.sufficiency.cohen_kappa.value === null)).toBe(true);
    expect(four.reasons["over_time.by_week.0.sufficiency.cohen_kappa"]).toMatch(/more than two annotators/);
    const two = buildRaterAgreement(recordsOf(fixture.two), { batchSize: 5 });
    expect(two.rule).toBe("rater_identity");
    expect(two.over_time.by_week[0]!.sufficiency.cohen_kappa.value).not.toBeNull();
  });

  it("numbers weeks as ISO 8601 does, in UTC, across year ends", () => {
    const week = (iso: string) => isoWeekOf(Date.parse(iso));
    expect(week("2024-12-29T23:59:59.999Z").week).toBe("2024-W52");
    expect(week("2024-12-30T00:00:00Z")).toEqual({ week: "2025-W01", start: Date.parse("2024-12-30T00:00:00Z") });
    expect(week("2021-01-03T12:00:00Z").week).toBe("2020-W53");
    expect(week("2021-01-04T00:00:00Z").week).toBe("2021-W01");
    expect(week("2026-01-01T00:00:00Z").week).toBe("2026-W01");
    expect(week("2027-01-01T00:00:00Z").week).toBe("2026-W53");
    // A time zone east of UTC would put this in the next week; the rule is UTC.
    expect(week("2025-01-05T23:30:00Z").week).toBe("2025-W01");
  });

  it("leaves cases without a completion time out of the buckets, counted, and keeps them in the pairs", () => {
    const records = recordsOf(fixture.two).map((r, i) => (i < 3 ? { ...r, completedAt: null } : r));
    const report = buildRaterAgreement(records, { batchSize: 5 });
    expect(report.over_time).toMatchObject({ n_cases: 11, n_untimed: 3 });
    expect(report.over_time.by_batch.map((b) => b.n_cases)).toEqual([5, 5, 1]);
    expect(report.pairwise.pairs[0]!.sufficiency.n).toBe(14);
  });

  it("has a default batch size and refuses one that could never have an interval", () => {
    expect(buildRaterAgreement(recordsOf(fixture.two)).over_time.batch_size).toBe(DEFAULT_BATCH_SIZE);
    expect(() => buildRaterAgreement([], { batchSize: 1 })).toThrow(RangeError);
    expect(() => buildRaterAgreement([], { batchSize: 2.5 })).toThrow(RangeError);
    const empty = buildRaterAgreement([]);
    expect(empty.pairwise.pairs).toEqual([]);
    expect(empty.over_time).toMatchObject({ n_cases: 0, by_week: [], by_batch: [] });
  });
});
