/**
 * Preparation projects (docs/preparation.md): the import of source-language notes with the detectors' proposals,
 * the reviewers a project names, and the admin's summaries.
 *
 * Who sees source text (docs/security.md, "Source text"): admins, and the reviewers a project names. The reviewer's
 * queries (review.server.ts) carry the membership in the query; the admin's are called only behind the admin guard.
 * A project is kept apart from the annotation studies: no study, case or annotator query reads these tables.
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import { prepNotes, prepProjects, prepReviewers, prepReviews, users } from "../../db/schema";
import type { PrepDetectorSettings, PrepSection } from "../../db/vocabulary";
import { parseCaseFile, type CaseColumn } from "../annotation/public";
import { recordEvent } from "../audit/audit.server";
import { canonicalChapterVCode } from "../icd10/icd10.server";
import type { Db, DbOrTx } from "../platform/db.server";
import { ServiceError } from "../platform/service-error";
import { writeTransaction } from "../work-items/engine.server";
import { namePatternProblem } from "./domain/detectors";
import { DEFAULT_SETTINGS, detectorConfig, proposalsOf } from "./domain/review";
import { proposalAgreement, type ProposalAgreement } from "./domain/agreement";

export const ProjectNameSchema = z
  .string()
  .trim()
  .min(1, "Give the project a name.")
  .max(80, "A project name has at most 80 characters.")
  .regex(/^[\p{L}\p{N} ._-]+$/u, "A project name may contain letters, digits, spaces, dot, underscore and hyphen.");

/** A language tag: "ro", "en", "hu", "pt-BR". */
export const LanguageSchema = z
  .string()
  .trim()
  .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, 'Name the source language as a language tag, e.g. "ro" or "pt-BR".');

export interface PrepIssue {
  line: number;
  message: string;
}

export type PrepImportResult =
  | { ok: true; projectId: number; projectName: string; notes: number; proposals: number; warnings: PrepIssue[] }
  | { ok: false; errors: PrepIssue[]; warnings: PrepIssue[] };

/** Checks a project's detector settings: a name pattern that is not a regular expression is refused. */
export function settingsProblems(settings: PrepDetectorSettings): string[] {
  return settings.namePatterns.flatMap((p) => {
    const problem = namePatternProblem(p);
    return problem ? [problem] : [];
  });
}

/**
 * Imports a project's source notes from a case file (docs/formats.md, "Case import (CSV and JSONL)"), creating the
 * project: all or nothing. The file is read whole and every bad row reported by its line; a project of that name
 * is refused (a project is imported once, so its proposals and reviews never change under a reviewer). The
 * proposals are computed here, once, with the project's settings.
 */
