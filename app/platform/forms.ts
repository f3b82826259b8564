import { z } from "zod";
import { MAX_ACTIVE_MS_PER_SAVE } from "../work-items/domain/active-time";

export type FieldErrors = Record<string, string>;

/** A zod schema's issues at their fields: the first message of each top-level field (`_form` for the whole). */
function issueFieldErrors(issues: readonly z.ZodIssue[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of issues) errors[String(issue.path[0] ?? "_form")] ??= issue.message;
  return errors;
}

/**
 * The field errors the server's parse of a workspace's values (parseDraftPost) would answer, computed in the page
 * from the same schema, so that they show at once and at the same fields (docs/architecture.md, "One workspace
 * page").
 */
export function schemaFieldErrors(schema: z.ZodType, values: unknown): FieldErrors {
  const parsed = schema.safeParse(values);
  return parsed.success ? {} : issueFieldErrors(parsed.error.issues);
}

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
  for (const part of text
    .split(/[,\n]/)
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = part.indexOf("=");
    if (eq <= 0 || eq === part.length - 1) return null;
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

const IdSchema = z.coerce.number().int().positive();

/** A route parameter as a row id: a positive whole number, or null for anything else (which names no row). */
export function parseId(param: string | undefined): number | null {
  const id = IdSchema.safeParse(param);
  return id.success ? id.data : null;
}

export type DraftIntent = "draft" | "submit";

const MALFORMED = "The form was malformed. Reload the page.";
const INVALID = "Some values are not valid; see the marked fields.";
const TOO_LONG = "The texts are too long to save; shorten them (nothing was saved, the page keeps them).";
/** How far over `maxLength` a post is still parsed to find the field that is too long. */
const OVERSIZE_FACTOR = 20;

/**
 * How refused values are reported: `fields` (the default) marks each field with its first problem under one message;
 * `message` says the first problem's own message above the fields instead (the fields are marked either way).
 */
export type DraftReport = "fields" | "message";

/** A refused save, as the workspaces' save results carry it (the work-item engine's 422 shape). */
export type DraftPostFailure = { ok: false; status: 422; message: string; errors: FieldErrors };

/**
 * The fields around the values, built once: building a zod schema (and compiling its parser at the first use) costs
 * more than parsing with it, and every autosave of every workspace comes through here.
 */
const DraftPostSchema = z.object({
  intent: z.enum(["draft", "submit"]),
  version: z.coerce.number().int().min(0),
  values: z.string(),
  // Time on task since the previous save (app/work-items/ui/use-active-time.ts); absent from older pages.
  activeMs: z.coerce.number().int().min(0).max(MAX_ACTIVE_MS_PER_SAVE).default(0),
});

/**
 * The post of a workspace (draft autosave or submission, app/work-items/ui/use-save-state.ts): the id in the route, the intent,
 * the version the page read (optimistic concurrency) and the values as one JSON field, checked with `schema`.
 * Anything but the values being wrong is a malformed form (422): the page itself never sends one.
 */
export function parseDraftPost<S extends z.ZodType, R extends DraftReport = "fields">(
  form: FormData,
  schema: S,
  opts: { id: string | undefined; maxLength: number; report?: R },
):
  | { ok: true; id: number; intent: DraftIntent; version: number; values: z.infer<S>; activeMs: number }
  | { ok: false; failure: DraftPostFailure } {
  const messageOnly = opts.report === "message";
  const fail = (message: string, errors: FieldErrors) => ({
    ok: false as const,
    failure: { ok: false as const, status: 422 as const, message, errors },
  });
  const id = parseId(opts.id);
  const post = DraftPostSchema.safeParse(Object.fromEntries(form));
  if (id === null || !post.success) return fail(MALFORMED, {});
  // A values field over `maxLength` is still read (up to a hard ceiling), so that a text over its own limit is
  // reported at its field, with 422 and nothing saved, instead of as a malformed form: the page keeps the text.
  if (post.data.values.length > opts.maxLength * OVERSIZE_FACTOR) return fail(TOO_LONG, {});
  let raw: unknown;
  try {
    raw = JSON.parse(post.data.values);
  } catch {
    return fail(MALFORMED, {});
  }
  const values = schema.safeParse(raw);
  if (values.success && post.data.values.length > opts.maxLength) return fail(TOO_LONG, {});
  if (!values.success) {
    const errors = issueFieldErrors(values.error.issues);
    // Either way the fields are marked; `message` only changes what is said above them.
    return fail(messageOnly ? values.error.issues[0]!.message : INVALID, errors);
  }
  return {
    ok: true,
    id,
    intent: post.data.intent,
    version: post.data.version,
    values: values.data,
    activeMs: post.data.activeMs,
  };
}
