/**
 * Reading a judge's answer (docs/rubric-grading.md, "Verdicts"). First exactly as the reference: strip the text,
 * remove a leading ```json fence and a trailing ``` fence, parse JSON, and accept it when `criteria_met` is a
 * boolean. Where the reference would re-sample, Concord instead recovers the boolean the judge already wrote
 * (`"criteria_met": true|false` anywhere in the text), as the HealthBench-Psych paper does, so a temperature-0
 * judgement is kept rather than re-rolled. Conflicting booleans, or none, leave the verdict unread.
 */
export type VerdictStatus = "parsed" | "recovered";

export interface Verdict {
  status: VerdictStatus;
  criteriaMet: boolean;
  /** The judge's explanation when there is one (never logged). */
  explanation: string;
}

/** Python's `re.sub(r"^```json\s*|\s*```$", "", s.strip())`: `$` also matches before one final newline. */
export function stripJsonFence(text: string): string {
  const s = text.trim();
  return s.replace(/^```json\s*/, "").replace(/\s*```(?=\n?$)/, "");
}

function strictVerdict(text: string): Verdict | null {
  let value: unknown;
  try {
    value = JSON.parse(stripJsonFence(text));
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const met = (value as Record<string, unknown>).criteria_met;
  if (met !== true && met !== false) return null;
  const explanation = (value as Record<string, unknown>).explanation;
  return { status: "parsed", criteriaMet: met, explanation: typeof explanation === "string" ? explanation : "" };
}

const EMITTED = /["']?criteria_met["']?\s*:\s*(true|false)\b/gi;

export function recoverVerdict(text: string): Verdict | null {
  const values = new Set([...text.matchAll(EMITTED)].map((m) => m[1].toLowerCase() === "true"));
  if (values.size !== 1) return null;
  const explanation = /"explanation"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(text)?.[1] ?? "";
  let decoded = explanation;
  try {
    decoded = JSON.parse(`"${explanation}"`) as string;
  } catch {
    // a truncated escape: keep the raw text
  }
  return { status: "recovered", criteriaMet: [...values][0], explanation: decoded };
}

/** The verdict, or null when neither the reference's parse nor the recovery finds one. */
export function readVerdict(text: string): Verdict | null {
  return strictVerdict(text) ?? recoverVerdict(text);
}
