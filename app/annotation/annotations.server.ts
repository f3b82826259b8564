/**
 * The annotator's side (docs/safe-psych.md, "Annotation"): their assigned cases, drafts saved as they work, atomic submission, revision until
 * the case's second annotation is in, then both locked. Every query is scoped to the annotator (ownership is part of
 * the query), so a case that is not theirs is simply not found. Nothing here returns another annotator's labels or
 * identity, adjudication data, reference labels or dispute state.
 */
import { labelColumns } from "./domain/label-columns";
import { and, asc, eq, lte, sql, type SQL } from "drizzle-orm";
import { annotations, assignments } from "../../db/schema";
import { checkCaseLabel, type CaseLabel } from "../labels/labels";
import { preparedOn, type Db, type DbOrTx, type Tx } from "../platform/db.server";
import { icd10Index } from "../icd10/icd10.server";
import { recordEvent } from "../audit/audit.server";
import type { WorkState } from "../work-items/domain/work-item";
import { nextOpenItem, WORK_MESSAGES, type SaveResult as WorkSaveResult } from "../work-items/domain/work-item";
import { saveWorkItem, writeTransaction, type WorkItemAdapter } from "../work-items/engine.server";
import { onCaseAnnotationsComplete } from "../gold/public.server";
import { submitGraceMs } from "./submit-grace.server";
import { getCaseSections } from "./studies.server";
import { QUALITY_OFF, qualityOn } from "./domain/rater-quality";
import {
  findQualityByKey,
  lockQualityItemsBeside,
  qualitySettingsOf,
  qualityQueue,
  qualityValuesOf,
  refreshQualityItems,
  saveQualityItem,
  trainingPending,
  trainingReveal,
  TRAINING_FIRST,
  settleQualityLocks,
  undoQualitySubmission,
  undoStep,
  unscheduleQualityItemsBeside,
  UNDO_CLOSED,
  type QualityValues,
} from "./rater-quality.server";
import { blindLabel, byStudyName, queuePlace, type QueueItemRef } from "./case-queue.server";
import { qualityItems } from "../../db/schema";
import { visibleCases, visibleStudies } from "../../db/schema-visible";

/** An annotator's work on a case: the work-item engine's states. */
export type CaseState = WorkState;

// The form's values: one schema for the page and the server (app/annotation/domain/annotation-values.ts).
import { AnnotationValuesSchema, EMPTY_VALUES, type AnnotationValues } from "./domain/annotation-values";
export { AnnotationValuesSchema, EMPTY_VALUES, type AnnotationValues };

/**
 * One row of the annotator's list. `key` addresses the item's page: the case id in a study without rater quality,
 * else an opaque key, the same form for an ordinary case and a retest or calibration case (docs/rater-quality.md,
 * "Blinding"); there `externalId` is a label derived from that key, never the case's id, and `position` the row's
 * place in the study's list.
 */
export interface MyCaseRow {
  key: string;
  studyId: number;
  studyName: string;
  externalId: string;
  position: number;
  numSections: number;
  state: CaseState;
  updatedAt: number | null;
}

interface QueueRow extends MyCaseRow {
  /** Internal, never sent: which row it is. */
  ref: { kind: "assignment"; caseId: number } | { kind: "quality"; id: number; training: boolean };
}

/**
 * The annotator's items in list order (study name, then place in the study): ordinary assignments and, in studies
 * with rater quality, the quality items among them. While a study's training round is not done only its training
 * cases are listed: the rest opens after. At one place an assignment comes before a quality item, assignments by case
 * id and quality items by id among themselves: the order the case page asks of the database (case-queue.server.ts).
 */