export function importPreparationNotes(
  db: Db,
  input: {
    projectName: string;
    language: string;
    text: string;
    filename: string;
    format?: "csv" | "jsonl";
    columnMap?: Partial<Record<CaseColumn, string>>;
    settings?: PrepDetectorSettings;
    actorId: string | null;
    now?: number;
  },
): PrepImportResult {
  const name = ProjectNameSchema.safeParse(input.projectName);
  if (!name.success) return { ok: false, errors: [{ line: 0, message: name.error.issues[0]!.message }], warnings: [] };
  const language = LanguageSchema.safeParse(input.language);
  if (!language.success)
    return { ok: false, errors: [{ line: 0, message: language.error.issues[0]!.message }], warnings: [] };
  const settings = input.settings ?? DEFAULT_SETTINGS;
  const problems = settingsProblems(settings);
  if (problems.length) return { ok: false, errors: problems.map((message) => ({ line: 0, message })), warnings: [] };
  const parsed = parseCaseFile(input.text, {
    filename: input.filename,
    format: input.format,
    columnMap: input.columnMap,
    canonicalCode: canonicalChapterVCode,
  });
  if (parsed.errors.length) return { ok: false, errors: parsed.errors, warnings: parsed.warnings };
  if (parsed.cases.length === 0)
    return { ok: false, errors: [{ line: 0, message: "the file has no notes." }], warnings: parsed.warnings };
  const config = detectorConfig(settings);
  const notes = parsed.cases.map((c, position) => {
    const sections: PrepSection[] = c.sections.map((s) => ({ order: s.order, kind: s.kind, content: s.content }));
    return { c, position, sections, proposals: proposalsOf(sections, config, language.data) };
  });
  const now = input.now ?? Date.now();
  return writeTransaction(db, (tx): PrepImportResult => {
    // The name is checked again in the write's transaction (docs/security.md, "Source text").
    if (tx.select({ id: prepProjects.id }).from(prepProjects).where(eq(prepProjects.name, name.data)).get())
      return {
        ok: false,
        errors: [{ line: 0, message: `a preparation project "${name.data}" exists already: name a new project.` }],
        warnings: parsed.warnings,
      };
    const projectId = tx
      .insert(prepProjects)
      .values({
        name: name.data,
        sourceLanguage: language.data,
        settings,
        createdAt: now,
        createdBy: input.actorId,
      })
      .returning({ id: prepProjects.id })
      .get().id;
    let proposals = 0;
    for (const n of notes) {
      tx.insert(prepNotes)
        .values({
          projectId,
          externalId: n.c.externalId,
          position: n.position,
          ageGroup: n.c.ageGroup,
          sex: n.c.sex,
          sections: n.sections,
          proposals: n.proposals,
          createdAt: now,
        })
        .run();
      proposals += n.proposals.length;
    }
    // Counts only: never a note's text (docs/security.md, "Source text").
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "prep_project",
      entityId: projectId,
      action: "import",
      changes: { name: name.data, language: language.data, notes: notes.length, proposals },
      at: now,
    });
    return { ok: true, projectId, projectName: name.data, notes: notes.length, proposals, warnings: parsed.warnings };
  });
}

export interface ProjectSummary {
  id: number;
  name: string;
  sourceLanguage: string;
  notes: number;
  reviewers: string[];
  submitted: number;
  excluded: number;
  createdAt: number;
}

/** Every project with its counts (admin). */
export function listProjects(db: Db): ProjectSummary[] {
  const projects = db.select().from(prepProjects).orderBy(asc(prepProjects.name)).all();
  return projects.map((p) => summaryOf(db, p));
}

function summaryOf(db: DbOrTx, p: typeof prepProjects.$inferSelect): ProjectSummary {
  const notes =
    db
      .select({ n: sql<number>`count(*)` })
      .from(prepNotes)
      .where(eq(prepNotes.projectId, p.id))
      .get()?.n ?? 0;
  const counts = db
    .select({
      submitted: sql<number>`count(*)`,
      excluded: sql<number>`coalesce(sum(${prepReviews.excluded}), 0)`,
    })
    .from(prepReviews)
    .innerJoin(prepNotes, eq(prepNotes.id, prepReviews.noteId))
    .where(and(eq(prepNotes.projectId, p.id), eq(prepReviews.status, "submitted")))
    .get();
  return {
    id: p.id,
    name: p.name,
    sourceLanguage: p.sourceLanguage,
    notes,
    reviewers: reviewerNames(db, p.id),
    submitted: counts?.submitted ?? 0,
    excluded: counts?.excluded ?? 0,
    createdAt: p.createdAt,
  };
}

function reviewerNames(db: DbOrTx, projectId: number): string[] {
  return db
    .select({ username: users.username })
    .from(prepReviewers)
    .innerJoin(users, eq(users.id, prepReviewers.userId))
    .where(eq(prepReviewers.projectId, projectId))
    .orderBy(asc(users.username))
    .all()
    .map((r) => r.username);
}

export function getProject(db: Db, projectId: number): ProjectSummary | null {
  const p = db.select().from(prepProjects).where(eq(prepProjects.id, projectId)).get();
  return p ? summaryOf(db, p) : null;
}

export function findProjectByName(db: DbOrTx, name: string) {
  return db.select().from(prepProjects).where(eq(prepProjects.name, name)).get() ?? null;
}

/**
 * Names reviewers of a project (`add`) or takes them off (`remove`), by username; audited. A reviewer taken off
 * keeps their submitted reviews, and sees the project's notes no more. Unknown or inactive users are refused, all or
 * nothing.
 */
