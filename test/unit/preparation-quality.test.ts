/**
 * The quality check's pure rules (docs/preparation.md, "Quality"): the preservation check of test names and scores
 * (exact string matching, *Safe-Psych* appendix 8.1) and a note's verdict with its reason.
 */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_PRESERVED_TESTS,
  DEFAULT_QUALITY,
  noteQuality,
  preservationMismatches,
  testMentions,
  testNameProblem,
} from "~/preparation/domain/quality";
import { sentenceBleu } from "~/stats/mt-metrics";

const TESTS = DEFAULT_PRESERVED_TESTS;

describe("test mentions", () => {
  it("finds each listed name as written, with the score that follows it", () => {
    const text = "Scor MMSE de 22/30; MADRS 28 puncte, HAM-D score of 18. PANSS: 87,5 total. IQ normal.";
    expect(testMentions(text, TESTS).map((m) => [m.test, m.score])).toEqual([
      ["MMSE", "22"],
      ["MADRS", "28"],
      ["HAM-D", "18"],
      ["PANSS", "87.5"],
      ["IQ", ""],
    ]);
  });

  it("matches whole names only, in the list's case, and not inside a longer listed name", () => {
    expect(testMentions("UNIQUE mmse GDS-15 3", TESTS).map((m) => [m.test, m.score])).toEqual([["GDS", "15"]]);
    expect(testMentions("BDI-II 25", ["BDI", "BDI-II"]).map((m) => [m.test, m.score])).toEqual([["BDI-II", "25"]]);
    expect(testMentions("SCL-90 120", TESTS).map((m) => [m.test, m.score])).toEqual([["SCL-90", "120"]]);
  });

  it("takes no score across the end of a clause or another test's name", () => {
    expect(testMentions("MMSE normal. Vârsta 45", TESTS)[0]!.score).toBe("");
    expect(testMentions("MMSE și MADRS 20", TESTS).map((m) => [m.test, m.score])).toEqual([
      ["MMSE", ""],
      ["MADRS", "20"],
    ]);
  });
});

describe("the preservation check", () => {
  it("finds nothing when names and scores are kept, whatever the wording around them", () => {
    expect(
      preservationMismatches(0, "Scor MMSE de 22/30, MADRS 28.", "MMSE a fost 22 din 30; scorul MADRS 28.", TESTS),
    ).toEqual([]);
  });

  it("reports a missing score with the source's score, a missing name with an empty score", () => {
    expect(
      preservationMismatches(
        2,
        "MMSE 22, MADRS 28; YMRS evaluat.",
        "MMSE 23, MADRS 28; scala de manie evaluată.",
        TESTS,
      ),
    ).toEqual([
      { section: 2, test: "MMSE", score: "22" },
      { section: 2, test: "YMRS", score: "" },
    ]);
  });

  it("counts repeated mentions, and ignores names the back-translation adds", () => {
    expect(
      preservationMismatches(
        0,
        "MMSE 22 la internare, MMSE 25 la externare.",
        "MMSE 25 la externare. MADRS 10.",
        TESTS,
      ),
    ).toEqual([{ section: 0, test: "MMSE", score: "22" }]);
  });

  it("uses the project's own list", () => {
    expect(preservationMismatches(0, "scl 90 de 120", "", ["scl 90"])).toEqual([
      { section: 0, test: "scl 90", score: "120" },
    ]);
    expect(preservationMismatches(0, "scl 90 de 120", "", TESTS)).toEqual([]);
    expect(testNameProblem(" MMSE")).toMatch(/spaces/);
    expect(testNameProblem("MMSE")).toBeNull();
  });
});

describe("a note's verdict", () => {
  const good = { source: "Pacientul prezintă insomnie și anxietate de două săptămâni.", comet: null };
  it("passes a faithful back-translation", () => {
    const q = noteQuality([{ section: 0, backTranslation: good.source, ...good }], DEFAULT_QUALITY);
    expect(q.bleu).toBeCloseTo(100, 9);
    expect(q.needsCorrection).toBe(false);
    expect(q.reason).toBe("");
  });

  it("says which threshold failed and which score went missing, in that order", () => {
    const q = noteQuality(
      [
        { section: 1, source: "MMSE 22/30, cooperant.", backTranslation: "Cooperant, fără scor.", comet: 0.7 },
        { section: 0, source: good.source, backTranslation: "Insomnie.", comet: 0.9 },
      ],
      { ...DEFAULT_QUALITY, minComet: 0.85 },
    );
    expect(q.sections.map((s) => s.section)).toEqual([0, 1]);
    expect(q.sections[0]!.bleu).toBe(sentenceBleu("Insomnie.", good.source));
    expect(q.comet).toBeCloseTo(0.8, 12);
    expect(q.mismatches).toEqual([{ section: 1, test: "MMSE", score: "22" }]);
    expect(q.needsCorrection).toBe(true);
    expect(q.reason).toMatch(
      /^BLEU \d+(\.\d)? below 25; chrF \d+(\.\d)? below 50; COMET 0\.8 below 0\.85; MMSE 22 missing$/,
    );
  });

  it("leaves COMET out when a section has none, and a threshold of null unchecked", () => {
    const q = noteQuality(
      [
        { section: 0, source: "a b c", backTranslation: "x", comet: 0.1 },
        { section: 1, source: "d", backTranslation: "d", comet: null },
      ],
      { minBleu: null, minChrf: null, minComet: 0.9, tests: [] },
    );
    expect(q.comet).toBeNull();
    expect(q.needsCorrection).toBe(false);
  });
});
