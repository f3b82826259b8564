/**
 * Item files and prompts: MentalBench items in their spellings (types I–IV / 1–4 / "Type 3", options as a block,
 * a list or columns, answers "C. Bipolar II" / "A & B) …"), MENTAT records, line-numbered problems; the prompt
 * texts against their pinned sha256 (app/data/mc-evaluation/hashes.json) and the messages each paper's format sends.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { answerLetters, parseItems, type MentalBenchItem, type MentatItem } from "../../app/mc-evaluation/domain/items";
import { buildMessages, fewShotExamples, fewShotSplit, topLetter } from "../../app/mc-evaluation/domain/prompts";
import { PROMPT_FILES } from "../../app/mc-evaluation/domain/prompts";
import { loadMcPrompts } from "../../app/mc-evaluation/prompt-files";

const mb = (extra: Record<string, unknown>) =>
  JSON.stringify({
    id: "x",
    question: "I feel low.",
    options: ["MDD", "BP2", "GAD", "PDD"],
    answer: "A. MDD",
    type: "I",
    disease: "MDD",
    ...extra,
  });

describe("MentalBench items", () => {
  it("reads answers as MentalBench's ground-truth rule does", () => {
    expect(answerLetters("C. Bipolar II")).toEqual(["C"]);
    expect(answerLetters("A) Major Depressive")).toEqual(["A"]);
    expect(answerLetters("A & B) Both Conditions")).toEqual(["A", "B"]);
    expect(answerLetters("B. Vitamin A deficiency")).toEqual(["B"]);
    expect(answerLetters("Bipolar II")).toEqual([]);
  });

  it("takes every spelling of the type and of the options", () => {
    const lines = [
      mb({ id: "1", type: "1" }),
      mb({ id: "2", type: "Type 2" }),
      mb({ id: "3", type: "III", answer: "A & B) MDD and BP2" }),
      mb({ id: "4", type: 4, options: { A: "MDD", B: "BP2", C: "GAD", D: "PDD" } }),
      mb({ id: "5", type: "iv", options: "A) MDD\nB) BP2\nC) GAD\nD) PDD" }),
    ];
    const r = parseItems(lines.join("\n"), { csv: false });
    expect(r.errors).toEqual([]);
    expect(r.format).toBe("mentalbench");
    const items = r.items as MentalBenchItem[];
    expect(items.map((i) => i.type)).toEqual(["I", "II", "III", "IV", "IV"]);
    expect(items[2]!.answer).toEqual(["A", "B"]);
    expect(items[3]!.optionsText).toBe("A. MDD\nB. BP2\nC. GAD\nD. PDD");
    expect(items[4]!.optionsText).toBe("A) MDD\nB) BP2\nC) GAD\nD) PDD");
    expect(items[4]!.options).toEqual(["MDD", "BP2", "GAD", "PDD"]);
  });

  it("reports every problem with its line and yields nothing", () => {
    const text = [
      mb({ id: "1" }),
      "",
      mb({ id: "1" }),
      mb({ id: "3", options: ["a", "b"] }),
      mb({ id: "4", type: "III" }),
    ].join("\n");
    const r = parseItems(text, { csv: false });
    expect(r.items).toEqual([]);
    expect(r.errors.map((e) => e.line)).toEqual([3, 4]);
    expect(r.errors[0]!.message).toMatch(/duplicate id "1" \(first on line 1\)/);
    expect(r.warnings).toEqual([{ line: 5, message: "a Type III case with a single answer (A)" }]);
  });

  it("refuses an options block that does not list the answer, with its line; warns of a short block", () => {
    const text = [
      mb({ id: "1", options: "A. MDD\nB. BP2", answer: "C. GAD" }),
      mb({ id: "2", options: "A. MDD\nB. BP2", answer: "B. BP2" }),
      mb({ id: "3", type: "III", options: "A) MDD\nB) BP2\nC) GAD", answer: "A & D) Both" }),
    ].join("\n");
    const r = parseItems(text, { csv: false });
    expect(r.items).toEqual([]);
    expect(r.errors).toEqual([
      { line: 1, message: 'answer "C. GAD" names C, which the options block does not list (it lists A, B)' },
      { line: 3, message: 'answer "A & D) Both" names D, which the options block does not list (it lists A, B, C)' },
    ]);
    expect(r.warnings).toContainEqual({ line: 2, message: "the options block lists 2 options (A, B), not 4" });
  });

  it("reads CSV with physical line numbers", () => {
    const csv =
      'id,question,options,answer,type,disease\n1,"two\nlines","A. a\nB. b\nC. c\nD. d",A. a,I,MDD\n2,q,"A. a\nB. b\nC. c\nD. d",nothing,I,MDD\n';
    const r = parseItems(csv, { csv: true });
    expect(r.errors).toEqual([
      { line: 7, message: 'answer "nothing" names no option letter A–D before its first "." or ")"' },
    ]);
    expect(parseItems("id,question\n", { csv: true }).errors[0]!.message).toMatch(/missing column/);
  });
});

describe("MENTAT records", () => {
  const record = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      id: "t1.base",
      question_id: "t1",
      dataset: "base",
      domain: "triage",
      demographics: { gender: null, age: null, race: null },
      prompt: "Question: q\n\nA: a\nB: b\nC: c\nD: d\nE: e\n\nAnswer (single letter): ",
      question: "q",
      options: ["a", "b", "c", "d", "e"],
      option_ids: ["c", "a", "b", "e", "d"],
      labels: [0.1, 0.5, 0.2, 0.1, 0.1],
      labels_lower: [0, 0, 0, 0, 0],
      labels_upper: [1, 1, 1, 1, 1],
      label_source: "preference",
      intended_answer: 0,
      ...extra,
    });

  it("are recognised and read", () => {
    const r = parseItems(record(), { csv: false });
    expect(r.format).toBe("mentat");
    expect((r.items[0] as MentatItem).labels).toEqual([0.1, 0.5, 0.2, 0.1, 0.1]);
  });

  it("refuse labels that are not a distribution", () => {
    const r = parseItems(record({ labels: [0.5, 0.5, 0.5, 0, 0] }), { csv: false });
    expect(r.errors).toEqual([{ line: 1, message: "labels must sum to 1, they sum to 1.5" }]);
  });
});

describe("prompts", () => {
  const loaded = loadMcPrompts();

  it("are the pinned texts", () => {
    const pinned = JSON.parse(readFileSync("app/data/mc-evaluation/hashes.json", "utf8"));
    for (const file of Object.values(PROMPT_FILES)) {
      expect(
        createHash("sha256")
          .update(readFileSync(`app/data/mc-evaluation/${file}`))
          .digest("hex"),
        file,
      ).toBe(pinned[file]);
      expect(loaded.hashes[file]).toBe(pinned[file]);
    }
  });

  it("MentalBench: one user message, the single-answer prompt for Types I–II, select-all for III–IV", () => {
    const items = parseItems([mb({ id: "1", question: "Q {x}" }), mb({ id: "2", type: "IV" })].join("\n"), {
      csv: false,
    }).items;
    const [m1] = buildMessages(items[0]!, loaded.texts, { style: "paper", fewShot: [] });
    expect(m1!.content).toBe(
      "Q {x}\nQ: What is the most likely diagnosis?\nSelect the single best answer from the options (A, B, C, D).\n" +
        "Do NOT provide any explanation, reasoning, or introduction. Just the letter.\n**Output Examples:**\n" +
        "- Single Answer: A.\n\nA. MDD\nB. BP2\nC. GAD\nD. PDD\nAnswer:\n",
    );
    expect(buildMessages(items[1]!, loaded.texts, { style: "paper", fewShot: [] })[0]!.content).toMatch(
      /Select all that apply/,
    );
    expect(buildMessages(items[1]!, loaded.texts, { style: "clear", fewShot: [] })[0]!.content).toMatch(/one or more/);
  });

  it("MENTAT: the system message, the few-shot examples as turns, the record's prompt", () => {
    const text = ["q1", "q2", "q3"].map((q) =>
      JSON.stringify({
        id: `${q}.base`,
        question_id: q,
        dataset: "base",
        domain: "diagnosis",
        demographics: { gender: null, age: null, race: null },
        prompt: `P ${q}`,
        question: q,
        options: ["a", "b", "c", "d", "e"],
        option_ids: ["a", "b", "c", "d", "e"],
        labels: [0, 0, 1, 0, 0],
        label_source: "intended",
        intended_answer: 2,
      }),
    );
    const items = parseItems(text.join("\n"), { csv: false }).items as MentatItem[];
    const m = buildMessages(items[0]!, loaded.texts, { style: "paper", fewShot: [items[1]!] });
    expect(m).toEqual([
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: "P q2" },
      { role: "assistant", content: "C" },
      { role: "user", content: "P q1" },
    ]);
    expect(topLetter([0.2, 0.4, 0.4, 0, 0])).toBe("B");
  });

  it("the few-shot split holds out ⌊10%⌋ of the questions, seeded (Python: random.Random(seed).shuffle(sorted(ids)))", () => {
    const ids = Array.from({ length: 203 }, (_, i) => `q${String(i).padStart(3, "0")}`);
    const split = fewShotSplit(ids, 0);
    expect(split.fewShotQuestions).toHaveLength(20);
    expect(split.evaluationQuestions.size).toBe(183);
    expect(fewShotSplit(ids, 0).fewShotQuestions).toEqual(split.fewShotQuestions);
    expect(fewShotSplit(ids, 1).fewShotQuestions).not.toEqual(split.fewShotQuestions);
    // python3 -c "import random; ids=[f'q{i:03d}' for i in range(203)]; random.Random(0).shuffle(ids); print(ids[:3])"
    expect(split.fewShotQuestions.slice(0, 3)).toEqual(PY_FIRST_THREE);
    const examples = fewShotExamples([], split, 5);
    expect(examples).toEqual([]);
  });
});

const PY_FIRST_THREE = JSON.parse(readFileSync("test/fixtures/mc-evaluation/few-shot-split.json", "utf8"))
  .first_three as string[];
