/**
 * One answered item as a run stores it in `responses.jsonl` (docs/mc-evaluation.md, "Run folders"): what was asked,
 * the raw answer, how it was read, and the item facts that scoring needs, so a report needs nothing but the run.
 */
import { z } from "zod";
import type { ChatMessage } from "../../evaluation/public";
import { CASE_TYPES, MENTALBENCH_LETTERS, MENTAT_LETTERS, type McItem } from "./items";
import { parseAnswer, referenceLetters, type ParsedAnswer } from "./parse";

export const ParsedAnswerSchema = z.object({
  status: z.enum(["parsed", "ambiguous", "refused", "empty"]),
  letters: z.array(z.string()),
  rule: z
    .enum(["letter", "letter-set", "answer-cue", "option-text", "json", "first-character", "mentalbench"])
    .nullable(),
  reason: z.string().nullable(),
});

const MentatFactsSchema = z.object({
  kind: z.literal("mentat"),
  question_id: z.string(),
  dataset: z.string(),
  domain: z.string(),
  demographics: z.object({ gender: z.string().nullable(), age: z.number().nullable(), race: z.string().nullable() }),
  labels: z.array(z.number()).length(5),
  label_source: z.enum(["preference", "intended"]),
});

const MentalBenchFactsSchema = z.object({
  kind: z.literal("mentalbench"),
  type: z.enum(CASE_TYPES),
  disease: z.string(),
  cluster: z.string().nullable(),
  answer: z.array(z.string()).min(1),
});

export const ResponseRecordSchema = z.object({
  item_id: z.string(),
  facts: z.discriminatedUnion("kind", [MentatFactsSchema, MentalBenchFactsSchema]),
  messages: z.array(z.object({ role: z.string(), content: z.string() })),
  raw: z.string(),
  parse: ParsedAnswerSchema,
  /** MentalBench's own reading of the answer (its extract_answer), for the reference-compatible accuracy. */
  reference_letters: z.array(z.string()).nullable(),
  attempts: z.number().int(),
  elapsed_ms: z.number(),
});
export type ResponseRecord = z.infer<typeof ResponseRecordSchema>;
/** What scoring reads of a record: everything but the prompt and the raw answer. */
export type ScoredRecord = Omit<ResponseRecord, "messages" | "raw">;
export type ItemFacts = ResponseRecord["facts"];

export function factsOf(item: McItem): ItemFacts {
  if (item.kind === "mentat") {
    return {
      kind: "mentat",
      question_id: item.questionId,
      dataset: item.dataset,
      domain: item.domain,
      demographics: item.demographics,
      labels: item.labels,
      label_source: item.labelSource,
    };
  }
  return { kind: "mentalbench", type: item.type, disease: item.disease, cluster: item.cluster, answer: item.answer };
}

export function readAnswer(item: McItem, raw: string): { parse: ParsedAnswer; reference: string[] | null } {
  if (item.kind === "mentat") {
    return {
      parse: parseAnswer(raw, { letters: MENTAT_LETTERS, options: item.options, allowSet: false }),
      reference: null,
    };
  }
  return {
    parse: parseAnswer(raw, {
      letters: MENTALBENCH_LETTERS,
      options: item.options,
      allowSet: item.type === "III" || item.type === "IV",
    }),
    reference: referenceLetters(raw),
  };
}

export function responseRecord(
  item: McItem,
  messages: ChatMessage[],
  raw: string,
  attempts: number,
  elapsedMs: number,
): ResponseRecord {
  const { parse, reference } = readAnswer(item, raw);
  return {
    item_id: item.id,
    facts: factsOf(item),
    messages: messages.map((m) => ({ role: m.role, content: m.content })),
    raw,
    parse,
    reference_letters: reference,
    attempts,
    elapsed_ms: Math.round(elapsedMs),
  };
}
