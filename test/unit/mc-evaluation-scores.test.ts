/**
 * Scores against values made by running the papers' own scoring functions from clones of their repositories
 * (test/fixtures/mc-evaluation/reference_mentalbench.py: MentalBench's extract_answer and generate_gt from
 * eval_type12.py; reference_mentat.py: MENTAT's check_is_correct, calculate_cross_entropy, bootstrap_wrap and
 * eval_model_by_column_binned, with scipy's binomtest for McNemar and Holm by hand) on the same fixture items and
 * answers, and against small examples computed by hand.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ageBands, demographicDrift } from "../../app/mc-evaluation/domain/drift";
import { parseItems, type McItem } from "../../app/mc-evaluation/domain/items";
import { responseRecord, type ResponseRecord } from "../../app/mc-evaluation/domain/records";
import { mentalBenchScores, mentatRows, mentatScores } from "../../app/mc-evaluation/domain/scores";

const dir = "test/fixtures/mc-evaluation";
const read = (name: string) => readFileSync(`${dir}/${name}`, "utf8");

function recordsOf(itemsFile: string, answersFile: string): ResponseRecord[] {
  const parsed = parseItems(read(itemsFile), { csv: false });
  expect(parsed.errors).toEqual([]);
  const raw = new Map(
    read(answersFile)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; raw: string })
      .map((a) => [a.id, a.raw]),
  );
  return parsed.items.map((item: McItem) => responseRecord(item, [], raw.get(item.id)!, 1, 0));
}

function expectGroup(actual: Record<string, unknown> | undefined, expected: Record<string, unknown>) {
  expect(actual).toBeDefined();
  for (const [k, v] of Object.entries(expected)) {
    if (typeof v === "number") expect(actual![k] as number, k).toBeCloseTo(v, 12);
    else expect(actual![k], k).toEqual(v);
  }
}

describe("MentalBench scores", () => {
  const expected = JSON.parse(read("mentalbench-expected.json"));
  const scores = mentalBenchScores(recordsOf("mentalbench-items.jsonl", "mentalbench-answers.jsonl"));

  it("per type, disease and cluster as the Python reference computes them", () => {
    for (const table of ["by_type", "by_disease", "by_cluster"] as const) {
      expect(Object.keys(scores[table])).toEqual(Object.keys(expected[table]));
      for (const [k, g] of Object.entries(expected[table] as Record<string, Record<string, unknown>>)) {
        expectGroup(scores[table][k] as unknown as Record<string, unknown>, g);
      }
    }
  });

  it("overall weighted by cases per type, and the Type III − IV gap", () => {
    expect(scores.overall).toBeCloseTo(expected.overall, 12);
    expect(scores.overall_all).toBeCloseTo(expected.overall_all, 12);
    expect(scores.overall_reference).toBeCloseTo(expected.overall_reference, 12);
    // The reference scripts' TOTAL row (one denominator) equals the type-weighted reference accuracy.
    expect(scores.overall_reference).toBeCloseTo(expected.reference_total, 12);
    expect(scores.gap_iii_iv).toBeCloseTo(expected.gap_iii_iv, 12);
    expect(scores.gap_iii_iv_reference).toBeCloseTo(expected.gap_iii_iv_reference, 12);
  });

  it("a hand-computed example: Table 2's weighting", () => {
    const item = (id: string, type: string, answer: string) =>
      JSON.stringify({ id, question: "q", options: ["w", "x", "y", "z"], answer, type, disease: "MDD" });
    const lines = [
      item("1", "I", "A. w"),
      item("2", "I", "B. x"),
      item("3", "III", "A & B) w and x"),
      item("4", "IV", "C. y"),
    ];
    const items = parseItems(lines.join("\n"), { csv: false }).items;
    const answers = ["A", "I cannot answer that.", "A & B", "B"];
    const s = mentalBenchScores(items.map((it, i) => responseRecord(it, [], answers[i]!, 1, 0)));
    // Type I: 1 of 1 parsed right (the refusal is counted, not scored); III: 1/1; IV: 0/1.
    expect(s.by_type.I).toMatchObject({ n: 2, n_parsed: 1, correct: 1, accuracy: 1, accuracy_all: 0.5 });
    expect(s.overall).toBeCloseTo((2 * 1 + 1 * 1 + 1 * 0) / 4, 12);
    expect(s.overall_all).toBeCloseTo((2 * 0.5 + 1 + 0) / 4, 12);
    expect(s.gap_iii_iv).toBe(1);
  });
});

describe("MENTAT scores and drift", () => {
  const expected = JSON.parse(read("mentat-expected.json"));
  const records = recordsOf("mentat-items.jsonl", "mentat-answers.jsonl");

  it("accuracy and cross-entropy per domain on the base set", () => {
    const scores = mentatScores(records);
    for (const [d, g] of Object.entries(expected.base_by_domain as Record<string, Record<string, unknown>>)) {
      expectGroup(scores.base_by_domain[d] as unknown as Record<string, unknown>, g);
    }
  });

  it("a preference-labelled question scores the experts' top option (first on ties), one-hot cross-entropy", () => {
    const line = JSON.stringify({
      id: "t1.base",
      question_id: "t1",
      dataset: "base",
      domain: "triage",
      demographics: { gender: null, age: null, race: null },
      prompt: "Q",
      question: "Q",
      options: ["a", "b", "c", "d", "e"],
      option_ids: ["a", "b", "c", "d", "e"],
      labels: [0.1, 0.35, 0.35, 0.1, 0.1],
      label_source: "preference",
      intended_answer: 2,
    });
    const [item] = parseItems(line, { csv: false }).items;
    const [b, c] = mentatRows([responseRecord(item!, [], "B", 1, 0), responseRecord(item!, [], "C", 1, 0)]);
    expect(b!.correct).toBe(true); // labels.index(max(labels)) = 1: B, even though the creator intended C
    expect(c!.correct).toBe(false);
    expect(b!.cross_entropy).toBeCloseTo(-(0.35 * Math.log(1 + 1e-12) + 0.65 * Math.log(1e-12)), 10);
    expect(b!.preference_mass).toBe(0.35);
  });

  it("MENTAT's age bands (pandas.cut at 18, 33, 49, 65) with bootstrap intervals", () => {
    const bands = ageBands(mentatRows(records), { reps: 1000, seed: 0, alpha: 0.05 });
    expect(bands.map((b) => b.condition)).toEqual(expected.age_bands.map((b: { condition: string }) => b.condition));
    bands.forEach((b, i) => {
      const e = expected.age_bands[i];
      expect([b.n_parsed, b.correct]).toEqual([e.n_parsed, e.correct]);
      expect(b.accuracy).toBeCloseTo(e.accuracy, 12);
      expect(b.ci95![0]).toBeCloseTo(e.ci95[0], 12);
      expect(b.ci95![1]).toBeCloseTo(e.ci95[1], 12);
    });
  });

  it("condition accuracies, bootstrap intervals, McNemar and Holm as the Python reference", () => {
    const drift = demographicDrift(mentatRows(records), { reps: 1000, seed: 0, alpha: 0.05 });
    expect(drift.map((d) => d.dimension)).toEqual(["gender", "age", "race"]);
    for (const d of drift) {
      const e = expected.drift[d.dimension];
      expect(d.conditions.map((c) => c.condition)).toEqual(e.conditions.map((c: { condition: string }) => c.condition));
      d.conditions.forEach((c, i) => {
        const ec = e.conditions[i];
        expect(c.n_parsed).toBe(ec.n_parsed);
        expect(c.correct).toBe(ec.correct);
        expect(c.accuracy).toBeCloseTo(ec.accuracy, 12);
        expect(c.ci95![0]).toBeCloseTo(ec.ci95[0], 12);
        expect(c.ci95![1]).toBeCloseTo(ec.ci95[1], 12);
      });
      expect(d.tests.length).toBe(e.tests.length);
      d.tests.forEach((t, i) => {
        const et = e.tests[i];
        expect([t.first, t.second, t.n_pairs, t.first_only, t.second_only]).toEqual([
          et.first,
          et.second,
          et.n_pairs,
          et.first_only,
          et.second_only,
        ]);
        expect(t.p).toBeCloseTo(et.p, 12);
        expect(t.p_holm).toBeCloseTo(et.p_holm, 12);
        expect(t.significant).toBe(et.significant);
        expect(t.difference).toBeCloseTo(et.difference, 12);
        expect(t.difference_ci95![0]).toBeCloseTo(et.difference_ci95[0], 12);
        expect(t.difference_ci95![1]).toBeCloseTo(et.difference_ci95[1], 12);
      });
    }
  });
});
