/**
 * The rules every blinded workspace shares (docs/architecture.md, "The work-item engine"): the states of one person's
 * work on one item, the one versioning convention, the result shapes and their wording, "next open item", and how a
 * change is recorded in the audit trail. Pure: the server side is app/work-items/engine.server.ts.
 */

/** One person's work on one item. `locked`: final, changes go through someone else (annotation pairs). */
export type WorkState = "not_started" | "draft" | "submitted" | "locked";

export const WORK_STATE_LABELS: Record<WorkState, string> = {
  not_started: "not started",
  draft: "draft",
  submitted: "submitted",
  locked: "locked",
};

/** What a save asks for: a draft (saved as the person works) or a submission (checked, then final or revisable). */
export type Intent = "draft" | "submit";

export type FieldErrors = Record<string, string>;

/**
 * What every save answers. Versions: 0 means nothing saved yet; every write adds one; a save names the version it
 * read and is refused (409, nothing written) when the row has moved on.
 */
export type SaveResult<X extends object = object> =
  ({ ok: true; version: number; savedAt: number; state: WorkState } & X) | SaveRefusal;

export type SaveRefusal =
  { ok: false; status: 404 | 409; message: string } | { ok: false; status: 422; message: string; errors: FieldErrors };

/** The one wording of the refusals; `noun` names the work ("annotation", "vote", …). */
export const WORK_MESSAGES = {
  notFound: "Not found.",
  changedElsewhere: (noun: string) =>
    `This ${noun} was changed in another window or tab: nothing was overwritten, and your input stays in the form to copy before you reload.`,
  submitted: (noun: string) => `This ${noun} is submitted: use “Save revision” to change it.`,
  incomplete: (noun: string) => `The ${noun} is incomplete or invalid; see the marked fields.`,
} as const;

export const notFound = (): SaveRefusal => ({ ok: false, status: 404, message: WORK_MESSAGES.notFound });
export const conflict = (message: string): SaveRefusal => ({ ok: false, status: 409, message });
export const invalid = (message: string, errors: FieldErrors): SaveRefusal => ({
  ok: false,
  status: 422,
  message,
  errors,
});

/** Open work: anything not yet submitted (and not locked). */
export const isOpen = (state: WorkState): boolean => state === "not_started" || state === "draft";

/**
 * The next item to work on after position `at` of `rows` (−1: from the top): the first open one after it or, wrapping
 * around, before it. `open` says which rows still need work (by default, those whose state is open).
 */
export function nextOpenItem<T extends { state: WorkState }>(
  rows: readonly T[],
  at: number,
  open: (row: T) => boolean = (r) => isOpen(r.state),
): T | null {
  return rows.slice(at + 1).find(open) ?? rows.slice(0, Math.max(at, 0)).find(open) ?? null;
}

/**
 * The item before position `at` of `rows` in the list's order, whatever its state (the keymap's "previous" key walks
 * back through the list), or null at the top.
 */
export function previousItem<T>(rows: readonly T[], at: number): T | null {
  return at > 0 ? (rows[at - 1] ?? null) : null;
}

/** Done (submitted or locked) and total, for the progress shown in every workspace. */
export function progressOf(rows: readonly { state: WorkState }[]): { done: number; total: number } {
  return { done: rows.filter((r) => !isOpen(r.state)).length, total: rows.length };
}

/** How free text appears in the audit trail: that it changed, never its words (it may hold clinical detail). */
export const FREE_TEXT_CHANGED: [string, string] = ["(text)", "(changed)"];

/**
 * Field-by-field differences between two snapshots as { field: [old, new] }; a missing value counts as null, and the
 * fields named in `freeText` are recorded as changed without their text.
 */
export function auditChanges(
  before: Record<string, unknown> | null,
  after: Record<string, unknown>,
  freeText: readonly string[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(after)) {
    const a = before?.[key] ?? null;
    const b = after[key] ?? null;
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    out[key] = freeText.includes(key) ? FREE_TEXT_CHANGED : [a, b];
  }
  return out;
}
