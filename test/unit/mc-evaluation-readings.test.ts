/**
 * The three readings of an answer (docs/mc-evaluation.md, "Readings"), on one shared table of 71 answer forms
 * (test/fixtures/mc-evaluation/answer-forms.jsonl):
 * - `mentat` equals MENTAT's own code and `mentalbench` MentalBench's own code on every form: the expected values
 *   (readings-expected.json) were made by running eval_openai.py's text fallback and eval_type12.py's
 *   extract_answer from their repositories (reference_readings.py);
 * - `concord` reads the forms Concord's parser missed before ("I would choose option D", "My choice is option B",
 *   "Correct answer: option B", JSON answers, "Diagnosis: B", "I think it's C", an echoed option list).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { mentalBenchReading, mentatReading, parseAnswer, referenceLetters } from "../../app/mc-evaluation/domain/parse";
import { parseItems } from "../../app/mc-evaluation/domain/items";
import { responseRecord } from "../../app/mc-evaluation/domain/records";
import { buildReport, readRecords, reportMarkdown, reportTables, type LoadedRun } from "../../app/mc-evaluation/report";

const forms: { raw: string; mentat: string; mentalbench: string[] }[] = JSON.parse(
  readFileSync(new URL("../fixtures/mc-evaluation/readings-expected.json", import.meta.url), "utf8"),
).forms;
const MENTAT = { letters: ["A", "B", "C", "D", "E"], options: null, allowSet: false };

describe("readings of the shared answer table", () => {
  it("has at least 60 forms, each in the fixture once", () => {
    expect(forms.length).toBeGreaterThanOrEqual(60);
    expect(new Set(forms.map((f) => f.raw)).size).toBe(forms.length);
  });

  it("mentat: MENTAT's code on every form (its first character; A when that is not A–E; empty when it raises)", () => {
    for (const f of forms) {
      const p = mentatReading(f.raw);
      if (f.mentat.startsWith("error:")) expect(p.status, JSON.stringify(f.raw)).toBe("empty");
      else
        expect({ raw: f.raw, letters: p.letters, status: p.status }).toEqual({
          raw: f.raw,
          letters: [f.mentat],
          status: "parsed",
        });
    }
  });

  it("mentalbench: MentalBench's extract_answer on every form", () => {
    for (const f of forms) {
      expect({ raw: f.raw, letters: referenceLetters(f.raw) }).toEqual({ raw: f.raw, letters: f.mentalbench });
      const p = mentalBenchReading(f.raw);
      expect(p.status).toBe(f.mentalbench.length ? "parsed" : "ambiguous");
      expect(p.letters).toEqual(f.mentalbench);
    }
  });

  const concord: [string, string, string | null][] = [
    ["I would choose option D", "parsed", "D"],
    ["I would select option C", "parsed", "C"],
    ["I would pick choice B", "parsed", "B"],
    ["My choice is option B", "parsed", "B"],
    ["Correct answer: option B", "parsed", "B"],
    ["The correct answer is option A.", "parsed", "A"],
    ['{"answer": "B"}', "parsed", "B"],
    ['{"answer": "C", "reason": "mania"}', "parsed", "C"],
    ['```json\n{"choice": "D"}\n```', "parsed", "D"],
    ["Diagnosis: B", "parsed", "B"],
    ["I think it's C", "parsed", "C"],
    ["It's B.", "parsed", "B"],
    ["I'd go with B.", "parsed", "B"],
    ["Answer (single letter): B", "parsed", "B"],
    [
      "A: Acute stress disorder\nB: PTSD\nC: Adjustment disorder\nD: GAD\nE: Specific phobia\n\nAnswer: C",
      "parsed",
      "C",
    ],
    ["A: Call 911\nB: Schedule a visit\nC: Send a message\nD: Ignore\nE: Refer\nB", "parsed", "B"],
    ["Question: what now?\nA: x\nB: y\nC: z\nD: w\nE: v", "ambiguous", null],
    ["Choice D", "parsed", "D"],
    ["A or B", "ambiguous", null],
    ["I can't provide a diagnosis.", "refused", null],
    ["", "empty", null],
  ];
  for (const [raw, status, letter] of concord)
    it(`concord: ${JSON.stringify(raw)} → ${status}${letter ? ` ${letter}` : ""}`, () => {
      expect(forms.some((f) => f.raw === raw)).toBe(true);
      const p = parseAnswer(raw, MENTAT);
      expect(p.status).toBe(status);
      expect(p.letters).toEqual(letter ? [letter] : []);
    });

  it("concord: the echoed option list is named as such when nothing else is said", () => {
    expect(parseAnswer("Question: what now?\nA: x\nB: y\nC: z\nD: w\nE: v", MENTAT).reason).toBe(
      "repeats the options without choosing one",
    );
  });
});

describe("mc-report --reading", () => {
  const read = (name: string) => readFileSync(`test/fixtures/mc-evaluation/${name}`, "utf8");
  const items = parseItems(read("mentat-items.jsonl"), { csv: false }).items;
  const raw = new Map(
    read("mentat-answers.jsonl")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; raw: string })
      .map((a) => [a.id, a.raw]),
  );
  const run = {
    dir: "runs/m_mentat_seed-0",
    run: {
      format: "concord-mc-run/1",
      model: { name: "m", key: "m", base_url: "http://127.0.0.1" },
      items_format: "mentat",
      seed: 0,
      decoding: { temperature: 0 },
      mentalbench_style: "paper",
      few_shot: null,
      prompts: {},
      num_items: items.length,
      status: "complete",
      answered: items.length,
    },
    records: [] as LoadedRun["records"],
    responsesSha256: "",
  } satisfies LoadedRun;
  const answered = items.map((item) => responseRecord(item, [], raw.get(item.id)!, 1, 0));
  /** The run as mc-report reads it with `reading` (readRunFolder applies the same to each line of the file). */
  const readWith = (reading: "concord" | "mentat" | "mentalbench"): LoadedRun => ({
    ...run,
    records: readRecords(answered, reading),
  });
  const options = { reps: 200, seed: 0, alpha: 0.05 };

  it("scores the answers as each paper's code reads them, and says which reading it used", () => {
    const base = items.filter((i) => i.kind === "mentat" && i.dataset === "base");
    // MENTAT's rule, written out: the first character if it is A–E, else A; right when it is the top label's letter.
    const mentatRight = base.filter((i) => {
      const r = raw.get(i.id)!;
      const letter = "ABCDE".includes(r[0] ?? "") ? r[0] : "A";
      return i.kind === "mentat" && r !== "" && letter === "ABCDE"[i.labels.indexOf(Math.max(...i.labels))];
    }).length;
    const byMentat = buildReport([readWith("mentat")], options, new Map(), "mentat");
    expect(byMentat.reading).toBe("mentat");
    expect(byMentat.mentat[0]!.scores.base_by_domain.all!.accuracy_all).toBeCloseTo(mentatRight / base.length, 12);
    expect(reportMarkdown(byMentat)).toContain("Reading: mentat, MENTAT's code (eval_openai.py)");

    const byConcord = buildReport([readWith("concord")], options);
    expect(byConcord.reading).toBe("concord");
    expect(reportMarkdown(byConcord)).toContain("Reading: concord, Concord's parser");
    // "Answer: C" is C for Concord and A for MENTAT's code: the two readings differ on this fixture.
    expect(byConcord.mentat[0]!.scores.base_by_domain.all!.accuracy_all).not.toBeCloseTo(mentatRight / base.length, 6);

    const byMentalBench = readWith("mentalbench").records;
    byMentalBench.forEach((r, i) => expect(r.parse.letters).toEqual(referenceLetters(answered[i]!.raw)));
  });

  it("puts accuracy_all and the per-set accuracies in the tables (page and CSV), beside accuracy", () => {
    const report = buildReport([readWith("concord")], options);
    const scores = report.mentat[0]!.scores;
    const tables = reportTables(report);
    const domains = tables.find((t) => t.name === "mentat-domains")!;
    const allWrong = domains.header.indexOf("all (unparsed wrong)");
    expect(allWrong).toBeGreaterThan(0);
    expect(domains.rows[0]![allWrong]).toBe((100 * scores.base_by_domain.all!.accuracy_all!).toFixed(2));
    const sets = tables.find((t) => t.name === "mentat-sets")!;
    expect(sets.header).toEqual([
      "model",
      "seed",
      ...["base", "gender", "age", "race"].flatMap((s) => [s, `${s} (unparsed wrong)`]),
    ]);
    expect(sets.rows[0]!.slice(2)).toEqual(
      ["base", "gender", "age", "race"].flatMap((s) => [
        (100 * scores.by_set[s]!.accuracy!).toFixed(2),
        (100 * scores.by_set[s]!.accuracy_all!).toFixed(2),
      ]),
    );
  });
});
