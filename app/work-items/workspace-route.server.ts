/**
 * The loader and action prologue every workspace route shares (docs/architecture.md, "The work-item engine"): the
 * role check, the CSRF check, reading the draft-or-submit post, calling the protocol's save, and the answer with the
 * save's real status (422 for a malformed or invalid post, 409 for a conflict, 503 with Retry-After when the database
 * is busy, 507 when the disk is full) and the new version in X-Concord-Version. A route names only its role, its
 * value schema and its save; its page re-exports `app/work-items/ui/save-action.ts`.
 */
import type { z } from "zod";
import { requireById, requireForm, requireRole, type AuthUser } from "../accounts/guard.server";
import type { Role } from "../accounts/roles";
import { guidelinesForItem, type WorkspaceKind } from "../guidelines/guidelines.server";
import { getDb, type Db } from "../platform/db.server";
import { parseDraftPost, type DraftIntent } from "../platform/forms";
import { saveResponse, unlessOutOfSpace } from "../platform/storage-errors.server";

/** What a workspace's save is given once the post has been read: the item, the values, and the page's state. */
export interface DraftPostInput<V> {
  userId: string;
  /** The item's id from the URL. */
  id: number;
  values: V;
  /** The version the page read (0 before the first save). */
  version: number;
  intent: DraftIntent;
  /** Time on task the page measured since its previous save (docs/statistics.md, "Time on task"). */
  activeMs: number;
}

export interface DraftPostSpec<S extends z.ZodType, R> {
  schema: S;
  /** The longest `values` field read; a longer one is refused at its field or as too long (app/platform/forms.ts). */
  maxLength: number;
  /** "message": the first field error is also the message above the fields. */
  report?: "message";
  save(db: Db, input: DraftPostInput<z.infer<S>>): R;
}

/**
 * Reads a draft-or-submit post already checked for its CSRF token and answers with the save's result: 422 for a
 * malformed post or values the schema refuses, else the save's own status, a full disk or a busy database included.
 */
export function answerDraftPost<S extends z.ZodType, R extends { ok: boolean; status?: unknown }>(
  form: FormData,
  user: AuthUser,
  id: string | undefined,
  spec: DraftPostSpec<S, R>,
) {
  const post = parseDraftPost(form, spec.schema, { id, maxLength: spec.maxLength, report: spec.report });
  if (!post.ok) return saveResponse(post.failure);
  const { ok: _, ...input } = post;
  return saveResponse(unlessOutOfSpace(() => spec.save(getDb(), { userId: user.id, ...input })));
}

/** A workspace's action: only a user with `role`, only with the session's CSRF token, then `answerDraftPost`. */
export async function workspaceAction<S extends z.ZodType, R extends { ok: boolean; status?: unknown }>(
  request: Request,
  role: Role,
  id: string | undefined,
  spec: DraftPostSpec<S, R>,
) {
  const user = await requireRole(request, role);
  const form = await requireForm(request, user);
  return answerDraftPost(form, user, id, spec);
}

/**
 * A workspace's loader: only a user with `role`; the item found by `find` with the user's id in the query, so an item
 * that is not theirs (or no item at all) answers 404 with `notFound` (ids reveal nothing); with the guidelines in
 * force for the item.
 */
export async function workspaceLoader<T>(
  request: Request,
  role: Role,
  id: string | undefined,
  spec: {
    find(db: Db, userId: string, id: number): T | null | undefined;
    guidelines: WorkspaceKind;
    /** The item's id as the guidelines know it (the case of an annotation, the item of a rating, …). */
    itemId(view: T): number;
    notFound?: string;
  },
) {
  const user = await requireRole(request, role);
  const db = getDb();
  const view = requireById(id, (itemId) => spec.find(db, user.id, itemId), spec.notFound);
  return { ...view, guidelines: guidelinesForItem(db, spec.guidelines, spec.itemId(view), user.id) };
}
