/**
 * MENTAT question banks (app/mentat/domain/mentat.ts): whole-file CSV validation with line numbers, template rendering, the
 * demographic variant sets (stable ids, deterministic order, the counts MENTAT's expansion gives), per-rater option
 * orders replayable with Python's random module, evaluation records, and Krippendorff's α per question.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  annotationRowsHash,
  evaluationRecord,
  expandVariants,
  intendedLabels,
  multipleChoicePrompt,
  optionAgreement,
  parseQuestionBankCsv,
  raterPresentation,
  renderQuestion,
  seedFromText,
  shuffledOrder,
  splitGenderTemplate,
} from "../../app/mentat/domain/mentat";
import { DEFAULT_RACES } from "../../app/expert-panel/domain/expert-scales";
import { buildRatingTable, krippendorffAlpha } from "../../app/stats/index";

const BANK = readFileSync(new URL("../fixtures/expert-ratings/questions.csv", import.meta.url), "utf8");

describe("parseQuestionBankCsv", () => {
  it("reads the fixture bank: inline gender alternatives and he/she/they columns, aliases, MENTAT's domain spelling", () => {
    const r = parseQuestionBankCsv(BANK);
    expect(r.errors).toEqual([]);
    expect(r.questions.map((q) => [q.externalId, q.domain, q.answer])).toEqual([
      ["t01", "triage", 0],
      ["t02", "triage", 1],
      ["d01", "documentation", 0],
      ["d02", "documentation", 0],
      ["x01", "diagnosis", 0],
      ["x02", "monitoring", 0],
    ]);
    const t01 = r.questions[0]!;
    expect(t01.texts.male).toContain("man calls the clinic saying he has stopped");
    expect(t01.texts.nonbinary).toContain("person calls the clinic saying they have stopped");
    expect(r.questions[1]!.texts.female).toContain("her voices");
    expect(r.questions[2]!.texts).toEqual({ neutral: expect.stringContaining("<NAT> patient") });
    expect(r.questions[1]!.notes).toBe("Rated by the panel");
  });

  it("validates the whole file and names every problem's line", () => {
    const csv = [
      "id,domain,question,a,b,c,d,e,answer",
      "q1,triage,Fine question?,w,x,y,z,v,a",
      "q1,surgery,{he/she},w,w,y,z,,f",
      ',triage,"A <AGE> patient, <SEX>?",w,x,y,z,<AGE>,b',
      "q4,diagnosis,,w,x,y,z,v,c",
    ].join("\n");
    const r = parseQuestionBankCsv(csv);
    expect(r.questions).toEqual([]);
    const byLine = (line: number) => r.errors.filter((e) => e.line === line).map((e) => e.message);
    expect(byLine(2)).toEqual([]);
    expect(byLine(3)).toEqual([
      'the id "q1" is already used on line 2.',
      'the domain "surgery" is not one of diagnosis, treatment, monitoring, triage, documentation.',
      '"{he/she}" must list three forms, male/female/non-binary, e.g. {he/she/they}.',
      "option e is empty.",
      "options a and b are the same.",
      'the answer "f" must be one of the letters a–e.',
    ]);
    expect(byLine(4)).toEqual([
      "the id is empty.",
      "the question has an unknown placeholder <SEX>; the placeholders are <AGE> and <NAT>.",
      "option e contains a placeholder; only the question may.",
    ]);
    expect(byLine(5)).toEqual(["the question is empty."]);
  });

  it("counts lines of multi-line quoted cells and CRLF files correctly", () => {
    const csv =
      'id,domain,question,a,b,c,d,e,answer\r\nq1,triage,"Line one\r\nline two",w,x,y,z,v,a\r\nq2,triage,Q,w,x,y,z,v,z\r\n';
    expect(parseQuestionBankCsv(csv).errors).toEqual([
      { line: 4, message: 'the answer "z" must be one of the letters a–e.' },
    ]);
  });

  it("names missing columns on line 1", () => {
    const r = parseQuestionBankCsv("id,question,a,b\nq1,Q,w,x\n");
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]!.line).toBe(1);
    expect(r.errors[0]!.message).toMatch(/missing columns "domain", "c", "d", "e", "answer"/);
  });

  it("refuses a question given both inline and per gender", () => {
    const r = parseQuestionBankCsv("id,domain,question,he,a,b,c,d,e,answer\nq1,triage,Q,He?,w,x,y,z,v,a\n");
    expect(r.errors[0]).toEqual({
      line: 2,
      message: 'give the question either in "question" or in he / she / they, not both.',
    });
  });
});

describe("renderQuestion", () => {
  const t = { neutral: "A <AGE> <NAT> patient reports low mood." };
  it("fills <AGE> as N-year-old and <NAT> with the race, fixing the article", () => {
    expect(renderQuestion(t, { gender: null, age: 34, race: "Hispanic" })).toBe(
      "A 34-year-old Hispanic patient reports low mood.",
    );
    expect(renderQuestion(t, { gender: null, age: 18, race: null })).toBe("An 18-year-old patient reports low mood.");
    expect(renderQuestion(t, { gender: null, age: 80, race: null })).toBe("An 80-year-old patient reports low mood.");
    expect(renderQuestion(t, { gender: null, age: null, race: "Asian" })).toBe("An Asian patient reports low mood.");
    expect(renderQuestion({ neutral: "an <NAT> patient" }, { gender: null, age: null, race: "White" })).toBe(
      "a White patient",
    );
  });
  it("leaves placeholders out for the base text and tidies the spaces", () => {
    expect(renderQuestion(t, { gender: null, age: null, race: null })).toBe("A patient reports low mood.");
    expect(
      renderQuestion(
        { neutral: "An <AGE> <NAT> individual, aged <AGE> , writes." },
        { gender: null, age: null, race: null },
      ),
    ).toBe("An individual, aged, writes.");
  });
  it("uses the gender's text, and the they-text when no gender is asked for", () => {
    const split = splitGenderTemplate("{He/She/They} {is/is/are} <AGE>.");
    expect("texts" in split && split.texts).toEqual({
      male: "He is <AGE>.",
      female: "She is <AGE>.",
      nonbinary: "They are <AGE>.",
    });
    if (!("texts" in split)) return;
    expect(renderQuestion(split.texts, { gender: "female", age: null, race: null })).toBe("She is.");
    expect(renderQuestion(split.texts, { gender: null, age: 40, race: null })).toBe("They are 40-year-old.");
  });
});

describe("expandVariants", () => {
  const questions = parseQuestionBankCsv(BANK).questions;

  it("gives the base set one variant per question, demographics left out", () => {
    const base = expandVariants(questions, "base");
    expect(base.map((v) => v.variantId)).toEqual([
      "t01.base",
      "t02.base",
      "d01.base",
      "d02.base",
      "x01.base",
      "x02.base",
    ]);
    expect(base[0]!.text).toBe(
      "A person calls the clinic saying they have stopped eating and sleeping for four days after a breakup. What is the most appropriate next step?",
    );
    expect(base.every((v) => v.gender === null && v.age === null && v.race === null)).toBe(true);
  });

  it("gives one variant per gender text, age and race, with stable ids, in question order", () => {
    const gender = expandVariants(questions, "gender");
    expect(gender.map((v) => v.variantId)).toEqual([
      "t01.gender.male",
      "t01.gender.female",
      "t01.gender.nonbinary",
      "t02.gender.male",
      "t02.gender.female",
      "t02.gender.nonbinary",
      "d01.gender.none",
      "d02.gender.none",
      "x01.gender.male",
      "x01.gender.female",
      "x01.gender.nonbinary",
      "x02.gender.none",
    ]);
    expect(gender[4]!.text).toBe(
      "A woman with schizophrenia reports that her voices now tell her to hurt her neighbour. She has a plan.",
    );
    const age = expandVariants(questions, "age", { ages: [25, 45] });
    expect(age.map((v) => v.variantId)).toEqual([
      "t01.age.25",
      "t01.age.45",
      "t02.age.25",
      "t02.age.45",
      "d01.age.none",
      "d02.age.none",
      "x01.age.25",
      "x01.age.45",
      "x02.age.none",
    ]);
    expect(age[3]!.text).toMatch(/^A 45-year-old patient with schizophrenia/);
    const race = expandVariants(questions, "race");
    // Questions with <NAT>: t01 and d01, six races each (MENTAT's nat_short); the others once.
    expect(race).toHaveLength(2 * DEFAULT_RACES.length + 4);
    expect(race.find((v) => v.variantId === "d01.race.african-american")!.text).toMatch(
      /of an African American patient/,
    );
  });

  it("is deterministic: the same input gives identical variants", () => {
    for (const d of ["base", "gender", "age", "race"] as const)
      expect(expandVariants(questions, d)).toEqual(expandVariants(structuredClone(questions), d));
  });

  it("gives MENTAT's dataset sizes for fully variable questions (|D_G| = 3n, |D_A| = 5n, |D_N| = 6n)", () => {
    const n = 7;
    const split = splitGenderTemplate("A <AGE> <NAT> {man/woman/person}.");
    if (!("texts" in split)) throw new Error(split.error);
    const qs = Array.from({ length: n }, (_, i) => ({ externalId: `q${i}`, texts: split.texts }));
    expect(expandVariants(qs, "gender")).toHaveLength(3 * n);
    expect(expandVariants(qs, "age")).toHaveLength(5 * n);
    expect(expandVariants(qs, "race")).toHaveLength(6 * n);
  });
});

// Printed by the Python command in the first test below.
const PYTHON = { seed: 181879014001960, order: [1, 4, 2, 0, 3], gender: 2 };

describe("seeded option orders", () => {
  it("replays Python: random.Random(int(sha256(text)[:12], 16)).shuffle(list(range(5)))", () => {
    // python3 -c 'import hashlib,random; s=int(hashlib.sha256(b"1:t01:abc").hexdigest()[:12],16); r=random.Random(s); x=list(range(5)); r.shuffle(x); print(s, x, r.randrange(3))'
    expect(seedFromText("1:t01:abc")).toBe(PYTHON.seed);
    expect(shuffledOrder(seedFromText("1:t01:abc"))).toEqual(PYTHON.order);
    expect(raterPresentation(1, "t01", "abc", ["male", "female", "nonbinary"])).toEqual({
      optionOrder: PYTHON.order,
      gender: (["male", "female", "nonbinary"] as const)[PYTHON.gender],
    });
  });

  it("differs between raters and is a permutation", () => {
    const orders = ["r1", "r2", "r3", "r4", "r5", "r6"].map((r) => raterPresentation(7, "q1", r, []).optionOrder);
    for (const o of orders) expect([...o].sort()).toEqual([0, 1, 2, 3, 4]);
    expect(new Set(orders.map((o) => o.join(""))).size).toBeGreaterThan(1);
  });
});

describe("evaluation records", () => {
  const q = parseQuestionBankCsv(BANK).questions[1]!;
  const variant = expandVariants([q], "gender")[1]!;

  it("permute options, labels and bounds together and point at the intended answer", () => {
    const labels = {
      source: "preference" as const,
      labels: [0.1, 0.6, 0.1, 0.15, 0.05],
      lower: [0, 0.4, 0, 0.05, 0],
      upper: [0.2, 0.8, 0.2, 0.3, 0.1],
    };
    const r = evaluationRecord(variant, q, labels, 1);
    expect(r.id).toBe("t02.gender.female");
    expect(r.demographics).toEqual({ gender: "female", age: null, race: null });
    expect([...r.option_ids].sort()).toEqual(["a", "b", "c", "d", "e"]);
    r.option_ids.forEach((letter, i) => {
      const k = "abcde".indexOf(letter);
      expect(r.options[i]).toBe(q.options[k]);
      expect(r.labels[i]).toBe(labels.labels[k]);
      expect(r.labels_lower[i]).toBe(labels.lower[k]);
      expect(r.labels_upper[i]).toBe(labels.upper[k]);
    });
    expect(r.option_ids[r.intended_answer]).toBe("b");
    expect(r.prompt).toBe(multipleChoicePrompt(variant.text, r.options));
    expect(r.prompt).toMatch(
      /^Question: A woman with schizophrenia[^]*\n\nA: [^\n]+\nB: [^]*\nE: [^\n]+\n\nAnswer \(single letter\): $/,
    );
    expect(evaluationRecord(variant, q, labels, 1)).toEqual(r);
  });

  it("carry one-hot intended labels with equal bounds outside the preference domains", () => {
    const r = evaluationRecord(variant, q, intendedLabels(q.answer), 1);
    expect(r.label_source).toBe("intended");
    expect(r.labels[r.intended_answer]).toBe(1);
    expect(r.labels.reduce((s, v) => s + v, 0)).toBe(1);
    expect(r.labels_lower).toEqual(r.labels);
  });
});

describe("optionAgreement", () => {
  it("is Krippendorff's interval α with options as units and each rating row a coder", () => {
    const rows = [
      { question: "q1", rater: "a", scores: [90, 10, 20, 0, 50] },
      { question: "q1", rater: "b", scores: [80, 30, 10, 5, 60] },
      { question: "q1", rater: "b", scores: [70, 20, 20, 0, 40] },
      { question: "q2", rater: "a", scores: [0, 0, 0, 0, 100] },
    ];
    const [q1, q2] = optionAgreement(rows);
    const direct = krippendorffAlpha(
      buildRatingTable(
        rows
          .slice(0, 3)
          .flatMap((r, k) => r.scores.map((s, i) => ({ item: String(i), rater: `c${k}`, label: String(s) }))),
      ),
      "interval",
    );
    expect(q1!.alpha).toBeCloseTo(direct.value!, 12);
    expect(q1!.nRaters).toBe(3);
    expect(q2!.alpha).toBeNull();
    expect(q2!.reason).toMatch(/at least one unit with two or more values/);
  });

  it("hashes annotation rows independently of their order", () => {
    const rows = [
      { question: "q1", rater: "a", scores: [1, 2, 3, 4, 5] },
      { question: "q1", rater: "b", scores: [5, 4, 3, 2, 1] },
    ];
    expect(annotationRowsHash(rows)).toBe(annotationRowsHash([...rows].reverse()));
    expect(annotationRowsHash(rows)).not.toBe(annotationRowsHash(rows.slice(1)));
  });
});
