import type { z } from "zod";
import { formObject, parseForm, type FieldErrors } from "./forms";

/** One action of a form: an object whose `intent` is the value of the button that sends it. */
type IntentOption = z.ZodObject<{ intent: z.ZodLiteral<string> } & z.ZodRawShape>;

/** The actions of one route, as a zod discriminated union on `intent`. */
export type IntentSchema = z.ZodDiscriminatedUnion<readonly IntentOption[], "intent">;

export type IntentParse<S extends IntentSchema> =
  { ok: true; data: z.output<S> } | { ok: false; intent: z.output<S>["intent"]; errors: FieldErrors; message: string };

/**
 * Reads a form that names its action in an `intent` field (one route, several buttons). An intent the schema does
 * not list comes from no page of ours, so it is refused as a bad request (400) before any field is read. For a known
 * intent the fields are checked with its object: refused values come back keyed by field (first message each), with
 * the first one as `message` for pages that show a single notice. `arrays` names the repeated fields (checkbox
 * groups), read as lists.
 */
export function parseIntent<S extends IntentSchema>(
  form: FormData,
  schema: S,
  opts: { arrays?: string[] } = {},
): IntentParse<S> {
  const intent = form.get("intent");
  const known = schema.options.some((option) => option.shape.intent.values.has(intent as string));
  if (typeof intent !== "string" || !known)
    throw new Response("Unknown form action. Reload the page.", { status: 400, statusText: "Bad Request" });
  const parsed = parseForm(schema, formObject(form, opts.arrays));
  if (parsed.ok) return { ok: true, data: parsed.data };
  return {
    ok: false,
    intent: intent as z.output<S>["intent"],
    errors: parsed.errors,
    message: Object.values(parsed.errors)[0]!,
  };
}