function annotatorQueue(db: DbOrTx, userId: string): QueueRow[] {
  const ordinary = db
    .select({
      caseId: visibleCases.id,
      itemKey: assignments.itemKey,
      studyId: visibleStudies.id,
      studyName: visibleStudies.name,
      externalId: visibleCases.externalId,
      position: visibleCases.position,
      numSections: visibleCases.numSections,
      status: annotations.status,
      updatedAt: annotations.updatedAt,
    })
    .from(assignments)
    .innerJoin(visibleCases, eq(visibleCases.id, assignments.caseId))
    .innerJoin(visibleStudies, eq(visibleStudies.id, visibleCases.studyId))
    .leftJoin(annotations, eq(annotations.assignmentId, assignments.id))
    .where(eq(assignments.annotatorId, userId))
    .orderBy(asc(visibleStudies.name), asc(visibleCases.position), asc(visibleCases.id))
    .all();
  const settings = qualitySettingsOf(db, [...new Set(ordinary.map((o) => o.studyId))]);
  const quality = qualityQueue(db, userId);
  const studyName = new Map(ordinary.map((o) => [o.studyId, o.studyName]));
  const rows: (QueueRow & { sort: number })[] = [];
  for (const o of ordinary) {
    const blind = qualityOn(settings.get(o.studyId) ?? null);
    const key = blind && o.itemKey ? o.itemKey : String(o.caseId);
    rows.push({
      key,
      studyId: o.studyId,
      studyName: o.studyName,
      // Work started before rater quality was switched on has no opaque key and keeps its name (docs/rater-quality.md).
      externalId: blind && o.itemKey ? blindLabel(key) : o.externalId,
      position: o.position,
      sort: o.position,
      numSections: o.numSections,
      state: (o.status ?? "not_started") as CaseState,
      updatedAt: o.updatedAt,
      ref: { kind: "assignment", caseId: o.caseId },
    });
  }
  for (const q of quality) {
    if (!qualityOn(settings.get(q.studyId) ?? null) || !studyName.has(q.studyId)) continue;
    rows.push({
      key: q.key,
      studyId: q.studyId,
      studyName: studyName.get(q.studyId)!,
      externalId: blindLabel(q.key),
      position: 0,
      sort: q.sortKey,
      numSections: q.numSections,
      state: q.state,
      updatedAt: q.updatedAt,
      ref: { kind: "quality", id: q.id, training: q.kind === "training" },
    });
  }
  // Stable: at one place the assignments (pushed first, by case id) stay before the quality items (by id).
  rows.sort((a, b) => byStudyName(a.studyName, b.studyName) || a.sort - b.sort);
  const out: QueueRow[] = [];
  for (const studyId of [...new Set(rows.map((r) => r.studyId))]) {
    const mine = rows.filter((r) => r.studyId === studyId);
    const training = mine.filter((r) => r.ref.kind === "quality" && r.ref.training);
    const inTraining = training.some((r) => r.state === "not_started" || r.state === "draft");
    const shown = inTraining ? training : mine;
    const blind = qualityOn(settings.get(studyId) ?? null);
    shown.forEach(({ sort: _sort, ...r }, i) => {
      const isTraining = r.ref.kind === "quality" && r.ref.training;
      out.push({
        ...r,
        position: blind ? i + 1 : r.position,
        externalId: isTraining ? `training ${i + 1} of ${training.length}` : r.externalId,
      });
    });
  }
  return out;
}

/** The annotator's list (every study), with what the settings of their studies now add to it. */
export function listAnnotatorCases(db: Db, userId: string): MyCaseRow[] {
  settleDueLocks(db);
  return annotatorQueue(db, userId).map(({ ref: _ref, ...r }) => r);
}

/**
 * The page key's item, if it is this annotator's: an opaque key of an assignment or a quality item, or a case id in a
 * study without rater quality. In a study with rater quality a case id names nothing (404), so that every item of the
 * annotator's list — ordinary case, retest or calibration case — is reached by its opaque key alone
 * (docs/rater-quality.md, "Blinding"). Every annotator page and save finds its item here.
 */
