/**
 * Answer parsing on a committed table of real-looking answers (test/fixtures/mc-evaluation/answers.csv, written by
 * make_answers.py with the reading a clinician gives each answer), and MentalBench's own reader against its Python
 * original: answers-reference.json is the output of reference_mentalbench.py, which runs `extract_answer` from a
 * clone of HoyunS/MentalBench (scripts/eval_type12.py) on every answer of the table.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parsePythonCsv as parseCsv } from "../../app/formats/csv-text";
import { MENTALBENCH_LETTERS, MENTAT_LETTERS } from "../../app/mc-evaluation/domain/items";
import { parseAnswer, referenceLetters, type ParseContext } from "../../app/mc-evaluation/domain/parse";

const dir = "test/fixtures/mc-evaluation";
const [header, ...rows] = parseCsv(readFileSync(`${dir}/answers.csv`, "utf8")).filter((r) => r.length > 1);
const reference = JSON.parse(readFileSync(`${dir}/answers-reference.json`, "utf8")) as Record<string, string[]>;

const MENTALBENCH_OPTIONS = [
  "Major Depressive Disorder",
  "Bipolar II Disorder",
  "Generalized Anxiety Disorder",
  "Persistent Depressive Disorder",
];
const MENTAT_OPTIONS = [
  "Start sertraline 50 mg daily",
  "Create a safety plan with the patient",
  "Discharge home with outpatient follow-up",
  "Admit to the inpatient psychiatric unit",
  "Contact the patient's family",
];
const CONTEXTS: Record<string, ParseContext> = {
  single: { letters: MENTALBENCH_LETTERS, options: MENTALBENCH_OPTIONS, allowSet: false },
  set: { letters: MENTALBENCH_LETTERS, options: MENTALBENCH_OPTIONS, allowSet: true },
  mentat: { letters: MENTAT_LETTERS, options: MENTAT_OPTIONS, allowSet: false },
};

describe("answer parsing", () => {
  it("reads the table's header", () => {
    expect(header).toEqual(["context", "raw", "status", "letters", "rule"]);
    expect(rows.length).toBeGreaterThan(40);
  });

  it.each(rows.map((r) => ({ context: r[0]!, raw: r[1]!, status: r[2]!, letters: r[3]!, rule: r[4]! })))(
    "$context: $raw",
    ({ context, raw, status, letters, rule }) => {
      const parsed = parseAnswer(raw, CONTEXTS[context]!);
      expect(parsed.status).toBe(status);
      expect(parsed.letters.join("&")).toBe(letters);
      expect(parsed.rule ?? "").toBe(rule);
      if (status !== "parsed" && status !== "empty") expect(parsed.reason).toBeTruthy();
    },
  );

  it("counts every status of the table, and none is scored unless parsed", () => {
    const statuses = rows.map((r) => parseAnswer(r[1]!, CONTEXTS[r[0]!]!));
    const counts = Object.fromEntries(
      ["parsed", "ambiguous", "refused", "empty"].map((s) => [s, statuses.filter((p) => p.status === s).length]),
    );
    expect(counts.parsed! + counts.ambiguous! + counts.refused! + counts.empty!).toBe(rows.length);
    for (const p of statuses) if (p.status !== "parsed") expect(p.letters).toEqual([]);
  });
});

describe("MentalBench's reader (reference-compatible accuracy)", () => {
  it.each(rows.map((r) => r[1]!))("%j as the Python original reads it", (raw) => {
    expect(referenceLetters(raw)).toEqual(reference[raw]);
  });

  it("keeps the original's quirks: the first A–D anywhere, inside words too", () => {
    expect(referenceLetters("The patient presents with low mood")).toEqual(["A"]);
    expect(referenceLetters("Bipolar II Disorder")).toEqual(["B"]);
  });
});
