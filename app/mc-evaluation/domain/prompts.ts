/**
 * The messages sent for one item (docs/mc-evaluation.md, "Prompts"): each paper's prompt format, with the texts in
 * app/data/mc-evaluation/ (see its README for their provenance). Pure: the texts are passed in.
 */
import type { ChatMessage } from "../../evaluation/public";
import { PyRandom } from "../../python-compat/random";
import type { McItem, MentatItem } from "./items";

export interface McPromptTexts {
  /** MENTAT's system message. */
  mentatSystem: string;
  /** MentalBench's templates with `{question}` and `{options}`. */
  mentalbenchSingle: string;
  mentalbenchMultiple: string;
  mentalbenchClear: string;
}

export const PROMPT_FILES: Record<keyof McPromptTexts, string> = {
  mentatSystem: "mentat-system.txt",
  mentalbenchSingle: "mentalbench-single.txt",
  mentalbenchMultiple: "mentalbench-multiple.txt",
  mentalbenchClear: "mentalbench-clear.txt",
};

/**
 * MentalBench's prompt styles: `paper` asks Types I–II for the single best answer and Types III–IV to select all
 * that apply (the scripts' defaults); `single` and `clear` use one template for every type (their --prompt_style).
 */
export const MENTALBENCH_STYLES = ["paper", "single", "clear"] as const;
export type MentalBenchStyle = (typeof MENTALBENCH_STYLES)[number];

/** Python's str.format with named fields, done in one pass so that braces inside the values stay as they are. */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
}

/** The letter of an item's best label (the first on ties, as Python's list.index(max(…))). */
export function topLetter(labels: readonly number[]): string {
  let best = 0;
  for (let i = 1; i < labels.length; i++) if (labels[i]! > labels[best]!) best = i;
  return "ABCDE"[best]!;
}

export function buildMessages(
  item: McItem,
  texts: McPromptTexts,
  options: { style: MentalBenchStyle; fewShot: readonly MentatItem[] },
): ChatMessage[] {
  if (item.kind === "mentalbench") {
    const template =
      options.style === "single"
        ? texts.mentalbenchSingle
        : options.style === "clear"
          ? texts.mentalbenchClear
          : item.type === "I" || item.type === "II"
            ? texts.mentalbenchSingle
            : texts.mentalbenchMultiple;
    return [{ role: "user", content: fill(template, { question: item.question, options: item.optionsText }) }];
  }
  const shots = options.fewShot.flatMap((shot): ChatMessage[] => [
    { role: "user", content: shot.prompt },
    { role: "assistant", content: topLetter(shot.labels) },
  ]);
  return [{ role: "system", content: texts.mentatSystem }, ...shots, { role: "user", content: item.prompt }];
}

export interface FewShotSplit {
  /** Base questions held out for few-shot examples, in their shuffled order. */
  fewShotQuestions: string[];
  evaluationQuestions: Set<string>;
}

/**
 * MENTAT's 90% evaluation / 10% few-shot split of the base questions (docs/mc-evaluation.md, "Prompts": 183 and 20 of 203):
 * the distinct question ids sorted, `random.Random(seed).shuffle`d, the first ⌊n · fraction⌋ held out. Every
 * variant of a held-out question leaves the evaluation with it, so no example is also asked.
 */
export function fewShotSplit(questionIds: readonly string[], seed: number, fraction = 0.1): FewShotSplit {
  const ids = [...new Set(questionIds)].sort();
  new PyRandom(seed).shuffle(ids);
  const k = Math.floor(ids.length * fraction + 1e-9);
  return { fewShotQuestions: ids.slice(0, k), evaluationQuestions: new Set(ids.slice(k)) };
}

/**
 * The example records of the held-out questions: per question its base record when the file has one, else its
 * first record by id; the first `shots` questions of the shuffled order.
 */
export function fewShotExamples(items: readonly MentatItem[], split: FewShotSplit, shots: number): MentatItem[] {
  const examples: MentatItem[] = [];
  for (const q of split.fewShotQuestions) {
    if (examples.length >= shots) break;
    const mine = items.filter((i) => i.questionId === q).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const pick = mine.find((i) => i.dataset === "base") ?? mine[0];
    if (pick) examples.push(pick);
  }
  return examples;
}