export function changeReviewers(
  db: Db,
  input: { projectId: number; add?: string[]; remove?: string[]; actorId: string | null; now?: number },
): { added: string[]; removed: string[] } {
  const now = input.now ?? Date.now();
  return writeTransaction(db, (tx) => {
    const project = tx.select().from(prepProjects).where(eq(prepProjects.id, input.projectId)).get();
    if (!project) throw new ServiceError("No such preparation project.", undefined, 404);
    const names = [...(input.add ?? []), ...(input.remove ?? [])];
    const found = names.length
      ? tx
          .select({ id: users.id, username: users.username, active: users.active })
          .from(users)
          .where(inArray(users.username, names))
          .all()
      : [];
    const byName = new Map(found.map((u) => [u.username, u]));
    const unknown = names.filter((n) => !byName.get(n));
    if (unknown.length) throw new ServiceError(`No user named ${unknown.map((n) => `"${n}"`).join(", ")}.`, "username");
    const inactive = (input.add ?? []).filter((n) => !byName.get(n)!.active);
    if (inactive.length)
      throw new ServiceError(`${inactive.map((n) => `"${n}"`).join(", ")} is not active.`, "username");
    const current = new Set(reviewerNames(tx, project.id));
    const added = [...new Set(input.add ?? [])].filter((n) => !current.has(n));
    const removed = [...new Set(input.remove ?? [])].filter((n) => current.has(n));
    for (const n of added)
      tx.insert(prepReviewers)
        .values({ projectId: project.id, userId: byName.get(n)!.id, addedAt: now })
        .run();
    for (const n of removed)
      tx.delete(prepReviewers)
        .where(and(eq(prepReviewers.projectId, project.id), eq(prepReviewers.userId, byName.get(n)!.id)))
        .run();
    if (added.length || removed.length)
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "prep_project",
        entityId: project.id,
        action: "reviewers",
        changes: { added, removed },
        at: now,
      });
    return { added, removed };
  });
}

export interface AdminNoteRow {
  id: number;
  externalId: string;
  proposals: number;
  submitted: number;
  excluded: number;
}

/** A project's notes with their review counts (admin): ids and counts, no text. */
export function listProjectNotes(db: Db, projectId: number): AdminNoteRow[] {
  const notes = db
    .select({ id: prepNotes.id, externalId: prepNotes.externalId, proposals: prepNotes.proposals })
    .from(prepNotes)
    .where(eq(prepNotes.projectId, projectId))
    .orderBy(asc(prepNotes.position))
    .all();
  const reviews = notes.length
    ? db
        .select({ noteId: prepReviews.noteId, excluded: prepReviews.excluded })
        .from(prepReviews)
        .where(
          and(
            inArray(
              prepReviews.noteId,
              notes.map((n) => n.id),
            ),
            eq(prepReviews.status, "submitted"),
          ),
        )
        .all()
    : [];
  return notes.map((n) => ({
    id: n.id,
    externalId: n.externalId,
    proposals: n.proposals.length,
    submitted: reviews.filter((r) => r.noteId === n.id).length,
    excluded: reviews.filter((r) => r.noteId === n.id && r.excluded).length,
  }));
}

/** The reviewers' agreement on a project's proposals, from their submitted reviews (admin; reviewers by username). */
export function projectAgreement(db: Db, projectId: number): ProposalAgreement {
  const rows = db
    .select({
      reviewer: users.username,
      noteId: prepReviews.noteId,
      decisions: prepReviews.decisions,
      excluded: prepReviews.excluded,
    })
    .from(prepReviews)
    .innerJoin(prepNotes, eq(prepNotes.id, prepReviews.noteId))
    .innerJoin(users, eq(users.id, prepReviews.reviewerId))
    .where(and(eq(prepNotes.projectId, projectId), eq(prepReviews.status, "submitted")))
    .all();
  return proposalAgreement(rows);
}

/** Whether any preparation project names the user as a reviewer: the start page then offers the review. */
export function isNamedReviewer(db: Db, userId: string): boolean {
  return (
    db
      .select({ p: prepReviewers.projectId })
      .from(prepReviewers)
      .where(eq(prepReviewers.userId, userId))
      .limit(1)
      .get() !== undefined
  );
}
