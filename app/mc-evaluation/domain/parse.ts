/**
 * Reading a model's multiple-choice answer (docs/mc-evaluation.md, "Answer parsing"). Every answer gets a status —
 * parsed, ambiguous, refused or empty — and, when parsed, its letters and the rule that found them, so that no
 * answer is silently scored: only parsed answers are scored, and the others are counted.
 *
 * `referenceLetters` reproduces MentalBench's own reader (`extract_answer` of scripts/eval_type12.py) for the
 * reference-compatible accuracy; it never says "unparsed", it returns an empty set.
 */

export type ParseStatus = "parsed" | "ambiguous" | "refused" | "empty";

export type ParseRule =
  | "letter" // the answer is a letter, "B.", "(B)", "**B**", "B) Bipolar II"
  | "letter-set" // "A & B", "A and C", "A, B"
  | "answer-cue" // "Answer: C", "The answer is (C)", "I would choose option C"
  | "option-text" // the text of an option instead of its letter
  | "json" // {"answer": "B"}, also inside a ```json block
  | "first-character" // MENTAT's reading: the answer's first character
  | "mentalbench"; // MentalBench's reading (its extract_answer)

/**
 * Whose reading of an answer scores it (docs/mc-evaluation.md, "Readings"): Concord's parser (statuses, rules and
 * reasons), MENTAT's code (the first character) or MentalBench's (its extract_answer).
 */
export const READINGS = ["concord", "mentat", "mentalbench"] as const;
export type Reading = (typeof READINGS)[number];

export interface ParsedAnswer {
  status: ParseStatus;
  /** Sorted distinct letters; empty unless parsed. */
  letters: string[];
  rule: ParseRule | null;
  /** Why an answer is not parsed (ambiguous / refused), in words. */
  reason: string | null;
}

export interface ParseContext {
  /** The option letters in play ("A".."E" for MENTAT, "A".."D" for MentalBench). */
  letters: readonly string[];
  /** Option texts in letter order, when known. */
  options: readonly string[] | null;
  /** Whether several letters are a valid answer (MentalBench Types III–IV) or one is required. */
  allowSet: boolean;
}

