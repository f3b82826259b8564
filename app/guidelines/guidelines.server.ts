/**
 * Guidelines and codebooks of every kind of study (docs/guidelines.md): the versions an admin writes, the version
 * in force, and the rendered text a workspace shows. Editing adds a version; nothing is ever overwritten.
 */
import { createHash } from "node:crypto";
import { and, desc, eq } from "drizzle-orm";
import { z } from "zod";
import { guidelineSeen, guidelineVersions, users } from "../../db/schema";
import { recordEvent } from "../audit/audit.server";
import { type Db, type DbOrTx } from "../platform/db.server";
import {
  guidelineScope,
  guidelineScopeOfWorkspace,
  type GuidelineScopeRegistration,
} from "../platform/registry.server";
import { writeTransaction } from "../work-items/engine.server";
import { latest } from "./versions.server";
import {
  GUIDELINES_MAX,
  renderGuidelines,
  type GuidelineRef,
  type GuidelinesAdmin,
  type GuidelinesView,
} from "./domain/guidelines";

/**
 * Rendered guidelines by text: a version is never edited, so every workspace page of a study renders the same text
 * again; the last few renderings are kept (a Map in insertion order, the oldest dropped first).
 */
const rendered = new Map<string, string>();
const RENDERED_KEPT = 32;

function renderedGuidelines(body: string): string {
  let html = rendered.get(body);
  if (html === undefined) {
    html = renderGuidelines(body);
    if (rendered.size >= RENDERED_KEPT) rendered.delete(rendered.keys().next().value!);
    rendered.set(body, html);
  }
  return html;
}

/**
 * The version in force, rendered, for a workspace; null when the study has none (or only an empty text). With the
 * viewing person's id, `firstVisit` says whether they have yet to be shown this version (the panel then opens by
 * itself; it records the showing through `markGuidelinesSeen`).
 */
export function guidelinesView(db: DbOrTx, ref: GuidelineRef, viewerId?: string): GuidelinesView | null {
  const row = latest(db, ref);
  if (!row || row.body.trim() === "") return null;
  const view = { scope: ref.scope, scopeId: ref.scopeId, version: row.version, html: renderedGuidelines(row.body) };
  if (viewerId === undefined) return view;
  const seen = db
    .select({ version: guidelineSeen.version })
    .from(guidelineSeen)
    .where(
      and(
        eq(guidelineSeen.userId, viewerId),
        eq(guidelineSeen.scope, ref.scope),
        eq(guidelineSeen.scopeId, ref.scopeId),
      ),
    )
    .get();
  return { ...view, firstVisit: (seen?.version ?? 0) < row.version };
}

/**
 * Records that `userId` has been shown version `version` of a study's guidelines and says whether it was new to
 * them (docs/guidelines.md, "In the workspaces"): true on their first visit to the study's workspace, and once after
 * each newer version — on any browser, since it is stored per person. The check and the write are one transaction,
 * so two tabs opening at once open the panel in one of them only. A version the study does not have records
 * nothing and answers false.
 */
export function markGuidelinesSeen(
  db: Db,
  input: GuidelineRef & { userId: string; version: number; now: number },
): { firstVisit: boolean } {
  return writeTransaction(db, (tx) => {
    const exists = tx
      .select({ version: guidelineVersions.version })
      .from(guidelineVersions)
      .where(
        and(
          eq(guidelineVersions.scope, input.scope),
          eq(guidelineVersions.scopeId, input.scopeId),
          eq(guidelineVersions.version, input.version),
        ),
      )
      .get();
    if (!exists) return { firstVisit: false };
    const key = and(
      eq(guidelineSeen.userId, input.userId),
      eq(guidelineSeen.scope, input.scope),
      eq(guidelineSeen.scopeId, input.scopeId),
    );
    const seen = tx.select({ version: guidelineSeen.version }).from(guidelineSeen).where(key).get();
    if (seen && seen.version >= input.version) return { firstVisit: false };
    if (seen) tx.update(guidelineSeen).set({ version: input.version, seenAt: input.now }).where(key).run();
    else
      tx.insert(guidelineSeen)
        .values({
          userId: input.userId,
          scope: input.scope,
          scopeId: input.scopeId,
          version: input.version,
          seenAt: input.now,
        })
        .run();
    return { firstVisit: true };
  });
}

