import type { z } from "zod";

export type FieldErrors = Record<string, string>;

/** Parses form fields with a zod schema; errors keyed by field, first message each, for display at the field. */
export function parseForm<S extends z.ZodType>(
  schema: S,
  input: Record<string, unknown>,
): { ok: true; data: z.infer<S> } | { ok: false; errors: FieldErrors } {
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, data: result.data };
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const key = issue.path.length ? issue.path.join(".") : "_form";
    errors[key] ??= issue.message;
  }
  return { ok: false, errors };
}

/** Form data as a plain object; repeated fields (checkbox groups) become arrays. */
export function formObject(form: FormData, arrays: string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of new Set(form.keys())) {
    if (key === "csrf") continue;
    const all = form.getAll(key);
    out[key] = arrays.includes(key) ? all.map(String) : typeof all[0] === "string" ? all[0] : all[0];
  }
  for (const key of arrays) out[key] ??= [];
  return out;
}

/** "a=b, c=d" → { a: "b", c: "d" }; null when malformed. */
export function parseColumnMap(text: string): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const part of text.split(/[,\n]/).map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf("=");
    if (eq <= 0 || eq === part.length - 1) return null;
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}
