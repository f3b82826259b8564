/**
 * The annotator's side (SPEC §3): their assigned cases, drafts saved as they work, atomic submission, revision until
 * the case's second annotation is in, then both locked. Every query is scoped to the annotator (ownership is part of
 * the query), so a case that is not theirs is simply not found. Nothing here returns another annotator's labels or
 * identity, adjudication data, reference labels or dispute state.
 */
import { and, asc, eq, gt, isNull, lt, or, sql } from "drizzle-orm";
import { z } from "zod";
import { annotations, assignments, cases, studies, type AnnotationStatus } from "../../db/schema";
import { checkCaseLabel, MISSING_INFO_KEYS, type CaseLabel } from "../gold/domain/gold";
import type { Db, DbOrTx } from "../platform/db.server";
import { icd10Index } from "../icd10/icd10.server";
import { diff, recordEvent } from "../audit/audit.server";
import { onCaseAnnotationsComplete } from "../gold/outcomes.server";
import { getCaseSections } from "./studies.server";

export type CaseState = "not_started" | AnnotationStatus;

/** The form's values; a draft may be incomplete, a submission must pass checkCaseLabel. */
export const AnnotationValuesSchema = z.object({
  sufficiency: z.enum(["", "sufficient", "insufficient"]).default(""),
  icd10: z.string().trim().max(16, "A code has at most 16 characters.").default(""),
  earliestSection: z.coerce.number().int().min(0).max(5).nullable().default(null),
  missingInfo: z
    .array(z.enum(MISSING_INFO_KEYS as [string, ...string[]]))
    .max(MISSING_INFO_KEYS.length)
    .default([]),
  missingOther: z.string().max(2000, "At most 2000 characters.").default(""),
  notes: z.string().max(10000, "Notes have at most 10,000 characters.").default(""),
});
export type AnnotationValues = z.infer<typeof AnnotationValuesSchema>;

export const EMPTY_VALUES: AnnotationValues = {
  sufficiency: "",
  icd10: "",
  earliestSection: null,
  missingInfo: [],
  missingOther: "",
  notes: "",
};

export interface MyCaseRow {
  caseId: number;
  studyId: number;
  studyName: string;
  externalId: string;
  position: number;
  numSections: number;
  state: CaseState;
  updatedAt: number | null;
}

export function listAnnotatorCases(db: Db, userId: string): MyCaseRow[] {
  return db
    .select({
      caseId: cases.id,
      studyId: studies.id,
      studyName: studies.name,
      externalId: cases.externalId,
      position: cases.position,
      numSections: cases.numSections,
      status: annotations.status,
      updatedAt: annotations.updatedAt,
    })
    .from(assignments)
    .innerJoin(cases, eq(cases.id, assignments.caseId))
    .innerJoin(studies, eq(studies.id, cases.studyId))
    .leftJoin(annotations, eq(annotations.assignmentId, assignments.id))
    .where(eq(assignments.annotatorId, userId))
    .orderBy(asc(studies.name), asc(cases.position))
    .all()
    .map(({ status, ...r }) => ({ ...r, state: (status ?? "not_started") as CaseState }));
}

function valuesOf(row: typeof annotations.$inferSelect | undefined): AnnotationValues {
  if (!row) return EMPTY_VALUES;
  return {
    sufficiency: (row.sufficiency ?? "") as AnnotationValues["sufficiency"],
    icd10: row.icd10 ?? "",
    earliestSection: row.earliestSection,
    missingInfo: JSON.parse(row.missingInfo),
    missingOther: row.missingOther,
    notes: row.notes,
  };
}

function findAssignment(db: DbOrTx, userId: string, caseId: number) {
  return db
    .select({ id: assignments.id, caseId: assignments.caseId, studyId: cases.studyId, numSections: cases.numSections })
    .from(assignments)
    .innerJoin(cases, eq(cases.id, assignments.caseId))
    .where(and(eq(assignments.caseId, caseId), eq(assignments.annotatorId, userId)))
    .get();
}