const REFUSAL =
  /\b(i\s+(?:can(?:no|')t|cannot|am\s+(?:not\s+able|unable)|won'?t|will\s+not)\s+(?:provide|give|answer|make|offer|diagnose|determine|help|choose|select)|as\s+an\s+ai\b|i'?m\s+(?:not\s+able|unable)\s+to\s+(?:provide|give|answer|diagnose|choose)|consult\s+(?:a|your)\s+(?:qualified\s+)?(?:healthcare|medical|mental\s+health)\s+professional|unable\s+to\s+(?:provide|determine)\s+a\s+diagnosis)/i;

const SEPARATOR = String.raw`\s*(?:,|&|\band\b|\+|/)\s*`;

function clean(text: string): string {
  return text
    .replace(/<think>[\s\S]*?<\/think>/gi, " ")
    .replace(/[*_`]/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

function result(
  status: ParseStatus,
  letters: string[] = [],
  rule: ParseRule | null = null,
  reason: string | null = null,
) {
  return { status, letters: [...new Set(letters)].sort(), rule, reason };
}

function lettersIn(chunk: string): string[] {
  return [...chunk.toUpperCase().matchAll(/\b([A-Z])\b/g)].map((m) => m[1]!);
}

/**
 * A run of capital letters joined by separators at the start of `text`: "A", "(B)", "A & B", "C and D.", "Option B".
 * Capitals only, so that "a patient" and "A, but …" do not run on into prose.
 */
function leadingLetters(text: string): { letters: string[]; rest: string } | null {
  const one = String.raw`\(?\[?([A-Z])\]?\)?`;
  const run = new RegExp(String.raw`^(?:[Oo]ption\s+|[Cc]hoice\s+)?${one}(?:${SEPARATOR}${one})*`);
  const m = run.exec(text);
  if (!m) return null;
  const rest = text.slice(m[0].length);
  // "I think …", "Based on …": a capital that starts a word of prose, not a letter.
  if (/^[a-z'’]/i.test(rest)) return null;
  if (/^\s+[a-z]/.test(rest) && !/^\s+(?:is|are)\b/.test(rest)) {
    // "B Bipolar II" keeps its letter (an option name follows in capitals); lower-case prose does not.
    return null;
  }
  const letters = lettersIn(m[0].replace(/^(?:option|choice)\s+/i, "").replace(/\band\b/g, " "));
  if (letters.length === 0) return null;
  return { letters, rest };
}

/**
 * Letters named after an explicit cue anywhere in the text: "Answer: C", "the answer is (B)", "I would choose option
 * D", "Correct answer: option B", "Diagnosis: B", "I think it's C". The cue words in any case; "option"/"choice"
 * after the cue is a word, not a letter; the letters themselves in capitals only ("choose a treatment" names none).
 */
function cuedLetters(text: string): string[][] {
  const cue =
    /\b(?:final\s+answer|correct\s+answer|correct\s+option|best\s+option|best\s+answer|answer|option|choice|choose|select|pick|go\s+with|diagnosis|it'?s|it\s+is)s?(?:\s*\(single\s+letter\))?(?:\s+(?:is|are|would\s+be|will\s+be))?\s*[:-]?\s*(?:(?:option|choice)\s+)?/gi;
  const letters = new RegExp(String.raw`^((?:\(?[A-Z]\)?(?:${SEPARATOR})?)+)(?![A-Za-z])`);
  const found: string[][] = [];
  for (const m of text.matchAll(cue)) {
    const after = letters.exec(text.slice(m.index + m[0].length));
    if (!after) continue;
    const named = lettersIn(after[1]!.replace(/\band\b/g, " "));
    if (named.length) found.push(named);
  }
  return found;
}

/** A JSON answer, alone or in a ```json block: the letter(s) under answer, choice, option, letter or diagnosis. */
function jsonLetters(text: string): string[] | null {
  const body = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(text)?.[1] ?? text;
  if (!body.startsWith("{")) return null;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  for (const [k, v] of Object.entries(value))
    if (/^(?:final_?answer|answer|choice|option|letter|selection|diagnosis)$/i.test(k)) {
      const cell = Array.isArray(v) ? v.join(", ") : String(v);
      const m = /^\s*\(?([A-Z])\)?(?:\s*(?:,|&|\band\b)\s*\(?[A-Z]\)?)*\s*\.?\s*$/.exec(cell.trim());
      if (m) return lettersIn(cell.replace(/\band\b/g, " "));
    }
  return null;
}

/**
 * The answer with an echoed option list taken out: three or more lines "A: …", "B. …", "C) …" with distinct letters
 * (the prompt's options repeated) and a "Question: …" line say nothing about the choice; what is left is read.
 */
function withoutEchoedOptions(text: string): { text: string; echoed: boolean } {
  const lines = text.split(/\r?\n/);
  const optionLine = /^\s*\(?([A-Z])[:.)]\s+\S/;
  const letters = new Set(lines.flatMap((l) => optionLine.exec(l)?.[1] ?? []));
  if (letters.size < 3) return { text, echoed: false };
  const kept = lines.filter((l) => !optionLine.test(l) && !/^\s*question\s*:/i.test(l));
  return { text: kept.join("\n").trim(), echoed: true };
}

/** Two or more capital letters joined by separators anywhere: "Both A and B are consistent with …". */
function inTextLetterSets(text: string, context: ParseContext): string[][] {
  const sets: string[][] = [];
  for (const m of text.matchAll(/(?<![\w])([A-Z])(?:\s*(?:,|&|\band\b)\s*[A-Z](?![\w]))+/g)) {
    const letters = lettersIn(m[0].replace(/\band\b/g, " "));
    if (letters.every((l) => context.letters.includes(l))) sets.push(letters);
  }
  return sets;
}

/** Options whose whole text the answer gives instead of a letter (longest texts first, each counted once). */
function optionTextLetters(text: string, context: ParseContext): string[] {
  if (!context.options) return [];
  const answer = ` ${normalise(text)} `;
  const byLength = context.options
    .map((o, i) => ({ text: normalise(o), letter: context.letters[i]! }))
    .filter((o) => o.text.length >= 3)
    .sort((a, b) => b.text.length - a.text.length);
  let rest = answer;
  const letters: string[] = [];
  for (const o of byLength) {
    const needle = ` ${o.text} `;
    if (rest.includes(needle)) {
      letters.push(o.letter);
      rest = rest.replace(needle, " ");
    }
  }
  return letters;
}

function judged(letters: string[], rule: ParseRule, context: ParseContext): ParsedAnswer {
  const distinct = [...new Set(letters)];
  const outside = distinct.filter((l) => !context.letters.includes(l));
  if (outside.length) return result("ambiguous", [], null, `letter ${outside.join(", ")} is not an option`);
  if (distinct.length > 1 && !context.allowSet) {
    return result("ambiguous", [], null, `several letters (${distinct.sort().join(", ")}) where one is required`);
  }
  return result("parsed", distinct, rule);
}

export function parseAnswer(raw: string, context: ParseContext): ParsedAnswer {
  const unechoed = withoutEchoedOptions(raw.replace(/<think>[\s\S]*?<\/think>/gi, " "));
  const text = clean(unechoed.text);
  if (text === "")
    return unechoed.echoed
      ? result("ambiguous", [], null, "repeats the options without choosing one")
      : result("empty", [], null, null);
  const json = jsonLetters(unechoed.text.trim());
  if (json) return judged(json, "json", context);
  const body = text.replace(/^(?:answer|output|selection|final answer|the answer is)\s*[:-]?\s*/i, "");

  const lone = /^\(?([a-z])\)?\.?$/i.exec(body);
  if (lone) return judged([lone[1]!.toUpperCase()], "letter", context);

  const leading = leadingLetters(body);
  if (leading) {
    // "A or B" hedges between options: neither is the answer.
    if (/^\s*(?:or)\b/i.test(leading.rest)) return result("ambiguous", [], null, 'hedges between options ("or")');
    return judged(leading.letters, leading.letters.length > 1 ? "letter-set" : "letter", context);
  }

  const cued = cuedLetters(text);
  if (cued.length > 0) {
    const sets = [...new Set(cued.map((c) => [...new Set(c)].sort().join("")))];
    if (sets.length > 1) return result("ambiguous", [], null, `names different answers (${sets.join(" / ")})`);
    return judged(cued[0]!, "answer-cue", context);
  }

  const sets = inTextLetterSets(text, context);
  const distinctSets = [...new Set(sets.map((c) => [...new Set(c)].sort().join("")))];
  if (distinctSets.length === 1) return judged(sets[0]!, "letter-set", context);
  if (distinctSets.length > 1)
    return result("ambiguous", [], null, `names different answers (${distinctSets.join(" / ")})`);

  const byText = optionTextLetters(body, context);
  if (byText.length > 0) return judged(byText, "option-text", context);

  if (REFUSAL.test(text)) return result("refused", [], null, "declines to choose");
  return result("ambiguous", [], null, "names no option");
}

/**
 * MentalBench's reader, as its evaluation scripts apply it (docs/mc-evaluation.md, "Reference-compatible accuracy"):
 * upper-case, drop one leading "ANSWER"/"OUTPUT"/"SELECTION"/"THE ANSWER IS" with the colons, spaces and hyphens
 * after it, then take the first run of letters A–D joined by ",", "&" or "and" anywhere in the text, and its letters.
 * Because the text is upper-cased first, "AND" never matches the lower-case "and" of the separator, and the first
 * A–D anywhere (inside a word too) is taken: "BIPOLAR" reads as {B}. Reproduced on purpose, for comparability.
 */
export function referenceLetters(raw: string): string[] {
  let text = raw.toUpperCase();
  text = text.trim().replace(/^(?:ANSWER|OUTPUT|SELECTION|THE ANSWER IS)[:\s-]*/, "");
  const m = /([A-D](?:\s*(?:,|&|and)\s*[A-D])*)/.exec(text);
  if (!m) return [];
  return [...new Set(m[1]!.match(/[A-D]/g) ?? [])].sort();
}

/**
 * MENTAT's reading (eval_openai.py when a model returns text, not log-probabilities): the model's distribution is
 * {content[0]: 1.} over the tokens A–E, and check_is_correct takes model_probs.index(max(model_probs)). A first
 * character other than A–E gives NaN probabilities, which that index reads as A: so "Answer: B", " B" and "b" read
 * as A, "Choice D" as C. An empty answer has no first character (MENTAT's code raises): "empty" here.
 */
export function mentatReading(raw: string): ParsedAnswer {
  const first = [...raw][0];
  if (first === undefined) return result("empty", [], null, null);
  return result("parsed", ["ABCDE".includes(first) ? first : "A"], "first-character");
}

/** MentalBench's reading (referenceLetters): the letters it finds, or "ambiguous" when it finds none. */
export function mentalBenchReading(raw: string): ParsedAnswer {
  const letters = referenceLetters(raw);
  if (letters.length === 0) return result("ambiguous", [], null, "MentalBench's reader finds no letter A–D");
  return result("parsed", letters, "mentalbench");
}