export function guidelinesAdmin(db: DbOrTx, ref: GuidelineRef): GuidelinesAdmin {
  const rows = db
    .select({
      version: guidelineVersions.version,
      body: guidelineVersions.body,
      createdAt: guidelineVersions.createdAt,
      author: users.username,
    })
    .from(guidelineVersions)
    .leftJoin(users, eq(users.id, guidelineVersions.createdBy))
    .where(and(eq(guidelineVersions.scope, ref.scope), eq(guidelineVersions.scopeId, ref.scopeId)))
    .orderBy(desc(guidelineVersions.version))
    .all();
  const top = rows[0];
  return {
    ...ref,
    current: top ? { version: top.version, body: top.body, html: renderGuidelines(top.body) } : null,
    versions: rows.map((r) => ({ version: r.version, createdAt: r.createdAt, author: r.author })),
  };
}

/** Writes version 1 of a study's guidelines (the template's text) inside the transaction that creates the study. */
export function seedGuidelines(tx: DbOrTx, ref: GuidelineRef, body: string, now: number): void {
  tx.insert(guidelineVersions)
    .values({ ...ref, version: 1, body, createdAt: now, createdBy: null })
    .run();
}

/** Whether the study exists, as its protocol registered (app/platform/registry.server.ts). */
function studyExists(db: DbOrTx, ref: GuidelineRef): boolean {
  return guidelineScope(ref.scope).studyExists(db, ref.scopeId);
}

export const GuidelinesEditSchema = z.object({
  body: z
    .string()
    .max(GUIDELINES_MAX, `The guidelines have at most ${GUIDELINES_MAX.toLocaleString("en")} characters.`),
  /** The version the editor was opened at (0: none), so two admins editing at once do not overwrite each other. */
  basedOn: z.coerce.number().int().min(0),
});

export type GuidelinesSave =
  { ok: true; version: number; changed: boolean } | { ok: false; status: 404 | 409; message: string };

/**
 * Saves an edit as a new version. An edit of an older version than the one in force is refused (409), and an
 * unchanged text writes nothing.
 */
export function saveGuidelines(
  db: Db,
  input: { ref: GuidelineRef; body: string; basedOn: number; actorId: string; now?: number },
): GuidelinesSave {
  const now = input.now ?? Date.now();
  const body = input.body.replace(/\r\n?/g, "\n");
  return writeTransaction(db, (tx): GuidelinesSave => {
    if (!studyExists(tx, input.ref)) return { ok: false, status: 404, message: "No such study." };
    const top = latest(tx, input.ref);
    const current = top?.version ?? 0;
    if (current !== input.basedOn)
      return {
        ok: false,
        status: 409,
        message: `The guidelines were changed (now version ${current}) since you opened them. Nothing was saved: copy your text, reload and edit again.`,
      };
    if (top && top.body === body) return { ok: true, version: current, changed: false };
    const version = current + 1;
    tx.insert(guidelineVersions)
      .values({ ...input.ref, version, body, createdAt: now, createdBy: input.actorId })
      .run();
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "guidelines",
      entityId: `${input.ref.scope}:${input.ref.scopeId}`,
      // A kind of study whose events carry the study records the edit under it.
      studyId: guidelineScope(input.ref.scope).submissionsByVersion ? input.ref.scopeId : undefined,
      action: "edit",
      changes: { version: [current || null, version] },
      at: now,
    });
    return { ok: true, version, changed: true };
  });
}

/**
 * What an export's manifest records about the guidelines: the version in force and its text's sha256, and (when the
 * exporting protocol counts them, as Safe-Psych's registration does) how many submissions were made under each
 * version. The exporter passes the count itself rather than this asking the registry: exports also run in the
 * command line and on worker threads, which do not load the composition root.
 */
export function guidelinesManifest(
  db: DbOrTx,
  ref: GuidelineRef,
  submissionsByVersion?: GuidelineScopeRegistration["submissionsByVersion"],
): { version_in_force: number | null; sha256: string | null; submissions_by_version?: Record<string, number> } {
  const top = latest(db, ref);
  const out: ReturnType<typeof guidelinesManifest> = {
    version_in_force: top?.version ?? null,
    sha256: top ? createHash("sha256").update(top.body, "utf8").digest("hex") : null,
  };
  if (submissionsByVersion) out.submissions_by_version = submissionsByVersion(db, ref.scopeId);
  return out;
}

/** A workspace, named as its route names it; each protocol registers its own (app/platform/registry.server.ts). */
export type WorkspaceKind = string;

/**
 * The guidelines of the study a workspace item belongs to. Call it only after the route has found the item as the
 * user's own (the ownership check stays in the item's service); an id that matches nothing gives null.
 */
export function guidelinesForItem(
  db: DbOrTx,
  kind: WorkspaceKind,
  itemId: number,
  viewerId?: string,
): GuidelinesView | null {
  const registration = guidelineScopeOfWorkspace(kind);
  const scopeId = registration.studyOfItem(db, kind, itemId);
  return scopeId === null ? null : guidelinesView(db, { scope: registration.scope, scopeId }, viewerId);
}