/** The next case to work on after `afterCaseId`: the first not yet submitted, in study order, wrapping around. */
export function nextCaseId(rows: MyCaseRow[], afterCaseId: number | null): number | null {
  const open = (r: MyCaseRow) => r.state === "not_started" || r.state === "draft";
  const at = afterCaseId === null ? -1 : rows.findIndex((r) => r.caseId === afterCaseId);
  const after = rows.slice(at + 1).find(open) ?? rows.slice(0, Math.max(at, 0)).find(open);
  return after?.caseId ?? null;
}

export interface AnnotatorCaseView {
  case: {
    id: number;
    externalId: string;
    studyName: string;
    sections: { order: number; kind: string; content: string }[];
  };
  state: CaseState;
  values: AnnotationValues;
  version: number;
  updatedAt: number | null;
  nextCaseId: number | null;
  progress: { done: number; total: number };
}

/** One assigned case with the annotator's own labels; null when the case is not assigned to them. */
export function getAnnotatorCase(db: Db, input: { userId: string; caseId: number }): AnnotatorCaseView | null {
  const a = findAssignment(db, input.userId, input.caseId);
  if (!a) return null;
  const row = db.select().from(annotations).where(eq(annotations.assignmentId, a.id)).get();
  const c = db
    .select({ id: cases.id, externalId: cases.externalId, studyName: studies.name, position: cases.position })
    .from(cases)
    .innerJoin(studies, eq(studies.id, cases.studyId))
    .where(eq(cases.id, input.caseId))
    .get()!;
  return {
    case: { id: c.id, externalId: c.externalId, studyName: c.studyName, sections: getCaseSections(db, input.caseId) },
    state: (row?.status ?? "not_started") as CaseState,
    values: valuesOf(row),
    version: row?.version ?? 0,
    updatedAt: row?.updatedAt ?? null,
    nextCaseId: nextOpenCaseId(db, input.userId, { studyName: c.studyName, position: c.position }),
    progress: annotatorProgress(db, input.userId),
  };
}

/** Submitted (or locked) and total assigned cases of an annotator, in one aggregate query. */
function annotatorProgress(db: Db, userId: string): { done: number; total: number } {
  const r = db
    .select({
      total: sql<number>`count(*)`,
      done: sql<number>`coalesce(sum(${annotations.status} in ('submitted', 'locked')), 0)`,
    })
    .from(assignments)
    .leftJoin(annotations, eq(annotations.assignmentId, assignments.id))
    .where(eq(assignments.annotatorId, userId))
    .get()!;
  return { done: Number(r.done), total: Number(r.total) };
}

/**
 * nextCaseId in SQL, for the case page (which must stay fast for annotators with thousands of cases): the first open
 * case after the current one in the home list's order (study name, position), wrapping around.
 */
function nextOpenCaseId(db: Db, userId: string, after: { studyName: string; position: number }): number | null {
  const open = and(
    eq(assignments.annotatorId, userId),
    or(isNull(annotations.status), eq(annotations.status, "draft")),
  );
  // The first open case after (gt) or, wrapping around, before (lt) the current one.
  const firstOpen = (side: typeof gt) =>
    db
      .select({ caseId: cases.id })
      .from(assignments)
      .innerJoin(cases, eq(cases.id, assignments.caseId))
      .innerJoin(studies, eq(studies.id, cases.studyId))
      .leftJoin(annotations, eq(annotations.assignmentId, assignments.id))
      .where(
        and(
          open,
          or(
            side(studies.name, after.studyName),
            and(eq(studies.name, after.studyName), side(cases.position, after.position)),
          ),
        ),
      )
      .orderBy(asc(studies.name), asc(cases.position))
      .limit(1)
      .get();
  return (firstOpen(gt) ?? firstOpen(lt))?.caseId ?? null;
}

export type SaveResult =
  | { ok: true; version: number; savedAt: number; state: CaseState }
  | { ok: false; status: 404 | 409; message: string }
  | { ok: false; status: 422; message: string; errors: Record<string, string> };

const CONFLICT =
  "This annotation was changed in another window or tab. Reload the page to see the latest version; nothing was overwritten.";
const LOCKED = "Both annotations of this case are in, so it is locked. Changes now go through the adjudicator.";

