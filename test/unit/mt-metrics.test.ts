/**
 * BLEU and chrF equal to sacreBLEU's (docs/preparation.md, "Quality"). The expected numbers in
 * test/fixtures/preparation/mt-metrics.json were made by sacreBLEU's own code (github.com/mjpost/sacrebleu at the
 * commit the file names), run by test/fixtures/preparation/make-mt-metrics.py with its defaults: BLEU with the 13a
 * tokenisation and "exp" smoothing (effective order at sentence level, as sacrebleu.sentence_bleu), chrF with
 * character order 6, word order 0 and β 2. The file keeps Python's full-precision floats; we assert to 1e-9.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  bleuFromStats,
  bleuStats,
  corpusBleu,
  corpusChrf,
  pySplit,
  sentenceBleu,
  sentenceChrf,
  tokenize13a,
} from "~/stats/mt-metrics";

interface Fixture {
  sacrebleu_commit: string;
  pairs: {
    case: string;
    hypothesis: string;
    reference: string;
    tokens_13a: string;
    sentence_bleu: number;
    sentence_chrf: number;
  }[];
  corpora: { name: string; corpus_bleu: number; corpus_chrf: number }[];
}

const fixture = JSON.parse(readFileSync("test/fixtures/preparation/mt-metrics.json", "utf8")) as Fixture;

describe("BLEU and chrF against sacreBLEU's own figures", () => {
  it("the fixture was made by a named sacreBLEU commit, over the edge cases the quality check meets", () => {
    expect(fixture.sacrebleu_commit).toMatch(/^[0-9a-f]{40}$/);
    const hyps = fixture.pairs.map((p) => p.hypothesis);
    expect(hyps).toContain("");
    expect(fixture.pairs.some((p) => p.hypothesis === p.reference && p.hypothesis.length > 20)).toBe(true);
    expect(fixture.pairs.some((p) => p.hypothesis.length === 1)).toBe(true);
    expect(hyps.join("")).toMatch(/[șțăîâ]/u);
  });

  it.each(fixture.pairs.map((p, i) => [i, p] as const))("pair %i: 13a tokens, sentence BLEU and chrF", (_i, p) => {
    expect(tokenize13a(p.hypothesis.replace(/\s+$/u, ""))).toBe(p.tokens_13a);
    expect(Math.abs(sentenceBleu(p.hypothesis, p.reference) - p.sentence_bleu)).toBeLessThan(1e-9);
    expect(Math.abs(sentenceChrf(p.hypothesis, p.reference) - p.sentence_chrf)).toBeLessThan(1e-9);
  });

  it.each(fixture.corpora.map((c) => [c.name, c] as const))("corpus %s: BLEU and chrF", (name, c) => {
    const pairs = fixture.pairs.filter((p) => name === "all" || p.case === name);
    expect(Math.abs(corpusBleu(pairs) - c.corpus_bleu)).toBeLessThan(1e-9);
    expect(Math.abs(corpusChrf(pairs) - c.corpus_chrf)).toBeLessThan(1e-9);
  });
});

describe("the definitions on small cases", () => {
  it("identical text scores 100; an empty hypothesis 0", () => {
    expect(sentenceBleu("MMSE 22/30.", "MMSE 22/30.")).toBeCloseTo(100, 12);
    expect(sentenceChrf("MMSE 22/30.", "MMSE 22/30.")).toBeCloseTo(100, 12);
    expect(sentenceBleu("", "text")).toBe(0);
    expect(sentenceChrf("", "text")).toBe(0);
  });

  it("exp smoothing halves the credit of each further order with no match", () => {
    // "a b" against "a c": one of two unigrams matches, the bigram does not: precisions 50 and 100/(2·1).
    const s = bleuStats("a b", "a c");
    expect(s.correct).toEqual([1, 0, 0, 0]);
    expect(bleuFromStats(s, { effectiveOrder: true })).toBeCloseTo(50, 12);
    // Without the effective order the two missing orders count as log 0: the score is 0.
    expect(bleuFromStats(s, { effectiveOrder: false })).toBe(0);
  });

  it("splits on what Python calls white space, not on what JavaScript's \\s adds", () => {
    expect(pySplit("a\u001fb\u0085c")).toEqual(["a", "b", "c"]);
    expect(pySplit("a\ufeffb")).toEqual(["a\ufeffb"]);
  });
});