export function resolveAnnotatorItem(db: DbOrTx, userId: string, param: string | undefined): QueueItemRef | null {
  if (!param) return null;
  const q = readStatements(db);
  if (/^[1-9][0-9]{0,15}$/.test(param)) {
    const row = q.assignedCase.get(Number(param), userId) as
      [number, number | null, number | null, number | null, string | null] | undefined;
    if (!row) return null;
    const [caseId, retestFraction, calibrationRate, training, itemKey] = row;
    const blind = qualityOn({
      ...QUALITY_OFF,
      retestFraction: retestFraction ?? 0,
      calibrationRate: calibrationRate ?? 0,
      training: !!training,
    });
    // Work started before rater quality was switched on keeps its address: it has no opaque key.
    return blind && itemKey !== null ? null : { kind: "assignment", caseId };
  }
  if (!/^k[0-9a-f]{12}$/.test(param)) return null;
  const caseId = q.assignedKey.get(param, userId) as number | undefined;
  if (caseId !== undefined) return { kind: "assignment", caseId };
  const found = findQualityByKey(db, userId, param);
  return found ? { kind: "quality", id: found.id } : null;
}

/** The reads of the case page and of every save, prepared once per connection (docs/architecture.md, "Cheaper pages"). */
const readStatements = preparedOn((db) => ({
  // With what makes the case's study one with rater quality (qualityOn).
  assignedCase: db.$client
    .prepare(
      `SELECT a.case_id, q.retest_fraction, q.calibration_rate, q.training, a.item_key FROM assignments a
       JOIN visible_cases c ON c.id = a.case_id LEFT JOIN study_quality_settings q ON q.study_id = c.study_id
       WHERE a.case_id = ? AND a.annotator_id = ?`,
    )
    .raw(),
  assignedKey: db.$client.prepare("SELECT case_id FROM assignments WHERE item_key = ? AND annotator_id = ?").pluck(),
  assignment: db
    .select({
      id: assignments.id,
      caseId: assignments.caseId,
      studyId: visibleCases.studyId,
      position: visibleCases.position,
      numSections: visibleCases.numSections,
    })
    .from(assignments)
    .innerJoin(visibleCases, eq(visibleCases.id, assignments.caseId))
    .where(
      and(eq(assignments.caseId, sql.placeholder("caseId")), eq(assignments.annotatorId, sql.placeholder("userId"))),
    )
    .prepare(),
  annotation: db
    .select()
    .from(annotations)
    .where(eq(annotations.assignmentId, sql.placeholder("assignmentId")))
    .prepare(),
  qualityItem: db
    .select()
    .from(qualityItems)
    .where(eq(qualityItems.id, sql.placeholder("id")))
    .prepare(),
}));

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
  const a = readStatements(db).assignment.get({ caseId, userId });
  // Real work waits for the training round (docs/rater-quality.md, "Training round"), checked in the save's transaction.
  return a ? { ...a, userId, gated: trainingPending(db, userId, a.studyId) } : undefined;
}

/** The next item to work on after `afterKey`: the first not yet submitted, in list order, wrapping around. */
export function nextCaseId(rows: MyCaseRow[], afterKey: string | null): string | null {
  const at = afterKey === null ? -1 : rows.findIndex((r) => r.key === afterKey);
  return nextOpenItem(rows, at)?.key ?? null;
}

export interface AnnotatorCaseView {
  case: {
    /** The page's key (see MyCaseRow). */
    id: string;
    externalId: string;
    studyName: string;
    sections: { order: number; kind: string; content: string }[];
  };
  state: CaseState;
  values: AnnotationValues;
  version: number;
  updatedAt: number | null;
  nextCaseId: string | null;
  previousCaseId: string | null;
  progress: { done: number; total: number };
  /** Only on a training case: the reference and its rationale once it is submitted (docs/rater-quality.md). */
  training?: { reveal: { reference: CaseLabel; rationale: string } | null };
  /**
   * Until when "Undo submit" is open: this submission completed the case's pair and its grace period runs
   * (docs/safe-psych.md, "Second chances"); null otherwise. Says nothing of the other annotator's values.
   */
  undoUntil: number | null;
}