function snapshot(v: AnnotationValues) {
  return {
    sufficiency: v.sufficiency || null,
    icd10: v.icd10 || null,
    earliestSection: v.earliestSection,
    missingInfo: v.missingInfo,
    missingOther: v.missingOther,
    notes: v.notes,
  };
}

function columnsOf(v: AnnotationValues) {
  return {
    sufficiency: v.sufficiency || null,
    icd10: v.icd10 || null,
    earliestSection: v.earliestSection,
    missingInfo: JSON.stringify(v.missingInfo),
    missingOther: v.missingOther,
    notes: v.notes,
  };
}

/**
 * Saves a draft. `version` is the version the page read (0 before the first save); a stale version is refused with
 * 409 and nothing is written. Submitted annotations are revised by submitting again, not by drafts.
 */
export function saveDraft(
  db: Db,
  input: { userId: string; caseId: number; values: AnnotationValues; version: number; now?: number },
): SaveResult {
  const now = input.now ?? Date.now();
  return db.transaction(
    (tx): SaveResult => {
      const a = findAssignment(tx, input.userId, input.caseId);
      if (!a) return { ok: false, status: 404, message: "Not found." };
      const row = tx.select().from(annotations).where(eq(annotations.assignmentId, a.id)).get();
      if ((row?.version ?? 0) !== input.version) return { ok: false, status: 409, message: CONFLICT };
      if (row && row.status !== "draft")
        return {
          ok: false,
          status: 409,
          message: row.status === "locked" ? LOCKED : "This case is submitted: use “Save revision” to change it.",
        };
      const changes = diff(snapshot(valuesOf(row)), snapshot(input.values));
      if (row && Object.keys(changes).length === 0)
        return { ok: true, version: row.version, savedAt: row.updatedAt, state: "draft" };
      const version = writeAnnotation(tx, {
        assignment: a,
        row,
        userId: input.userId,
        values: input.values,
        status: "draft",
        action: "draft",
        changes,
        now,
      });
      if (version === null) return { ok: false, status: 409, message: CONFLICT };
      return { ok: true, version, savedAt: now, state: "draft" };
    },
    { behavior: "immediate" },
  );
}

/** The label a submission carries, or the field errors (SPEC §3 rules, code checked against WHO chapter V). */
export function checkSubmission(values: AnnotationValues, numSections: number) {
  return checkCaseLabel(
    {
      sufficiency: values.sufficiency || undefined,
      icd10: values.icd10,
      earliestSection: values.earliestSection ?? undefined,
      missingInfo: values.missingInfo,
      missingInfoOther: values.missingOther,
    },
    { sectionCount: numSections, isValidCode: (code) => icd10Index().isValidChapterVCode(code) },
  );
}

/**
 * Submits (or revises) an annotation atomically. When this makes the case's second submitted annotation, both are
 * locked in the same transaction and the case's outcome (agreement or dispute) is derived. The transaction is
 * IMMEDIATE, so two annotators submitting at the same moment are serialised and exactly one of them locks the case.
 */
export function submitAnnotation(
  db: Db,
  input: { userId: string; caseId: number; values: AnnotationValues; version: number; now?: number },
): SaveResult {
  const now = input.now ?? Date.now();
  return db.transaction(
    (tx): SaveResult => {
      const a = findAssignment(tx, input.userId, input.caseId);
      if (!a) return { ok: false, status: 404, message: "Not found." };
      const check = checkSubmission(input.values, a.numSections);
      if (!check.ok) {
        const errors: Record<string, string> = {};
        for (const [k, v] of Object.entries(check.errors))
          errors[k === "missingInfoOther" ? "missingOther" : k] = capitalise(v!);
        return {
          ok: false,
          status: 422,
          message: "The annotation is incomplete or invalid; see the marked fields.",
          errors,
        };
      }
      const values = canonicalValues(input.values, check.label);
      const row = tx.select().from(annotations).where(eq(annotations.assignmentId, a.id)).get();
      if ((row?.version ?? 0) !== input.version) return { ok: false, status: 409, message: CONFLICT };
      if (row?.status === "locked") return { ok: false, status: 409, message: LOCKED };
      const action = row?.status === "submitted" ? "revise" : "submit";
      const changes = diff(snapshot(valuesOf(row)), snapshot(values));
      const version = writeAnnotation(tx, {
        assignment: a,
        row,
        userId: input.userId,
        values,
        status: "submitted",
        action,
        changes,
        now,
      });
      if (version === null) return { ok: false, status: 409, message: CONFLICT };
      const state = lockIfComplete(tx, a.caseId, a.studyId, now) ? "locked" : "submitted";
      return { ok: true, version: state === "locked" ? version + 1 : version, savedAt: now, state };
    },
    { behavior: "immediate" },
  );
}

