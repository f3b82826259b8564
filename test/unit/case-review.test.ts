/**
 * Generated-case review (app/case-review/domain/case-review.ts): the case file's whole-file validation, the submission rules
 * (three scores for a case; a decision, with a reason on reject, for a seed), and the report — means, SDs and
 * distributions per dimension and per expert, agreement from the validated stats module, seed outcomes.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkReview, parseReviewCsv, reviewReport, type ReviewRow } from "../../app/case-review/domain/case-review";
import { buildRatingTable, cohenWeightedKappa, gwetAc2, krippendorffAlpha } from "../../app/stats/index";

const CASES = readFileSync(new URL("../fixtures/expert-ratings/cases.csv", import.meta.url), "utf8");

describe("parseReviewCsv", () => {
  it("warns about cells past the header (an undoubled quote splits a quoted cell) instead of dropping them silently", () => {
    const r = parseReviewCsv('id,kind,text\nc1,case,"he said "no", then left"\nc2,case,fine,\n');
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([
      {
        line: 2,
        message: `1 cell(s) beyond the header ignored; if a cell holds a quote, double it ("") inside a quoted cell.`,
      },
    ]);
  });

  it("reads seeds and cases with their MentalBench metadata", () => {
    const r = parseReviewCsv(CASES);
    expect(r.errors).toEqual([]);
    expect(r.items.map((i) => [i.externalId, i.kind, i.caseType, i.seedId])).toEqual([
      ["s01", "seed", "I", ""],
      ["s02", "seed", "III", ""],
      ["c01", "case", "I", "s01"],
      ["c02", "case", "II", "s01"],
      ["c03", "case", "III", "s02"],
    ]);
  });

  it("validates the whole file with line numbers", () => {
    const r = parseReviewCsv("id,kind,case_type,text\nc1,case,2,Fine\nc1,other,V,\n,seed,,Text\nc4,case,,x\n");
    expect(r.items).toEqual([]);
    expect(r.errors).toEqual([
      { line: 3, message: 'the id "c1" is already used on line 2.' },
      { line: 3, message: 'the kind "other" must be "case" or "seed".' },
      { line: 3, message: "the text is empty." },
      { line: 3, message: 'the case_type "V" must be I, II, III, IV (or 1–4).' },
      { line: 4, message: "the id is empty." },
    ]);
    expect(parseReviewCsv("id,body\nc1,x\n").errors[0]).toEqual({
      line: 1,
      message:
        'missing column "text". A case file needs id and text; kind, case_type, diagnosis and seed_id are optional.',
    });
  });

  it("warns about a seed_id that is not in the file", () => {
    const r = parseReviewCsv("id,seed_id,text\nc1,s9,x\n");
    expect(r.warnings).toEqual([{ line: 2, message: 'seed_id "s9" is not a case of this file (kept as given).' }]);
  });
});

describe("checkReview", () => {
  const empty = { naturalness: null, validity: null, realism: null, decision: null, reason: "" } as const;
  it("needs three scores 1–5 for a case", () => {
    expect(checkReview("case", { ...empty, naturalness: 5, validity: 4 })).toEqual({
      realism: "Choose a score from 1 to 5.",
    });
    expect(checkReview("case", { ...empty, naturalness: 5, validity: 4, realism: 6 as 5 })).toEqual({
      realism: "Choose a score from 1 to 5.",
    });
    expect(checkReview("case", { ...empty, naturalness: 5, validity: 4, realism: 1 })).toEqual({});
  });
  it("needs a decision for a seed and a reason when rejecting", () => {
    expect(checkReview("seed", empty)).toEqual({ decision: "Accept or reject the seed." });
    expect(checkReview("seed", { ...empty, decision: "reject", reason: "  " })).toEqual({
      reason: "Say why the seed is rejected.",
    });
    expect(checkReview("seed", { ...empty, decision: "reject", reason: "Duration criterion not met" })).toEqual({});
    expect(checkReview("seed", { ...empty, decision: "accept" })).toEqual({});
  });
});

const row = (item: string, rater: string, n: number | null, v: number | null, r: number | null): ReviewRow => ({
  item,
  rater,
  naturalness: n,
  validity: v,
  realism: r,
  decision: null,
  reason: "",
});
const seed = (item: string, rater: string, decision: "accept" | "reject", reason = ""): ReviewRow => ({
  item,
  rater,
  naturalness: null,
  validity: null,
  realism: null,
  decision,
  reason,
});

describe("reviewReport", () => {
  const items = [
    { id: "c1", kind: "case" as const },
    { id: "c2", kind: "case" as const },
    { id: "c3", kind: "case" as const },
    { id: "c4", kind: "case" as const },
    { id: "s1", kind: "seed" as const },
    { id: "s2", kind: "seed" as const },
    { id: "s3", kind: "seed" as const },
  ];
  const reviews = [
    row("c1", "kim", 5, 4, 5),
    row("c2", "kim", 4, 4, 5),
    row("c3", "kim", 5, 3, 4),
    row("c4", "kim", 3, 2, 4),
    row("c1", "lee", 5, 5, 5),
    row("c2", "lee", 4, 4, 4),
    row("c3", "lee", 4, 3, 4),
    row("c4", "lee", 3, 3, 5),
    seed("s1", "kim", "accept"),
    seed("s1", "lee", "accept"),
    seed("s2", "kim", "accept"),
    seed("s2", "lee", "reject", "The episode lasts ten days; DSM-5 needs two weeks."),
  ];
  const report = reviewReport(items, reviews);

  it("gives mean, SD and the 1–5 distribution per dimension and per expert", () => {
    const nat = report.dimensions.find((d) => d.dimension === "naturalness")!;
    expect(nat.n).toBe(8);
    expect(nat.mean).toBeCloseTo(33 / 8, 12);
    expect(nat.distribution).toEqual([0, 0, 2, 3, 3]);
    expect(nat.perExpert).toEqual([
      { rater: "kim", n: 4, mean: 4.25, sd: expect.any(Number), distribution: [0, 0, 1, 1, 2] },
      { rater: "lee", n: 4, mean: 4, sd: expect.any(Number), distribution: [0, 0, 1, 2, 1] },
    ]);
    // Sample SD of the eight naturalness scores.
    const values = [5, 4, 5, 3, 5, 4, 4, 3];
    const mean = values.reduce((s, v) => s + v, 0) / 8;
    expect(nat.sd).toBeCloseTo(Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / 7), 12);
  });

  it("reports agreement per dimension as the stats module computes it on the 1–5 scale", () => {
    for (const d of report.dimensions) {
      const table = buildRatingTable(
        reviews
          .filter((r) => r[d.dimension] !== null)
          .map((r) => ({ item: r.item, rater: r.rater, label: String(r[d.dimension]) })),
        { categories: ["1", "2", "3", "4", "5"] },
      );
      expect(d.agreement.krippendorffAlphaOrdinal).toBe(krippendorffAlpha(table, "ordinal").value);
      expect(d.agreement.gwetAc2.value).toBe(gwetAc2(table, "quadratic").value);
      expect(d.agreement.cohenWeightedKappa).toBe(cohenWeightedKappa(table, "quadratic").value);
      expect(d.agreement.nItems).toBe(4);
      expect(d.agreement.nRaters).toBe(2);
    }
    expect(reviewReport(items, reviews, { weights: "linear" }).dimensions[0]!.agreement.gwetAc2.value).not.toBe(
      report.dimensions[0]!.agreement.gwetAc2.value,
    );
  });

  it("gives α = 1 when the experts agree exactly, and no kappa with three experts", () => {
    const same = ["a", "b", "c"].flatMap((r) => [row("c1", r, 5, 5, 5), row("c2", r, 2, 3, 4), row("c3", r, 4, 4, 1)]);
    const r = reviewReport(items.slice(0, 3), same);
    expect(r.dimensions.every((d) => d.agreement.krippendorffAlphaOrdinal === 1)).toBe(true);
    expect(r.dimensions[0]!.agreement.cohenWeightedKappa).toBeNull();
    expect(r.dimensions[0]!.agreement.reasons.join(" ")).toMatch(/exactly two raters/);
  });

  it("accepts a seed only when every expert who reviewed it accepted it, and lists reasons", () => {
    expect(report.seeds).toEqual([
      { id: "s1", accepts: 2, rejects: 0, status: "accepted", reasons: [] },
      {
        id: "s2",
        accepts: 1,
        rejects: 1,
        status: "rejected",
        reasons: [{ rater: "lee", reason: "The episode lasts ten days; DSM-5 needs two weeks." }],
      },
      { id: "s3", accepts: 0, rejects: 0, status: "pending", reasons: [] },
    ]);
    expect(report.acceptedSeeds).toEqual(["s1"]);
    expect(report.seedAgreement.nItems).toBe(2);
    expect(report.seedAgreement.percentAgreement).toBe(0.5);
    expect(report.experts).toEqual([
      { rater: "kim", cases: 4, seeds: 2 },
      { rater: "lee", cases: 4, seeds: 2 },
    ]);
  });

  it("says why agreement is missing when nothing has been reviewed", () => {
    const r = reviewReport(items, []);
    expect(r.dimensions[0]!.mean).toBeNull();
    expect(r.dimensions[0]!.agreement.reasons).toEqual(["no case has been reviewed yet"]);
    expect(r.acceptedSeeds).toEqual([]);
  });
});