/** One assigned case with the annotator's own labels; null when the case is not assigned to them. */
export function getAnnotatorCase(db: Db, input: { userId: string; caseId: number }): AnnotatorCaseView | null {
  const view = getAnnotatorItem(db, { userId: input.userId, key: String(input.caseId) });
  return view && "view" in view ? view.view : null;
}

/**
 * The annotator's item behind a page key, as they may see it: `gated` while the study's training round is not done,
 * null when it is not theirs. `studyId` is for the server (its guidelines), not for the page.
 */
export function getAnnotatorItem(
  db: Db,
  input: { userId: string; key: string | undefined; now?: number },
): { view: AnnotatorCaseView; studyId: number } | { gated: true } | null {
  const now = input.now ?? Date.now();
  // A pair whose grace period is over is locked before it is shown.
  settleDueLocks(db, now);
  const item = resolveAnnotatorItem(db, input.userId, input.key);
  if (!item) return null;
  // Its place in the list, asked of the database: the list itself is not built for one page.
  const shown = queuePlace(db, input.userId, item);
  if (!shown) return null;
  if ("gated" in shown) return shown;
  const q = readStatements(db);
  let caseId: number;
  let state: CaseState;
  let values: AnnotationValues;
  let version: number;
  let updatedAt: number | null;
  let training: AnnotatorCaseView["training"];
  let locksAt: number | null;
  if (item.kind === "assignment") {
    const a = q.assignment.get({ caseId: item.caseId, userId: input.userId })!;
    const row = q.annotation.get({ assignmentId: a.id });
    caseId = a.caseId;
    state = (row?.status ?? "not_started") as CaseState;
    values = valuesOf(row);
    version = row?.version ?? 0;
    updatedAt = row?.updatedAt ?? null;
    locksAt = row?.locksAt ?? null;
  } else {
    const row = q.qualityItem.get({ id: item.id })!;
    caseId = row.caseId;
    state = (row.status ?? "not_started") as CaseState;
    values = row.status ? (qualityValuesOf(row) as AnnotationValues) : EMPTY_VALUES;
    version = row.version;
    updatedAt = row.updatedAt;
    locksAt = row.locksAt;
    if (row.kind === "training") training = { reveal: trainingReveal(db, input.userId, row.id) };
  }
  const view: AnnotatorCaseView = {
    case: {
      id: shown.key,
      externalId: shown.externalId,
      studyName: shown.studyName,
      sections: getCaseSections(db, caseId),
    },
    state,
    values,
    version,
    updatedAt,
    nextCaseId: shown.nextOpenKey,
    previousCaseId: shown.previousKey,
    progress: shown.progress,
    ...(training ? { training } : {}),
    undoUntil: state === "submitted" && locksAt !== null && locksAt > now ? locksAt : null,
  };
  return { view, studyId: shown.studyId };
}

/** `undoUntil`: this submission completed the pair, which locks then; until then it can be undone. */
export type SaveResult = WorkSaveResult<{ undoUntil?: number }>;

const LOCKED = "Both annotations of this case are in, so it is locked. Changes now go through the adjudicator.";

type Assignment = NonNullable<ReturnType<typeof findAssignment>>;
type AnnotationRow = typeof annotations.$inferSelect;

