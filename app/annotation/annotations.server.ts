/**
 * The annotator's side (docs/safe-psych.md, "Annotation"): their assigned cases, drafts saved as they work, atomic submission, revision until
 * the case's second annotation is in, then both locked. Every query is scoped to the annotator (ownership is part of
 * the query), so a case that is not theirs is simply not found. Nothing here returns another annotator's labels or
 * identity, adjudication data, reference labels or dispute state.
 */
import { and, asc, count, desc, eq, exists, gt, lt, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { annotations, assignments, cases, studies } from "../../db/schema";
import { checkCaseLabel, MISSING_INFO_KEYS, type CaseLabel } from "../gold/domain/gold";
import { preparedOn, type Db, type DbOrTx } from "../platform/db.server";
import { icd10Index } from "../icd10/icd10.server";
import { recordEvent } from "../audit/audit.server";
import type { WorkState } from "../work-items/domain/work-item";
import { nextOpenItem, WORK_MESSAGES, type SaveResult as WorkSaveResult } from "../work-items/domain/work-item";
import { saveWorkItem, type WorkItemAdapter } from "../work-items/engine.server";
import { onCaseAnnotationsComplete } from "../gold/outcomes.server";
import { TEXT_LIMITS, tooLongMessage } from "../work-items/domain/text-limits";
import { getCaseSections } from "./studies.server";

/** An annotator's work on a case: the work-item engine's states. */
export type CaseState = WorkState;

/** The form's values; a draft may be incomplete, a submission must pass checkCaseLabel. */
export const AnnotationValuesSchema = z.object({
  sufficiency: z.enum(["", "sufficient", "insufficient"]).default(""),
  icd10: z.string().trim().max(16, "A code has at most 16 characters.").default(""),
  earliestSection: z.coerce.number().int().min(0).max(5).nullable().default(null),
  missingInfo: z
    .array(z.enum(MISSING_INFO_KEYS as [string, ...string[]]))
    .max(MISSING_INFO_KEYS.length)
    .default([]),
  missingOther: z
    .string()
    .max(TEXT_LIMITS.missingOther, tooLongMessage("Other missing information", TEXT_LIMITS.missingOther))
    .default(""),
  notes: z.string().max(TEXT_LIMITS.notes, tooLongMessage("Notes", TEXT_LIMITS.notes)).default(""),
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
    missingInfo: row.missingInfo,
    missingOther: row.missingOther,
    notes: row.notes,
  };
}

const userId = sql.placeholder("userId");
const studyId = sql.placeholder("studyId");
const position = sql.placeholder("position");
const queueOpen = sql`${assignments.queueOpen} = 1`;
/** A bound below and above every position, for "the first (last) of a study". */
const BEFORE_ALL = Number.MIN_SAFE_INTEGER;
const AFTER_ALL = Number.MAX_SAFE_INTEGER;

/**
 * The statements of the case page and the save path, prepared once per connection. The queue statements read the
 * columns the triggers keep on each assignment (docs/architecture.md, "The annotator's queue"), each an index seek.
 */
const statements = preparedOn((db) => {
  const inStudy = (compare: typeof gt) =>
    and(
      eq(assignments.annotatorId, userId),
      eq(assignments.queueStudyId, studyId),
      compare(assignments.queuePosition, position),
    );
  return {
    assignment: db
      .select({
        id: assignments.id,
        caseId: assignments.caseId,
        studyId: cases.studyId,
        numSections: cases.numSections,
      })
      .from(assignments)
      .innerJoin(cases, eq(cases.id, assignments.caseId))
      .where(and(eq(assignments.caseId, sql.placeholder("caseId")), eq(assignments.annotatorId, userId)))
      .prepare(),
    annotation: db
      .select()
      .from(annotations)
      .where(eq(annotations.assignmentId, sql.placeholder("assignmentId")))
      .prepare(),
    header: db
      .select({ id: cases.id, externalId: cases.externalId, studyName: studies.name, position: cases.position })
      .from(cases)
      .innerJoin(studies, eq(studies.id, cases.studyId))
      .where(eq(cases.id, sql.placeholder("caseId")))
      .prepare(),
    /** The studies the annotator has cases in, in the list's order (by name). */
    studies: db
      .select({ id: studies.id })
      .from(studies)
      .where(
        exists(
          db
            .select({ one: sql`1` })
            .from(assignments)
            .where(and(eq(assignments.annotatorId, userId), eq(assignments.queueStudyId, studies.id))),
        ),
      )
      .orderBy(asc(studies.name))
      .prepare(),
    firstOpenAfter: db
      .select({ caseId: assignments.caseId })
      .from(assignments)
      .where(and(inStudy(gt), queueOpen))
      .orderBy(asc(assignments.queuePosition))
      .limit(1)
      .prepare(),
    firstOpenBefore: db
      .select({ caseId: assignments.caseId })
      .from(assignments)
      .where(and(inStudy(lt), queueOpen))
      .orderBy(asc(assignments.queuePosition))
      .limit(1)
      .prepare(),
    lastBefore: db
      .select({ caseId: assignments.caseId })
      .from(assignments)
      .where(inStudy(lt))
      .orderBy(desc(assignments.queuePosition))
      .limit(1)
      .prepare(),
    total: db.select({ n: count() }).from(assignments).where(eq(assignments.annotatorId, userId)).prepare(),
    open: db
      .select({ n: count() })
      .from(assignments)
      .where(and(eq(assignments.annotatorId, userId), queueOpen))
      .prepare(),
  };
});

const LABEL_COLUMNS = [
  "sufficiency",
  "icd10",
  "earliestSection",
  "missingInfo",
  "missingOther",
  "notes",
  "status",
  "updatedAt",
  "version",
] as const;

/** The annotation's writes, prepared: the first save's insert, and a draft's and a submission's versioned update. */
const writeStatements = preparedOn((db) => {
  const placeholders = <K extends string>(keys: readonly K[]) =>
    Object.fromEntries(keys.map((k) => [k, sql.placeholder(k)])) as unknown as Record<K, SQL>;
  const atVersion = and(
    eq(annotations.id, sql.placeholder("id")),
    eq(annotations.version, sql.placeholder("expected")),
  );
  return {
    insert: db
      .insert(annotations)
      .values(placeholders([...LABEL_COLUMNS, "assignmentId", "caseId", "annotatorId", "submittedAt"]))
      .prepare(),
    draft: db.update(annotations).set(placeholders(LABEL_COLUMNS)).where(atVersion).prepare(),
    submit: db
      .update(annotations)
      .set(placeholders([...LABEL_COLUMNS, "submittedAt"]))
      .where(atVersion)
      .prepare(),
  };
});

function findAssignment(db: DbOrTx, userId: string, caseId: number) {
  return statements(db).assignment.get({ userId, caseId });
}

/** The next case to work on after `afterCaseId`: the first not yet submitted, in study order, wrapping around. */
export function nextCaseId(rows: MyCaseRow[], afterCaseId: number | null): number | null {
  const at = afterCaseId === null ? -1 : rows.findIndex((r) => r.caseId === afterCaseId);
  return nextOpenItem(rows, at)?.caseId ?? null;
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
  previousCaseId: number | null;
  progress: { done: number; total: number };
}

/** One assigned case with the annotator's own labels; null when the case is not assigned to them. */
export function getAnnotatorCase(db: Db, input: { userId: string; caseId: number }): AnnotatorCaseView | null {
  const q = statements(db);
  const a = q.assignment.get({ userId: input.userId, caseId: input.caseId });
  if (!a) return null;
  const row = q.annotation.get({ assignmentId: a.id });
  const c = q.header.get({ caseId: input.caseId })!;
  const around = queueAround(db, input.userId, a.studyId, c.position);
  return {
    case: { id: c.id, externalId: c.externalId, studyName: c.studyName, sections: getCaseSections(db, input.caseId) },
    state: (row?.status ?? "not_started") as CaseState,
    values: valuesOf(row),
    version: row?.version ?? 0,
    updatedAt: row?.updatedAt ?? null,
    ...around,
  };
}

/**
 * Where a case stands in the annotator's list (studies by name, cases by position, as on the home page): the next
 * case not yet submitted after it, wrapping around (work-item.ts `nextOpenItem`), the case before it whatever its
 * state, and the progress. Each step is an index seek on the queue the triggers keep, never a sort of the list.
 */
function queueAround(
  db: Db,
  user: string,
  study: number,
  at: number,
): Pick<AnnotatorCaseView, "nextCaseId" | "previousCaseId" | "progress"> {
  const q = statements(db);
  const ids = q.studies.all({ userId: user }).map((s) => s.id);
  const k = ids.indexOf(study);
  const firstOpen = (s: number) => q.firstOpenAfter.get({ userId: user, studyId: s, position: BEFORE_ALL });
  let next = q.firstOpenAfter.get({ userId: user, studyId: study, position: at });
  for (let i = 1; next === undefined && i < ids.length; i++) next = firstOpen(ids[(k + i) % ids.length]!);
  next ??= q.firstOpenBefore.get({ userId: user, studyId: study, position: at });
  const previous =
    q.lastBefore.get({ userId: user, studyId: study, position: at }) ??
    (k > 0 ? q.lastBefore.get({ userId: user, studyId: ids[k - 1]!, position: AFTER_ALL }) : undefined);
  const total = q.total.get({ userId: user })!.n;
  const open = q.open.get({ userId: user })!.n;
  return {
    nextCaseId: next?.caseId ?? null,
    previousCaseId: previous?.caseId ?? null,
    progress: { done: total - open, total },
  };
}

export type SaveResult = WorkSaveResult;

const LOCKED = "Both annotations of this case are in, so it is locked. Changes now go through the adjudicator.";

type Assignment = NonNullable<ReturnType<typeof findAssignment>>;
type AnnotationRow = typeof annotations.$inferSelect;

/** The annotation workspace's adapter of the work-item engine (docs/architecture.md, "The work-item engine"). */
const annotationWork: WorkItemAdapter<Assignment, AnnotationRow, AnnotationValues> = {
  entity: "annotation",
  noun: "annotation",
  lockedMessage: LOCKED,
  find: findAssignment,
  guidelines: (a) => ({ scope: "safe_psych", scopeId: a.studyId }),
  row: (tx, _userId, a) => statements(tx).annotation.get({ assignmentId: a.id }),
  meta: (r) => ({ id: r.id, state: r.status, version: r.version, savedAt: r.updatedAt }),
  valuesOf: (row) => valuesOf(row),
  check(_tx, a, values) {
    const check = checkSubmission(values, a.numSections);
    if (check.ok) return { ok: true, values: canonicalValues(values, check.label) };
    const errors: Record<string, string> = {};
    for (const [k, v] of Object.entries(check.errors))
      errors[k === "missingInfoOther" ? "missingOther" : k] = capitalise(v!);
    return { ok: false, message: WORK_MESSAGES.incomplete("annotation"), errors };
  },
  audited: (v) => ({
    sufficiency: v.sufficiency || null,
    icd10: v.icd10 || null,
    earliestSection: v.earliestSection,
    missingInfo: v.missingInfo,
    missingOther: v.missingOther,
    notes: v.notes,
  }),
  freeText: ["missingOther", "notes"],
  write(tx, { item: a, row, userId, values: v, status, version, now }) {
    const columns = {
      sufficiency: v.sufficiency || null,
      icd10: v.icd10 || null,
      earliestSection: v.earliestSection,
      missingInfo: v.missingInfo,
      missingOther: v.missingOther,
      notes: v.notes,
      status,
      updatedAt: now,
      version,
    };
    const q = writeStatements(tx);
    const submittedAt = status === "submitted" ? now : null;
    if (!row) {
      q.insert.run({ assignmentId: a.id, caseId: a.caseId, annotatorId: userId, ...columns, submittedAt });
      return a.id;
    }
    // The optimistic write (engine.server.ts updateAtVersion), prepared: only while the row has the version read.
    const where = { id: row.id, expected: row.version };
    const updated =
      submittedAt === null
        ? q.draft.run({ ...columns, ...where })
        : q.submit.run({ ...columns, submittedAt, ...where });
    return updated.changes > 0 ? a.id : null;
  },
  auditContext: (a) => ({ entityId: a.id, studyId: a.studyId, caseId: a.caseId }),
  // Locking writes the row once more, so the page's next save must name the version after it.
  onSubmitted: (tx, a, now) => {
    const mine = lockIfComplete(tx, a, now);
    return mine === null ? {} : { state: "locked", version: mine };
  },
};

/**
 * Saves a draft. `version` is the version the page read (0 before the first save); a stale version is refused with
 * 409 and nothing is written. Submitted annotations are revised by submitting again, not by drafts.
 */
export function saveDraft(
  db: Db,
  input: { userId: string; caseId: number; values: AnnotationValues; version: number; now?: number; activeMs?: number },
): SaveResult {
  return saveWorkItem(db, annotationWork, { ...input, itemId: input.caseId, intent: "draft" });
}

/** The label a submission carries, or the field errors (docs/safe-psych.md, "Annotation"; codes checked against WHO chapter V). */
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
  input: { userId: string; caseId: number; values: AnnotationValues; version: number; now?: number; activeMs?: number },
): SaveResult {
  return saveWorkItem(db, annotationWork, { ...input, itemId: input.caseId, intent: "submit" });
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

/**
 * Locks both annotations once two are submitted and derives the case's outcome. Returns the version of the caller's
 * own annotation after locking, or null when the case is not complete yet.
 */
function lockIfComplete(tx: DbOrTx, a: Assignment, now: number): number | null {
  const submitted = tx
    .select({ id: annotations.id, assignmentId: annotations.assignmentId, version: annotations.version })
    .from(annotations)
    .where(and(eq(annotations.caseId, a.caseId), eq(annotations.status, "submitted")))
    .all();
  if (submitted.length < 2) return null;
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
      studyId: a.studyId,
      caseId: a.caseId,
      action: "lock",
      changes: { status: ["submitted", "locked"] },
      at: now,
    });
  }
  onCaseAnnotationsComplete(tx, { caseId: a.caseId, studyId: a.studyId, now });
  return submitted.find((s) => s.assignmentId === a.id)!.version + 1;
}