/**
 * Writes an annotation (a draft or a submission) and its audit event in the caller's transaction: the first save
 * inserts version 1, a later one updates the row only while it still has the version read. Returns the new version,
 * or null when another save changed the row first (nothing is written).
 */
function writeAnnotation(
  tx: DbOrTx,
  input: {
    assignment: { id: number; caseId: number; studyId: number };
    row: typeof annotations.$inferSelect | undefined;
    userId: string;
    values: AnnotationValues;
    status: "draft" | "submitted";
    action: "draft" | "submit" | "revise";
    changes: Record<string, [unknown, unknown]>;
    now: number;
  },
): number | null {
  const { assignment: a, row, now } = input;
  const columns = {
    ...columnsOf(input.values),
    status: input.status,
    updatedAt: now,
    ...(input.status === "submitted" ? { submittedAt: now } : {}),
  };
  let version: number;
  if (!row) {
    tx.insert(annotations)
      .values({ assignmentId: a.id, caseId: a.caseId, annotatorId: input.userId, ...columns, version: 1 })
      .run();
    version = 1;
  } else {
    const updated = tx
      .update(annotations)
      .set({ ...columns, version: row.version + 1 })
      .where(and(eq(annotations.id, row.id), eq(annotations.version, row.version)))
      .run();
    if (updated.changes === 0) return null;
    version = row.version + 1;
  }
  recordEvent(tx, {
    actorId: input.userId,
    entity: "annotation",
    entityId: a.id,
    studyId: a.studyId,
    caseId: a.caseId,
    action: input.action,
    changes: input.changes,
    at: now,
  });
  return version;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1) + (s.endsWith(".") ? "" : ".");
}

/** The stored form of a valid submission: canonical code, fields of the other branch cleared. */
function canonicalValues(values: AnnotationValues, label: CaseLabel): AnnotationValues {
  if (label.sufficiency === "sufficient")
    return {
      ...values,
      sufficiency: "sufficient",
      icd10: label.icd10,
      earliestSection: label.earliestSection,
      missingInfo: [],
      missingOther: "",
    };
  return {
    ...values,
    sufficiency: "insufficient",
    icd10: "",
    earliestSection: null,
    missingInfo: label.missingInfo,
    missingOther: label.missingInfoOther ?? "",
  };
}

/** Locks both annotations once two are submitted; returns true when it locked. */
function lockIfComplete(tx: DbOrTx, caseId: number, studyId: number, now: number): boolean {
  const submitted = tx
    .select({ id: annotations.id, assignmentId: annotations.assignmentId, version: annotations.version })
    .from(annotations)
    .where(and(eq(annotations.caseId, caseId), eq(annotations.status, "submitted")))
    .all();
  if (submitted.length < 2) return false;
  for (const s of submitted) {
    // updated_at stays the annotator's own last save: the lock time would tell them when the other one submitted.
    tx.update(annotations)
      .set({ status: "locked", version: s.version + 1 })
      .where(eq(annotations.id, s.id))
      .run();
    recordEvent(tx, {
      actorId: null,
      entity: "annotation",
      entityId: s.assignmentId,
      studyId,
      caseId,
      action: "lock",
      changes: { status: ["submitted", "locked"] },
      at: now,
    });
  }
  onCaseAnnotationsComplete(tx, { caseId, studyId, now });
  return true;
}

/** Whether another annotation of the case has started (drafts count): used to refuse reassignment. */
export function annotationStarted(db: DbOrTx, assignmentId: number): boolean {
  return Boolean(
    db.select({ id: annotations.id }).from(annotations).where(eq(annotations.assignmentId, assignmentId)).get(),
  );
}