/** The annotation workspace's adapter of the work-item engine (docs/architecture.md, "The work-item engine"). */
const annotationWork: WorkItemAdapter<Assignment, AnnotationRow, AnnotationValues, { undoUntil?: number }> = {
  entity: "annotation",
  noun: "annotation",
  lockedMessage: LOCKED,
  find(tx, userId, caseId, now) {
    // A pair whose grace period is over locks before anything is read, in the save's transaction.
    settleDueLocksIn(tx, now);
    return findAssignment(tx, userId, caseId);
  },
  closed: (a) => (a.gated ? TRAINING_FIRST : null),
  guidelines: (a) => ({ scope: "safe_psych", scopeId: a.studyId }),
  row: (tx, _userId, a) => readStatements(tx).annotation.get({ assignmentId: a.id }),
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
  audited: (v) => labelColumns(v),
  freeText: ["missingOther", "notes"],
  write(tx, { item: a, row, userId, values: v, status, version, now }) {
    const columns = {
      ...labelColumns(v),
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
    const mine = completePair(tx, a, now);
    const undoUntil = mine === null ? pendingLockOf(tx, a.id) : null;
    // The other annotator's retest and calibration items paired with this case lock as their case would.
    lockQualityItemsBeside(tx, { caseId: a.caseId, submitterId: a.userId, now });
    // A submission moves the wash-out on: a retest may now be due (docs/rater-quality.md).
    refreshQualityItems(tx, a.userId, now, { studyId: a.studyId, place: a.position });
    if (mine !== null) return { state: "locked", version: mine };
    return undoUntil === null ? {} : { undoUntil };
  },
};

/** When this annotation's submission locks its pair, if it is the one that completed it and the grace period runs. */
function pendingLockOf(tx: DbOrTx, assignmentId: number): number | null {
  return readStatements(tx).annotation.get({ assignmentId })?.locksAt ?? null;
}

/**
 * What a submission does to its case's pair (docs/safe-psych.md, "Second chances"): when it makes the second
 * submitted annotation, the pair locks and the dispute rule runs after the grace period (`locks_at` on this
 * submission; a pair already waiting keeps its time), or at once when there is none. Returns the version of the
 * caller's annotation after an immediate lock, else null.
 */
function completePair(tx: Tx, a: Assignment, now: number): number | null {
  const grace = submitGraceMs();
  if (grace === 0) return lockIfComplete(tx, a, now)?.get(a.id) ?? null;
  const submitted = tx
    .select({ id: annotations.id, locksAt: annotations.locksAt })
    .from(annotations)
    .where(and(eq(annotations.caseId, a.caseId), eq(annotations.status, "submitted")))
    .all();
  if (submitted.length < 2 || submitted.some((s) => s.locksAt !== null)) return null;
  tx.update(annotations)
    .set({ locksAt: now + grace })
    .where(eq(annotations.assignmentId, a.id))
    .run();
  return null;
}

/**
 * Locks every pair whose grace period is over and runs its dispute rule, each at its own `locks_at`, in the caller's
 * transaction; the retest and calibration items due too (`settleQualityLocks`). Idempotent: a pair locks once, since
 * only submitted annotations with a time are read and locking clears it. Returns how many pairs and items it locked.
 */
export function settleDueLocksIn(tx: Tx, now: number): number {
  const due = tx
    .select({ caseId: annotations.caseId, at: annotations.locksAt, studyId: visibleCases.studyId })
    .from(annotations)
    .innerJoin(visibleCases, eq(visibleCases.id, annotations.caseId))
    .where(and(lte(annotations.locksAt, now), eq(annotations.status, "submitted")))
    .all();
  let locked = 0;
  for (const d of due) {
    tx.update(annotations).set({ locksAt: null }).where(eq(annotations.caseId, d.caseId)).run();
    if (lockIfComplete(tx, { caseId: d.caseId, studyId: d.studyId }, d.at!)) locked++;
  }
  return locked + settleQualityLocks(tx, now);
}

/**
 * `settleDueLocksIn` for a reader (the annotator's pages, the adjudication queue, progress, export): a cheap look for
 * a pair past its time first, and the write transaction only when there is one, so every reader that depends on the
 * lock sees it from the moment the grace period ends (docs/safe-psych.md, "Second chances"). The server also runs it
 * at start-up and every few seconds (app/platform/startup.server.ts).
 */
export function settleDueLocks(db: Db, now = Date.now()): number {
  const any = db.$client
    .prepare(
      `SELECT EXISTS (SELECT 1 FROM annotations WHERE locks_at <= ? AND status = 'submitted')
         OR EXISTS (SELECT 1 FROM quality_items WHERE locks_at <= ? AND status = 'submitted')`,
    )
    .pluck()
    .get(now, now);
  if (!any) return 0;
  return writeTransaction(db, (tx) => settleDueLocksIn(tx, now));
}

/** Undoes a submission in its grace period: back to a draft with the same values, the lock called off. */
const undoAnnotation = undoStep(annotationWork, {
  closed(tx, a, now) {
    const row = readStatements(tx).annotation.get({ assignmentId: a.id });
    return row?.status === "submitted" && row.locksAt !== null && row.locksAt > now ? null : UNDO_CLOSED;
  },
  write(tx, { item: a, row, version, now }) {
    const updated = tx
      .update(annotations)
      .set({ status: "draft", locksAt: null, updatedAt: now, version })
      .where(and(eq(annotations.id, row!.id), eq(annotations.version, row!.version)))
      .run();
    if (updated.changes === 0) return null;
    // The other annotator's items beside the case were to lock with it: they stay open too.
    unscheduleQualityItemsBeside(tx, { caseId: a.caseId, submitterId: a.userId });
    return a.id;
  },
});

/**
 * The annotator's "Undo submit" in the grace period after the submission that completed the case's pair
 * (docs/safe-psych.md, "Second chances"): the annotation is a draft again with its values, and the case does not
 * lock. Refused (409) once the grace period is over, or for a submission that had none. Through the engine: version,
 * event (`undo_submit`), one transaction. `key` is the page's key (a case id or an opaque key).
 */
export function undoSubmission(
  db: Db,
  input: { userId: string; key: string; version: number; now?: number },
): SaveResult {
  const item = resolveAnnotatorItem(db, input.userId, input.key);
  if (!item) return { ok: false, status: 404, message: WORK_MESSAGES.notFound };
  if (item.kind === "quality") return undoQualitySubmission(db, LOCKED, { ...input, id: item.id });
  return saveWorkItem(db, undoAnnotation, {
    userId: input.userId,
    itemId: item.caseId,
    values: EMPTY_VALUES,
    version: input.version,
    intent: "submit",
    now: input.now,
  });
}

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
 * Locks both annotations once two are submitted and derives the case's outcome. Returns the versions of the pair's
 * annotations (by assignment) after locking, or null when the case is not complete yet.
 */
function lockIfComplete(tx: DbOrTx, a: { caseId: number; studyId: number }, now: number): Map<number, number> | null {
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
  return new Map(submitted.map((s) => [s.assignmentId, s.version + 1]));
}

/** The annotator's rules for a quality item's submission: the same as for any case. */
function checkQualityValues(values: QualityValues, numSections: number) {
  const v = values as AnnotationValues;
  const check = checkSubmission(v, numSections);
  if (check.ok) return { ok: true as const, values: canonicalValues(v, check.label) as QualityValues };
  const errors: Record<string, string> = {};
  for (const [k, e] of Object.entries(check.errors))
    errors[k === "missingInfoOther" ? "missingOther" : k] = capitalise(e!);
  return { ok: false as const, errors };
}

/**
 * Saves a draft or a submission of a retest, calibration or training case: the same values, checks, messages and
 * result as an ordinary case — a submitted retest or calibration case stays revisable until the ordinary case beside
 * it completes its pair, as that case would (docs/rater-quality.md, "Blinding"); a training case locks at once.
 */
export function saveQualityAnnotation(
  db: Db,
  input: {
    userId: string;
    id: number;
    values: AnnotationValues;
    version: number;
    intent: "draft" | "submit";
    now?: number;
    activeMs?: number;
  },
): SaveResult {
  return saveQualityItem(db, [checkQualityValues, LOCKED], input);
}
