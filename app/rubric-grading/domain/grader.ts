/**
 * The grader's request for one rubric criterion, as HealthBench's grader builds it (docs/rubric-grading.md,
 * "Grading"): the conversation plus the candidate's response rendered as `role: content` blocks joined by a blank
 * line, put into the grader template with the rubric item rendered as `[points] criterion`, sent as one user message
 * after the grader's system message.
 */
import type { Message, RubricItem } from "./eval-set";

export interface GraderText {
  template: string;
  systemMessage: string;
}

/**
 * Python's `str()` of the JSON number the reference read. JSON integers stay Python ints ("5", "-3"); other values
 * print as the shortest round-trip decimal, which JavaScript shares with Python for ordinary magnitudes. A source
 * that writes an integral value as `5.0` would print `[5.0]` in Python and prints `[5]` here (docs/rubric-grading.md).
 */
export function pythonNumber(n: number): string {
  if (Number.isInteger(n)) return String(n);
  const s = String(n);
  // Python writes exponents with at least two digits (1e-07) and an explicit sign.
  return s.replace(/e([+-])(\d)$/, "e$10$2");
}

export function rubricItemText(item: Pick<RubricItem, "criterion" | "points">): string {
  return `[${pythonNumber(item.points)}] ${item.criterion}`;
}

export function conversationText(prompt: readonly Message[], response: string): string {
  return [...prompt, { role: "assistant", content: response }].map((m) => `${m.role}: ${m.content}`).join("\n\n");
}

/**
 * Python's `str.replace` replaces every occurrence and reads no `$` patterns; split/join does the same. The
 * conversation goes in first, so a conversation that itself contains `<<rubric_item>>` has it replaced too, exactly
 * as the reference does.
 */
function replaceAll(text: string, placeholder: string, value: string): string {
  return text.split(placeholder).join(value);
}

export function graderPrompt(template: string, conversation: string, item: Pick<RubricItem, "criterion" | "points">) {
  return replaceAll(replaceAll(template, "<<conversation>>", conversation), "<<rubric_item>>", rubricItemText(item));
}

export function graderMessages(
  text: GraderText,
  prompt: readonly Message[],
  response: string,
  item: Pick<RubricItem, "criterion" | "points">,
): Message[] {
  return [
    { role: "system", content: text.systemMessage },
    { role: "user", content: graderPrompt(text.template, conversationText(prompt, response), item) },
  ];
}
