/**
 * Rater quality of a Safe-Psych study (docs/rater-quality.md): its settings, the calibration set, the quality items
 * put in annotators' queues (test–retest, calibration, training round), their save path through the work-item engine,
 * and the admin's report and export. Quality labels live in `quality_items` only: gold, adjudication, the inter-rater
 * statistics and the reference-format exports read `annotations` and never see them.
 */
import { labelColumns } from "./domain/label-columns";
import { and, asc, eq, exists, inArray, lte, sql } from "drizzle-orm";
import {
  adjudications,
  annotations,
  assignments,
  calibrationCases,
  caseOutcomes,
  qualityItems,
  studyQualitySettings,
  users,
  type CalibrationPurpose,
  type QualityKind,
} from "../../db/schema";
import { visibleCases, visibleStudies } from "../../db/schema-visible";
import { checkCaseLabel, isMissingInfoKey, type CaseLabel } from "../labels/labels";
import { labelOfAnnotation } from "../gold/public.server";
import { icd10Index } from "../icd10/icd10.server";
import { recordEvent } from "../audit/audit.server";
import { preparedOn, type Db, type DbOrTx, type Tx } from "../platform/db.server";
import { ServiceError } from "../platform/service-error";
import { parsePythonCsv } from "../formats/csv-text";
import { DuplicateRows } from "../formats/import-contract";
import { textSource, type ImportSource } from "../formats/import-source";
import { formulaWarning } from "../formats/spreadsheet-safe";
import { textWarning } from "../formats/strict-text";
import { formatCsv } from "../formats/csv-text";
import { saveWorkItem, updateAtVersion, writeTransaction, type WorkItemAdapter } from "../work-items/engine.server";
import { submitGraceMs } from "./submit-grace.server";
import { annotatorCounts } from "./study-counts.server";
import { WORK_MESSAGES, type Intent, type SaveResult, type WorkState } from "../work-items/domain/work-item";
import { dueRetests, drawCalibration, placeAmongOpen } from "../work-items/domain/rater-quality";
import {
  calibrationAccuracy,
  qualityOn,
  QUALITY_OFF,
  retestReport,
  type CalibrationAccuracy,
  type LabelPair,
  type QualitySettings,
  type RetestReport,
} from "./domain/rater-quality";
import { maxOf } from "../stats/extremes";

/** The message of a save or a page of real work while the annotator's training round is not done. */
export const TRAINING_FIRST = "Finish the training round first: your cases open when it is done.";

// ---------------------------------------------------------------- settings

export function getQualitySettings(db: DbOrTx, studyId: number): QualitySettings | null {
  const row = db.select().from(studyQualitySettings).where(eq(studyQualitySettings.studyId, studyId)).get();
  if (!row) return null;
  const { studyId: _s, updatedAt: _u, updatedBy: _b, ...settings } = row;
  return settings;
}

/** The settings of the studies given, for those that have any. */
export function qualitySettingsOf(db: DbOrTx, studyIds: readonly number[]): Map<number, QualitySettings> {
  const out = new Map<number, QualitySettings>();
  if (!studyIds.length) return out;
  for (const row of db
    .select()
    .from(studyQualitySettings)
    .where(inArray(studyQualitySettings.studyId, [...studyIds]))
    .all()) {
    const { studyId, updatedAt: _u, updatedBy: _b, ...settings } = row;
    out.set(studyId, settings);
  }
  return out;
}

/** Stores the study's settings (validated by QualitySettingsSchema at the edge) and audits the change. */
export function setQualitySettings(
  db: Db,
  input: { studyId: number; settings: QualitySettings; actorId: string | null; now?: number },
): void {
  writeTransaction(db, (tx) => writeQualitySettings(tx, input));
}

/** setQualitySettings inside the caller's transaction (an import that applies settings with its rows). */
function writeQualitySettings(
  tx: Tx,
  input: { studyId: number; settings: QualitySettings; actorId: string | null; now?: number },
): void {
  const now = input.now ?? Date.now();
  {
    if (!tx.select({ id: visibleStudies.id }).from(visibleStudies).where(eq(visibleStudies.id, input.studyId)).get())
      throw new ServiceError("No such study.", undefined, 404);
    const before = getQualitySettings(tx, input.studyId) ?? QUALITY_OFF;
    const changes: Record<string, unknown> = {};
    for (const k of Object.keys(input.settings) as (keyof QualitySettings)[])
      if (before[k] !== input.settings[k]) changes[k] = [before[k], input.settings[k]];
    // Switched on mid-study: the work already started keeps its name, address and place (docs/rater-quality.md,
    // "Switching it on mid-study").
    if (!qualityOn(before) && qualityOn(input.settings)) {
      const kept = keepNamesOfStartedWork(tx, input.studyId);
      if (kept) changes.namesKept = kept;
    }
    tx.insert(studyQualitySettings)
      .values({ studyId: input.studyId, ...input.settings, updatedAt: now, updatedBy: input.actorId })
      .onConflictDoUpdate({
        target: studyQualitySettings.studyId,
        set: { ...input.settings, updatedAt: now, updatedBy: input.actorId },
      })
      .run();
    if (Object.keys(changes).length)
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "study",
        entityId: input.studyId,
        studyId: input.studyId,
        action: "set_rater_quality",
        changes,
        at: now,
      });
  }
}

/**
 * The study's assignments with work started (an annotation row, draft or submitted) lose their opaque key: with rater
 * quality on, an assignment without one is listed and addressed by its case's id and name, as before
 * (annotations.server.ts annotatorQueue and resolveAnnotatorItem, case-queue.server.ts queuePlace). Only cases not yet
 * started take the opaque names, and every retest and calibration item has one, so a retest is still told apart from
 * none of the cases that could be new to the annotator. Returns how many kept their names.
 */
function keepNamesOfStartedWork(tx: DbOrTx, studyId: number): number {
  return tx.run(
    sql`UPDATE assignments SET item_key = NULL WHERE item_key IS NOT NULL
        AND id IN (SELECT assignment_id FROM annotations)
        AND case_id IN (SELECT id FROM visible_cases WHERE study_id = ${studyId})`,
  ).changes;
}

/**
 * What switching rater quality on would do to the study's work now (the admin page says it before saving): the
 * started cases that keep their names, over how many annotators, and the cases not started that take opaque names.
 */
export function qualitySwitchPreview(
  db: DbOrTx,
  studyId: number,
): { started: number; annotators: number; unstarted: number } {
  // From the counts the database keeps per study and annotator (docs/architecture.md, "Pages are windows"), not a
  // walk over the study's assignments: the rater-quality page costs the same whatever the study holds.
  let started = 0;
  let annotators = 0;
  let unstarted = 0;
  for (const c of annotatorCounts(db, studyId).values()) {
    started += c.started;
    if (c.started > 0) annotators++;
    unstarted += c.assigned - c.started;
  }
  return { started, annotators, unstarted };
}

// ---------------------------------------------------------------- calibration set

export interface ReferenceInput {
  sufficiency: string;
  icd10: string;
  earliestSection: number | null;
  missingInfo: string[];
  missingOther: string;
}

/** The reference as a checked label, or the reason it is not one (the annotators' own rules). */
function checkReference(
  r: ReferenceInput,
  numSections: number,
): { ok: true; label: CaseLabel } | { ok: false; message: string } {
  const bad = r.missingInfo.find((k) => !isMissingInfoKey(k));
  if (bad) return { ok: false, message: `"${bad}" is not a missing-information key` };
  const check = checkCaseLabel(
    {
      sufficiency: r.sufficiency === "sufficient" || r.sufficiency === "insufficient" ? r.sufficiency : undefined,
      icd10: r.icd10,
      earliestSection: r.earliestSection ?? undefined,
      missingInfo: r.missingInfo.filter(isMissingInfoKey),
      missingInfoOther: r.missingOther,
    },
    { sectionCount: numSections, isValidCode: (code) => icd10Index().isValidChapterVCode(code) },
  );
  if (check.ok) return { ok: true, label: check.label };
  return { ok: false, message: Object.values(check.errors).join("; ") };
}

function findSourceCase(
  tx: DbOrTx,
  targetStudyId: number,
  sourceStudy: string,
  externalId: string,
): { error: string } | { case: { id: number; numSections: number } } {
  const source = tx.select().from(visibleStudies).where(eq(visibleStudies.name, sourceStudy.trim())).get();
  if (!source) return { error: `no study named "${sourceStudy}"` };
  if (source.id === targetStudyId)
    return {
      error: "a calibration case comes from another study (a case of this study is annotated as ordinary work)",
    };
  const c = tx
    .select({ id: visibleCases.id, numSections: visibleCases.numSections })
    .from(visibleCases)
    .where(and(eq(visibleCases.studyId, source.id), eq(visibleCases.externalId, externalId.trim())))
    .get();
  if (!c) return { error: `study "${source.name}" has no case "${externalId}"` };
  return { case: c };
}

function insertCalibration(
  tx: Tx,
  input: {
    studyId: number;
    caseId: number;
    purpose: CalibrationPurpose;
    reference: CaseLabel;
    rationale: string;
    source: "admin" | "adjudicated";
    actorId: string | null;
    now: number;
  },
): boolean {
  const exists = tx
    .select({ id: calibrationCases.id })
    .from(calibrationCases)
    .where(and(eq(calibrationCases.studyId, input.studyId), eq(calibrationCases.caseId, input.caseId)))
    .get();
  if (exists) return false;
  const id = tx
    .insert(calibrationCases)
    .values({
      studyId: input.studyId,
      caseId: input.caseId,
      purpose: input.purpose,
      reference: input.reference,
      rationale: input.rationale,
      source: input.source,
      createdAt: input.now,
      createdBy: input.actorId,
    })
    .returning({ id: calibrationCases.id })
    .get().id;
  recordEvent(tx, {
    actorId: input.actorId,
    entity: "calibration_case",
    entityId: id,
    studyId: input.studyId,
    action: "add",
    changes: { purpose: [null, input.purpose], source: [null, input.source], reference: [null, input.reference] },
    at: input.now,
  });
  return true;
}

export interface CalibrationEntry {
  sourceStudy: string;
  externalId: string;
  purpose: CalibrationPurpose;
  reference: ReferenceInput;
  rationale: string;
}

/** Adds one admin-entered known-answer case; refused with the reason (and the field) when the entry is not valid. */
export function addCalibrationCase(
  db: Db,
  input: { studyId: number; entry: CalibrationEntry; actorId: string | null; now?: number },
): void {
  const now = input.now ?? Date.now();
  writeTransaction(db, (tx) => {
    const found = findSourceCase(tx, input.studyId, input.entry.sourceStudy, input.entry.externalId);
    if ("error" in found) throw new ServiceError(capital(found.error), "externalId");
    const ref = checkReference(input.entry.reference, found.case.numSections);
    if (!ref.ok) throw new ServiceError(`The reference label is not valid: ${ref.message}.`, "reference");
    if (
      !insertCalibration(tx, {
        studyId: input.studyId,
        caseId: found.case.id,
        purpose: input.entry.purpose,
        reference: ref.label,
        rationale: input.entry.rationale,
        source: "admin",
        actorId: input.actorId,
        now,
      })
    )
      throw new ServiceError("That case is already in the calibration set.", "externalId");
  });
}

const CALIBRATION_HEADER = [
  "study",
  "case",
  "purpose",
  "sufficiency",
  "icd10",
  "earliest_section",
  "missing_info",
  "missing_other",
  "rationale",
] as const;

/**
 * Imports known-answer cases from a CSV (one case a line, docs/rater-quality.md, "Calibration cases"), all or
 * nothing. Problems come back as `FILE:LINE: reason` lines and nothing is written. `settings` (the command line's
 * flags) are applied in the same transaction as the rows, after every line is checked: a refused file changes no
 * setting either (docs/reliability.md, "The import contract").
 */
export function importCalibrationCsv(
  db: Db,
  input: {
    studyId: number;
    filename: string;
    /** The CSV, or the command line's stream of it (`importFileSource`): read line by line, never held whole. */
    text: string | ImportSource;
    actorId: string | null;
    now?: number;
    settings?: QualitySettings | null;
  },
):
  | { ok: true; added: number; skipped: number; warnings: string[] }
  | { ok: false; errors: string[]; warnings: string[] } {
  const now = input.now ?? Date.now();
  // Physical lines (LF, CRLF or a lone CR), a BOM dropped: the one streaming reader's lines (docs/reliability.md,
  // "Memory bounded by the longest line"). What is kept until the write is one entry per listed case.
  const source = typeof input.text === "string" ? textSource(input.text, input.filename) : input.text;
  const lines = source.jsonlLines()[Symbol.iterator]();
  const errors: string[] = [];
  const warnings: string[] = [];
  const at = (line: number, reason: string) => errors.push(`${input.filename}:${line}: ${reason}`);
  const first = lines.next();
  const header = first.done ? [] : safeRow(first.value.text);
  if (!header || header.join(",") !== CALIBRATION_HEADER.join(","))
    return {
      ok: false,
      errors: [`${input.filename}:1: the header must be exactly ${CALIBRATION_HEADER.join(",")}`],
      warnings,
    };
  return writeTransaction(db, (tx) => {
    let added = 0;
    let skipped = 0;
    const entries: {
      line: number;
      caseId: number;
      purpose: CalibrationPurpose;
      label: CaseLabel;
      rationale: string;
    }[] = [];
    const listed = new DuplicateRows();
    const check = ({ line, text }: { line: number; text: string }) => {
      if (text.trim() === "") return;
      const row = safeRow(text);
      if (!row) return at(line, "not one CSV record on one line (a quoted field may not span lines)");
      if (row.length !== CALIBRATION_HEADER.length)
        return at(
          line,
          `${row.length} fields, expected ${CALIBRATION_HEADER.length} (${CALIBRATION_HEADER.join(",")})`,
        );
      const [study, externalId, purpose, sufficiency, icd10, earliest, missing, missingOther, rationale] = row as [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      if (purpose !== "calibration" && purpose !== "training")
        return at(line, `purpose must be calibration or training, not "${purpose}"`);
      const found = findSourceCase(tx, input.studyId, study, externalId);
      if ("error" in found) return at(line, found.error);
      const section = earliest.trim() === "" ? null : Number(earliest);
      if (section !== null && !Number.isInteger(section))
        return at(line, `earliest_section must be a whole number, not "${earliest}"`);
      const ref = checkReference(
        {
          sufficiency,
          icd10,
          earliestSection: section,
          missingInfo: missing
            .split(";")
            .map((s) => s.trim())
            .filter(Boolean),
          missingOther,
        },
        found.case.numSections,
      );
      if (!ref.ok) return at(line, `reference label: ${ref.message}`);
      // A case listed twice is refused with both lines, whether its two lines agree or not.
      const twice = listed.see(`${study}/${externalId.trim()}`, line, text, "the case");
      if (twice)
        return at(
          line,
          "repeat" in twice ? `this case is listed twice: on line ${twice.repeat} and on line ${line}` : twice.conflict,
        );
      const odd = formulaWarning({ rationale, missing_other: missingOther }) ?? textWarning("rationale", rationale);
      if (odd) warnings.push(`${input.filename}:${line}: warning: ${odd}`);
      entries.push({ line, caseId: found.case.id, purpose, label: ref.label, rationale });
    };
    for (let next = lines.next(); !next.done; next = lines.next()) check(next.value);
    if (errors.length) return { ok: false as const, errors, warnings };
    if (input.settings) writeQualitySettings(tx, { ...input, settings: input.settings, now });
    for (const e of entries)
      if (
        insertCalibration(tx, {
          studyId: input.studyId,
          caseId: e.caseId,
          purpose: e.purpose,
          reference: e.label,
          rationale: e.rationale,
          source: "admin",
          actorId: input.actorId,
          now,
        })
      )
        added++;
      else skipped++;
    return { ok: true as const, added, skipped, warnings };
  });
}

function safeRow(text: string): string[] | null {
  try {
    const rows = parsePythonCsv(text);
    return rows.length === 1 ? rows[0]! : null;
  } catch {
    return null;
  }
}

/**
 * Adds the adjudicated cases of an earlier study as known-answer cases: the adjudicator's final label as the
 * reference and their rationale as its explanation. Cases already in the set are left as they are.
 */
export function importAdjudicatedCalibration(
  db: Db,
  input: { studyId: number; fromStudy: string; purpose: CalibrationPurpose; actorId: string | null; now?: number },
): { added: number; skipped: number } {
  const now = input.now ?? Date.now();
  return writeTransaction(db, (tx) => {
    const from = tx.select().from(visibleStudies).where(eq(visibleStudies.name, input.fromStudy.trim())).get();
    if (!from) throw new ServiceError(`No study named "${input.fromStudy}".`, "fromStudy");
    if (from.id === input.studyId)
      throw new ServiceError("Choose an earlier study: a calibration case comes from another study.", "fromStudy");
    const decided = tx
      .select({ caseId: caseOutcomes.caseId, gold: caseOutcomes.gold, rationale: adjudications.rationale })
      .from(caseOutcomes)
      .innerJoin(adjudications, and(eq(adjudications.caseId, caseOutcomes.caseId), eq(adjudications.status, "decided")))
      .where(and(eq(caseOutcomes.studyId, from.id), eq(caseOutcomes.status, "adjudicated")))
      .all();
    let added = 0;
    let skipped = 0;
    for (const d of decided) {
      if (!d.gold) continue;
      const ok = insertCalibration(tx, {
        studyId: input.studyId,
        caseId: d.caseId,
        purpose: input.purpose,
        reference: d.gold,
        rationale: d.rationale,
        source: "adjudicated",
        actorId: input.actorId,
        now,
      });
      if (ok) added++;
      else skipped++;
    }
    return { added, skipped };
  });
}

export interface CalibrationSetRow {
  id: number;
  sourceStudy: string;
  externalId: string;
  purpose: CalibrationPurpose;
  source: "admin" | "adjudicated";
  reference: CaseLabel;
  rationale: string;
  inUse: number;
}

/** The study's calibration set, for its admin page. */
export function listCalibrationSet(db: DbOrTx, studyId: number): CalibrationSetRow[] {
  const used = new Map<number, number>();
  for (const q of db
    .select({ calibrationId: qualityItems.calibrationId })
    .from(qualityItems)
    .where(eq(qualityItems.studyId, studyId))
    .all())
    if (q.calibrationId !== null) used.set(q.calibrationId, (used.get(q.calibrationId) ?? 0) + 1);
  return db
    .select({
      id: calibrationCases.id,
      sourceStudy: visibleStudies.name,
      externalId: visibleCases.externalId,
      purpose: calibrationCases.purpose,
      source: calibrationCases.source,
      reference: calibrationCases.reference,
      rationale: calibrationCases.rationale,
    })
    .from(calibrationCases)
    .innerJoin(visibleCases, eq(visibleCases.id, calibrationCases.caseId))
    .innerJoin(visibleStudies, eq(visibleStudies.id, visibleCases.studyId))
    .where(eq(calibrationCases.studyId, studyId))
    .orderBy(asc(calibrationCases.purpose), asc(visibleStudies.name), asc(visibleCases.position))
    .all()
    .map((r) => ({ ...r, inUse: used.get(r.id) ?? 0 }));
}

/** Removes a known-answer case that no annotator has been given yet. */
export function removeCalibrationCase(db: Db, input: { studyId: number; id: number; actorId: string | null }): void {
  writeTransaction(db, (tx) => {
    const row = tx
      .select()
      .from(calibrationCases)
      .where(and(eq(calibrationCases.id, input.id), eq(calibrationCases.studyId, input.studyId)))
      .get();
    if (!row) throw new ServiceError("No such calibration case.", undefined, 404);
    if (tx.select({ id: qualityItems.id }).from(qualityItems).where(eq(qualityItems.calibrationId, row.id)).get())
      throw new ServiceError("This case is already in an annotator's queue; it stays in the set.");
    tx.delete(calibrationCases).where(eq(calibrationCases.id, row.id)).run();
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "calibration_case",
      entityId: row.id,
      studyId: input.studyId,
      action: "remove",
      changes: { purpose: [row.purpose, null] },
    });
  });
}

// ---------------------------------------------------------------- the annotator's queue

const isDone = (status: string | null) => status === "submitted" || status === "locked";

/**
 * Adds to the annotator's queues whatever their studies' settings now call for (docs/rater-quality.md): the training
 * cases, calibration cases up to the rate, and retests whose wash-out holds. Idempotent: nothing is added twice, and
 * a study without settings gets nothing. Runs in the caller's transaction. `from` is the item whose submission
 * called it (its study and place in the list): a new item goes after it, past the next open ones (`placeAmongOpen`).
 * A retest keeps its first label as it stands now (docs/rater-quality.md, "The first label"); a retest or
 * calibration case is paired with the annotator's ordinary case next after it in the list (the last, if none is
 * after it), whose other annotator's submission locks it (`lockQualityItemsBeside`).
 */
export function refreshQualityItems(
  tx: DbOrTx,
  userId: string,
  now: number,
  from?: { studyId: number; place: number },
): void {
  const mine = tx
    .select({
      caseId: assignments.caseId,
      studyId: visibleCases.studyId,
      position: visibleCases.position,
      annotationId: annotations.id,
      status: annotations.status,
      submittedAt: annotations.submittedAt,
    })
    .from(assignments)
    .innerJoin(visibleCases, eq(visibleCases.id, assignments.caseId))
    .leftJoin(annotations, eq(annotations.assignmentId, assignments.id))
    .where(eq(assignments.annotatorId, userId))
    .all();
  const settings = qualitySettingsOf(tx, [...new Set(mine.map((m) => m.studyId))]);
  const annotatedAnywhere = new Set(mine.map((m) => m.caseId));
  for (const [studyId, s] of settings) {
    if (!qualityOn(s)) continue;
    const ordinary = mine
      .filter((m) => m.studyId === studyId)
      .sort((a, b) => a.position - b.position || a.caseId - b.caseId);
    const after = from?.studyId === studyId ? from.place : undefined;
    // The ordinary case beside a new item at `sortKey`: the next after it in the list, or the last.
    const pairedWith = (sortKey: number) =>
      (ordinary.find((o) => o.position > sortKey) ?? ordinary[ordinary.length - 1])?.caseId ?? null;
    const existing = tx
      .select()
      .from(qualityItems)
      .where(and(eq(qualityItems.studyId, studyId), eq(qualityItems.annotatorId, userId)))
      .all();
    const pool = tx.select().from(calibrationCases).where(eq(calibrationCases.studyId, studyId)).all();
    const add = (kind: QualityKind, caseId: number, sortKey: number, extra: object) => {
      const id = tx
        .insert(qualityItems)
        .values({ studyId, annotatorId: userId, caseId, kind, sortKey, createdAt: now, ...extra })
        .returning({ id: qualityItems.id })
        .get().id;
      // The case is not named on the event: the trail of a case is read by its id.
      recordEvent(tx, {
        actorId: null,
        entity: "quality_item",
        entityId: id,
        studyId,
        action: "add",
        changes: { kind: [null, kind], annotator: [null, userId] },
        at: now,
      });
      existing.push({ sortKey, status: null, kind } as (typeof existing)[number]);
    };

    if (s.training) {
      const given = new Set(existing.filter((q) => q.kind === "training").map((q) => q.calibrationId));
      const training = pool
        .filter((c) => c.purpose === "training" && !annotatedAnywhere.has(c.caseId))
        .sort((a, b) => a.id - b.id);
      training.forEach((c, i) => {
        if (!given.has(c.id)) add("training", c.caseId, -1_000_000 + i, { calibrationId: c.id });
      });
    }
    const openKeys = () => [
      ...ordinary.filter((o) => !isDone(o.status)).map((o) => o.position),
      ...existing.filter((q) => q.kind !== "training" && !isDone(q.status)).map((q) => q.sortKey),
    ];
    const lastKey = () => Math.max(0, maxOf(ordinary.map((o) => o.position)), maxOf(existing.map((q) => q.sortKey)));
    if (s.calibrationRate > 0) {
      const calibration = pool.filter((c) => c.purpose === "calibration");
      const draw = drawCalibration({
        seed: s.seed,
        person: userId,
        rate: s.calibrationRate,
        assigned: ordinary.length,
        pool: calibration.map((c) => c.id),
        given: new Set(existing.filter((q) => q.kind === "calibration").map((q) => q.calibrationId!)),
        excluded: new Set(calibration.filter((c) => annotatedAnywhere.has(c.caseId)).map((c) => c.id)),
      });
      for (const id of draw) {
        const c = calibration.find((x) => x.id === id)!;
        const key = placeAmongOpen({
          seed: s.seed,
          person: userId,
          itemTag: `c${id}`,
          openKeys: openKeys(),
          lastKey: lastKey(),
          from: after,
        });
        add("calibration", c.caseId, key, { calibrationId: c.id, pairedCaseId: pairedWith(key) });
      }
    }
    if (s.retestFraction > 0) {
      const due = dueRetests({
        seed: s.seed,
        person: userId,
        fraction: s.retestFraction,
        washOut: { items: s.washoutCases, days: s.washoutDays },
        assigned: ordinary.map((o) => o.caseId),
        submissions: ordinary
          .filter((o) => isDone(o.status) && o.submittedAt !== null)
          .map((o) => ({ itemId: o.caseId, submittedAt: o.submittedAt! })),
        already: new Set(existing.filter((q) => q.kind === "retest").map((q) => q.caseId)),
        now,
      });
      for (const caseId of due) {
        const first = ordinary.find((o) => o.caseId === caseId)!;
        const key = placeAmongOpen({
          seed: s.seed,
          person: userId,
          itemTag: `r${caseId}`,
          openKeys: openKeys(),
          lastKey: lastKey(),
          from: after,
        });
        // The first label as it stands when the retest enters the queue: what the report compares with.
        const label = tx.select().from(annotations).where(eq(annotations.id, first.annotationId!)).get()!;
        add("retest", caseId, key, {
          firstAnnotationId: first.annotationId,
          firstLabel: labelOfAnnotation(label),
          firstSubmittedAt: label.submittedAt,
          pairedCaseId: pairedWith(key),
        });
      }
    }
  }
}

/**
 * The queue refresh on its own, for the list page: one IMMEDIATE transaction, taken only when one of the annotator's
 * studies has rater quality switched on.
 */
export function refreshMyQueue(db: Db, userId: string, now = Date.now()): void {
  // The studies the annotator has work in, one index probe per study (assignments_study_annotator_idx), not a
  // walk over all their assignments (docs/architecture.md, "Pages are windows").
  const studyIds = db
    .select({ studyId: visibleStudies.id })
    .from(visibleStudies)
    .where(
      exists(
        db
          .select({ one: sql`1` })
          .from(assignments)
          .where(and(eq(assignments.studyId, visibleStudies.id), eq(assignments.annotatorId, userId))),
      ),
    )
    .all()
    .map((r) => r.studyId);
  if (![...qualitySettingsOf(db, studyIds).values()].some(qualityOn)) return;
  writeTransaction(db, (tx) => refreshQualityItems(tx, userId, now));
}

/** The annotator's training rounds not yet done: study, done, total (their list shows only these cases meanwhile). */
export function myTrainingRounds(db: DbOrTx, userId: string): { studyName: string; done: number; total: number }[] {
  const rows = db
    .select({ studyId: qualityItems.studyId, studyName: visibleStudies.name, status: qualityItems.status })
    .from(qualityItems)
    .innerJoin(visibleStudies, eq(visibleStudies.id, qualityItems.studyId))
    .where(and(eq(qualityItems.annotatorId, userId), eq(qualityItems.kind, "training")))
    .orderBy(asc(visibleStudies.name))
    .all();
  const out: { studyName: string; done: number; total: number }[] = [];
  for (const name of [...new Set(rows.map((r) => r.studyName))]) {
    const mine = rows.filter((r) => r.studyName === name);
    const done = mine.filter((r) => isDone(r.status)).length;
    if (done < mine.length) out.push({ studyName: name, done, total: mine.length });
  }
  return out;
}

export interface QualityQueueRow {
  /** Internal: the quality item's id (never sent to a page). */
  id: number;
  key: string;
  studyId: number;
  kind: QualityKind;
  sortKey: number;
  numSections: number;
  state: WorkState;
  updatedAt: number | null;
}

/** The annotator's quality items, every study. */
export function qualityQueue(db: DbOrTx, userId: string): QualityQueueRow[] {
  return db
    .select({
      id: qualityItems.id,
      key: qualityItems.itemKey,
      studyId: qualityItems.studyId,
      kind: qualityItems.kind,
      sortKey: qualityItems.sortKey,
      numSections: visibleCases.numSections,
      status: qualityItems.status,
      updatedAt: qualityItems.updatedAt,
    })
    .from(qualityItems)
    .innerJoin(visibleCases, eq(visibleCases.id, qualityItems.caseId))
    .where(eq(qualityItems.annotatorId, userId))
    .orderBy(asc(qualityItems.id))
    .all()
    .map(({ status, ...r }) => ({ ...r, state: (status ?? "not_started") as WorkState }));
}

/** The checks every save of an annotator makes, prepared once per connection (docs/architecture.md, "Cheaper pages"). */
const queueStatements = preparedOn((db) => ({
  // From quality_items_queue_idx alone: a training case of the study not yet submitted.
  trainingOpen: db.$client
    .prepare(
      `SELECT EXISTS (SELECT 1 FROM quality_items WHERE annotator_id = ? AND study_id = ? AND kind = 'training'
         AND (status IS NULL OR status = 'draft'))`,
    )
    .pluck(),
  byKey: db.$client.prepare("SELECT id, study_id FROM quality_items WHERE item_key = ? AND annotator_id = ?").raw(),
  // Whether the other annotator of the case has submitted it (annotations_case_idx).
  coAnnotated: db.$client
    .prepare(
      `SELECT EXISTS (SELECT 1 FROM annotations WHERE case_id = ? AND annotator_id <> ?
         AND status IN ('submitted', 'locked'))`,
    )
    .pluck(),
  // The annotator's ordinary case of the study next after a place in their list, and their last.
  pairedNext: db.$client
    .prepare(
      `SELECT c.id FROM assignments a JOIN visible_cases c ON c.id = a.case_id
       WHERE a.annotator_id = @user AND c.study_id = @study AND c.position > @place ORDER BY c.position, c.id LIMIT 1`,
    )
    .pluck(),
  pairedLast: db.$client
    .prepare(
      `SELECT c.id FROM assignments a JOIN visible_cases c ON c.id = a.case_id
       WHERE a.annotator_id = @user AND c.study_id = @study ORDER BY c.position DESC, c.id DESC LIMIT 1`,
    )
    .pluck(),
  // The submitted retest and calibration items of other annotators paired with a case (quality_items_paired_case_idx).
  pairedSubmitted: db.$client
    .prepare(
      `SELECT id, version, study_id, locks_at FROM quality_items WHERE paired_case_id = ? AND annotator_id <> ?
         AND status = 'submitted' AND kind <> 'training'`,
    )
    .raw(),
}));

/** Whether the annotator still has training cases of the study to submit (real work is closed until then). */
export function trainingPending(db: DbOrTx, userId: string, studyId: number): boolean {
  return queueStatements(db).trainingOpen.get(userId, studyId) === 1;
}

/** The item behind an opaque key, if it is this annotator's. */
export function findQualityByKey(db: DbOrTx, userId: string, key: string): { id: number; studyId: number } | null {
  const row = queueStatements(db).byKey.get(key, userId) as [number, number] | undefined;
  return row ? { id: row[0], studyId: row[1] } : null;
}

// ---------------------------------------------------------------- saving a quality item

export interface QualityValues {
  sufficiency: "" | "sufficient" | "insufficient";
  icd10: string;
  earliestSection: number | null;
  missingInfo: string[];
  missingOther: string;
  notes: string;
}

function findQualityItem(tx: DbOrTx, userId: string, id: number) {
  const q = tx
    .select({
      id: qualityItems.id,
      studyId: qualityItems.studyId,
      caseId: qualityItems.caseId,
      kind: qualityItems.kind,
      sortKey: qualityItems.sortKey,
      pairedCaseId: qualityItems.pairedCaseId,
      numSections: visibleCases.numSections,
    })
    .from(qualityItems)
    .innerJoin(visibleCases, eq(visibleCases.id, qualityItems.caseId))
    .where(and(eq(qualityItems.id, id), eq(qualityItems.annotatorId, userId)))
    .get();
  if (!q) return null;
  return { ...q, userId, gated: q.kind !== "training" && trainingPending(tx, userId, q.studyId) };
}

type QualityItem = NonNullable<ReturnType<typeof findQualityItem>>;
type QualityRow = typeof qualityItems.$inferSelect;

export function qualityValuesOf(row: QualityRow | undefined): QualityValues {
  return {
    sufficiency: (row?.sufficiency ?? "") as QualityValues["sufficiency"],
    icd10: row?.icd10 ?? "",
    earliestSection: row?.earliestSection ?? null,
    missingInfo: row?.missingInfo ?? [],
    missingOther: row?.missingOther ?? "",
    notes: row?.notes ?? "",
  };
}

/**
 * The engine adapter of a quality item. The row exists from the start (it was put in the queue), so "nothing saved
 * yet" is its null status. A submitted retest or calibration case stays open to revision, and locks, exactly when
 * an ordinary case in its place would: when the other annotator of its paired case has submitted that case — at its
 * own submission if they already have, else at theirs (`lockQualityItemsBeside`) (docs/rater-quality.md,
 * "Blinding"). A training case locks at once (its reference is shown next). A submission adds what the queue now
 * calls for.
 */
function qualityAdapter(
  check: (
    values: QualityValues,
    numSections: number,
  ) => { ok: true; values: QualityValues } | { ok: false; errors: Record<string, string> },
  lockedMessage: string,
): WorkItemAdapter<QualityItem, QualityRow, QualityValues, { undoUntil?: number }> {
  return {
    entity: "quality_item",
    noun: "annotation",
    lockedMessage,
    find(tx, userId, id, now) {
      // A pair whose grace period is over locks before anything is read (docs/safe-psych.md, "Second chances").
      settleQualityLocks(tx, now);
      return findQualityItem(tx, userId, id);
    },
    closed: (q) => (q.gated ? TRAINING_FIRST : null),
    guidelines: (q) => ({ scope: "safe_psych", scopeId: q.studyId }),
    row: (tx, _u, q) => {
      const row = tx.select().from(qualityItems).where(eq(qualityItems.id, q.id)).get();
      return row?.status ? row : undefined;
    },
    meta: (r) => ({ id: r.id, state: r.status ?? "not_started", version: r.version, savedAt: r.updatedAt }),
    valuesOf: (row) => qualityValuesOf(row),
    check(_tx, q, values) {
      const c = check(values, q.numSections);
      return c.ok
        ? { ok: true, values: c.values }
        : { ok: false, message: WORK_MESSAGES.incomplete("annotation"), errors: c.errors };
    },
    audited: (v) => labelColumns(v),
    freeText: ["missingOther", "notes"],
    write(tx, { item, row, values: v, status, version, now }) {
      const columns = {
        ...labelColumns(v),
        status,
        updatedAt: now,
        version,
        ...(status === "submitted" ? { submittedAt: now } : {}),
      };
      // The row is there with version 0 before the first save.
      return updateAtVersion(tx, qualityItems, item.id, row?.version ?? 0, columns) ? item.id : null;
    },
    auditContext: (q) => ({ entityId: q.id, studyId: q.studyId }),
    onSubmitted(tx, q, now) {
      const row = tx
        .select({ version: qualityItems.version, locksAt: qualityItems.locksAt })
        .from(qualityItems)
        .where(eq(qualityItems.id, q.id))
        .get()!;
      // A training case locks at once; a retest or calibration case whose pair is complete locks after the grace
      // period, as an ordinary case would (docs/safe-psych.md, "Second chances"), at once when there is none.
      const grace = q.kind === "training" ? 0 : submitGraceMs();
      const locks = q.kind === "training" || pairCompleted(tx, q);
      if (locks && grace > 0 && row.locksAt === null)
        tx.update(qualityItems)
          .set({ locksAt: now + grace })
          .where(eq(qualityItems.id, q.id))
          .run();
      if (locks && grace === 0) lockQualityItem(tx, { id: q.id, version: row.version, studyId: q.studyId, now });
      refreshQualityItems(tx, q.userId, now, { studyId: q.studyId, place: q.sortKey });
      if (locks && grace === 0) return { state: "locked", version: row.version + 1 };
      return locks ? { undoUntil: row.locksAt ?? now + grace } : {};
    },
  };
}

/**
 * Whether the other annotator of the retest or calibration item's paired case has submitted it. An item given before
 * pairs were kept is paired here, with the annotator's ordinary case next after it (or their last), and keeps it.
 */
function pairCompleted(tx: Tx, q: QualityItem): boolean {
  const st = queueStatements(tx);
  let paired = q.pairedCaseId;
  if (paired === null) {
    const at = { user: q.userId, study: q.studyId, place: q.sortKey };
    paired = ((st.pairedNext.get(at) ?? st.pairedLast.get(at)) as number | undefined) ?? null;
    if (paired === null) return false;
    tx.update(qualityItems).set({ pairedCaseId: paired }).where(eq(qualityItems.id, q.id)).run();
  }
  return st.coAnnotated.get(paired, q.userId) === 1;
}

/** Locks a submitted quality item; updated_at stays the annotator's own last save, as on a case's lock. */
function lockQualityItem(tx: Tx, item: { id: number; version: number; studyId: number; now: number }): void {
  tx.update(qualityItems)
    .set({ status: "locked", version: item.version + 1, locksAt: null })
    .where(eq(qualityItems.id, item.id))
    .run();
  recordEvent(tx, {
    actorId: null,
    entity: "quality_item",
    entityId: item.id,
    studyId: item.studyId,
    action: "lock",
    changes: { status: ["submitted", "locked"] },
    at: item.now,
  });
}

/**
 * A submission of `caseId` by `submitterId` completes that case's pair for its other annotator: their submitted
 * retest and calibration items paired with it lock as the case itself does (docs/rater-quality.md, "Blinding") —
 * after the grace period (docs/safe-psych.md, "Second chances"; at once without one). An item already due to lock
 * keeps its time. Runs in the submission's transaction (annotations.server.ts, the annotation adapter's onSubmitted).
 */
export function lockQualityItemsBeside(tx: Tx, input: { caseId: number; submitterId: string; now: number }): void {
  const grace = submitGraceMs();
  for (const [id, version, studyId, locksAt] of queueStatements(tx).pairedSubmitted.all(
    input.caseId,
    input.submitterId,
  ) as [number, number, number, number | null][]) {
    if (grace === 0) lockQualityItem(tx, { id, version, studyId, now: input.now });
    else if (locksAt === null)
      tx.update(qualityItems)
        .set({ locksAt: input.now + grace })
        .where(eq(qualityItems.id, id))
        .run();
  }
}

/**
 * The submission of `caseId` by `submitterId` was undone in its grace period: the items beside it that it was to lock
 * stay open, as the case does.
 */
export function unscheduleQualityItemsBeside(tx: Tx, input: { caseId: number; submitterId: string }): void {
  for (const [id] of queueStatements(tx).pairedSubmitted.all(input.caseId, input.submitterId) as [number][])
    tx.update(qualityItems).set({ locksAt: null }).where(eq(qualityItems.id, id)).run();
}

/**
 * Locks the submitted quality items whose grace period is over (each at its own time), in the caller's transaction;
 * idempotent. Part of `settleDueLocks` (annotations.server.ts).
 */
export function settleQualityLocks(tx: Tx, now: number): number {
  const due = tx
    .select({
      id: qualityItems.id,
      version: qualityItems.version,
      studyId: qualityItems.studyId,
      at: qualityItems.locksAt,
    })
    .from(qualityItems)
    .where(and(lte(qualityItems.locksAt, now), eq(qualityItems.status, "submitted")))
    .all();
  for (const q of due) lockQualityItem(tx, { id: q.id, version: q.version, studyId: q.studyId, now: q.at! });
  return due.length;
}

/** Whether a quality item is in its grace period (the undo is open), for the undo step. */
export function qualityLocksAt(tx: DbOrTx, id: number): number | null {
  return tx.select({ at: qualityItems.locksAt }).from(qualityItems).where(eq(qualityItems.id, id)).get()?.at ?? null;
}

/** Why an undo is refused when the submission is not in its grace period (docs/safe-psych.md, "Second chances"). */
export const UNDO_CLOSED =
  "This submission can no longer be undone: its grace period is over, or it did not complete the case (then use “Save revision”).";

/**
 * The undo of a submission in its grace period, as an engine step: back to a draft with the same values, the lock
 * called off. Shared by the annotation's undo (annotations.server.ts) with its own rows.
 */
export function undoStep<Item, Row, V>(
  adapter: WorkItemAdapter<Item, Row, V>,
  rule: {
    /** Why this item's submission cannot be undone now (its grace period is over or it never had one), or null. */
    closed(tx: Tx, item: Item, now: number): string | null;
    write: WorkItemAdapter<Item, Row, V>["write"];
  },
): WorkItemAdapter<Item & { undoClosed: string | null }, Row, V> {
  return {
    ...(adapter as unknown as WorkItemAdapter<Item & { undoClosed: string | null }, Row, V>),
    find(tx, userId, id, now) {
      const item = adapter.find(tx, userId, id, now);
      return item && { ...item, undoClosed: rule.closed(tx, item, now) };
    },
    closed: (item) => adapter.closed?.(item) ?? item.undoClosed,
    check: undefined,
    guidelines: undefined,
    onSubmitted: () => ({ state: "draft" }),
    write: (tx, w) => rule.write(tx, w),
    step: { action: "undo_submit", changes: () => ({ status: ["submitted", "draft"] }) },
  };
}

const undoQuality = (lockedMessage: string) =>
  undoStep(
    qualityAdapter(() => ({ ok: false, errors: {} }), lockedMessage),
    {
      closed(tx, q, now) {
        const at = qualityLocksAt(tx, q.id);
        return at !== null && at > now ? null : UNDO_CLOSED;
      },
      write: (tx, { item, row, version, now }) =>
        updateAtVersion(tx, qualityItems, item.id, row?.version ?? 0, {
          status: "draft",
          locksAt: null,
          updatedAt: now,
          version,
        })
          ? item.id
          : null,
    },
  );

/** Undoes the submission of a quality item in its grace period (docs/safe-psych.md, "Second chances"). */
export function undoQualitySubmission(
  db: Db,
  lockedMessage: string,
  input: { userId: string; id: number; version: number; now?: number },
): SaveResult {
  return saveWorkItem(db, undoQuality(lockedMessage), {
    userId: input.userId,
    itemId: input.id,
    values: qualityValuesOf(undefined),
    version: input.version,
    intent: "submit",
    now: input.now,
  });
}

/** Saves a draft or a submission of a quality item through the work-item engine. */
export function saveQualityItem(
  db: Db,
  adapterRules: Parameters<typeof qualityAdapter>,
  input: {
    userId: string;
    id: number;
    values: QualityValues;
    version: number;
    intent: Intent;
    now?: number;
    activeMs?: number;
  },
): SaveResult {
  return saveWorkItem(db, qualityAdapter(...adapterRules), { ...input, itemId: input.id });
}

/** What a training case shows after its submission: the reference and its rationale. Null before, or for any other item. */
export function trainingReveal(
  db: DbOrTx,
  userId: string,
  id: number,
): { reference: CaseLabel; rationale: string } | null {
  const row = db
    .select({
      status: qualityItems.status,
      reference: calibrationCases.reference,
      rationale: calibrationCases.rationale,
    })
    .from(qualityItems)
    .innerJoin(calibrationCases, eq(calibrationCases.id, qualityItems.calibrationId))
    .where(and(eq(qualityItems.id, id), eq(qualityItems.annotatorId, userId), eq(qualityItems.kind, "training")))
    .get();
  return row && isDone(row.status) ? { reference: row.reference, rationale: row.rationale } : null;
}

// ---------------------------------------------------------------- report and export

function labelOfQuality(row: QualityRow): CaseLabel {
  return labelOfAnnotation(row);
}

/** A first label revised after its retest entered the queue: the report compares with it as it was. */
export interface RevisedFirstLabel {
  annotator: string;
  caseStudy: string;
  case: string;
  /** The first label as it stood when the retest entered the queue: what the figures compare with. */
  asCompared: CaseLabel;
  /** The first label now. */
  now: CaseLabel;
  /** Whether the retest itself has been submitted (only then does it count in the figures). */
  retestSubmitted: boolean;
}

export interface RaterQualityReport {
  settings: QualitySettings | null;
  retest: RetestReport;
  calibration: CalibrationAccuracy[];
  /** Per annotator: items of each kind given and submitted. */
  items: { annotator: string; kind: QualityKind; given: number; submitted: number }[];
  /** First labels revised after their retest entered the queue (docs/rater-quality.md, "The first label"). */
  revisedFirstLabels: RevisedFirstLabel[];
  /** Submitted retests given before first labels were kept, compared with their first label as it is now. */
  firstLabelsNotKept: number;
}

/** The same label (the canonical form labelOfAnnotation gives). */
const sameLabel = (a: CaseLabel, b: CaseLabel) =>
  a.sufficiency === "sufficient"
    ? b.sufficiency === "sufficient" && a.icd10 === b.icd10 && a.earliestSection === b.earliestSection
    : b.sufficiency === "insufficient" &&
      a.missingInfo.join(";") === b.missingInfo.join(";") &&
      (a.missingInfoOther ?? null) === (b.missingInfoOther ?? null);

/**
 * The first label a retest is compared with: the one kept when the retest entered the queue. A retest given before
 * labels were kept has none; it falls back on the first annotation as it is now (when submitted).
 */
function firstLabelOf(
  item: { firstLabel: CaseLabel | null; firstAnnotationId: number | null },
  firsts: Map<number, typeof annotations.$inferSelect>,
): CaseLabel | null {
  if (item.firstLabel) return item.firstLabel;
  const first = item.firstAnnotationId === null ? undefined : firsts.get(item.firstAnnotationId);
  return first && isDone(first.status) ? labelOfAnnotation(first) : null;
}

function studyQualityRows(db: DbOrTx, studyId: number) {
  return db
    .select({
      item: qualityItems,
      username: users.username,
      numSections: visibleCases.numSections,
      externalId: visibleCases.externalId,
    })
    .from(qualityItems)
    .innerJoin(users, eq(users.id, qualityItems.annotatorId))
    .innerJoin(visibleCases, eq(visibleCases.id, qualityItems.caseId))
    .where(eq(qualityItems.studyId, studyId))
    .orderBy(asc(users.username), asc(qualityItems.id))
    .all();
}

/**
 * What the study's quality labels are compared with: the first labels of the retests among `rows` (by annotation id)
 * and the study's calibration references (by id).
 */
function comparedWith(db: DbOrTx, studyId: number, rows: { item: { firstAnnotationId: number | null } }[]) {
  const ids = rows.flatMap((r) => (r.item.firstAnnotationId === null ? [] : [r.item.firstAnnotationId]));
  const firsts = new Map(
    db
      .select()
      .from(annotations)
      .where(inArray(annotations.id, ids))
      .all()
      .map((a) => [a.id, a]),
  );
  const refs = new Map(
    db
      .select()
      .from(calibrationCases)
      .where(eq(calibrationCases.studyId, studyId))
      .all()
      .map((c) => [c.id, c]),
  );
  return { firsts, refs };
}

/** Self-consistency and accuracy of every annotator of the study (docs/rater-quality.md, "The report"). */
export function getRaterQualityReport(db: DbOrTx, studyId: number): RaterQualityReport {
  const settings = getQualitySettings(db, studyId);
  const rows = studyQualityRows(db, studyId);
  const { firsts, refs } = comparedWith(db, studyId, rows);
  const annotators = [...new Set(rows.map((r) => r.username))];
  const pairsOf = (username: string, kind: QualityKind): LabelPair[] =>
    rows.flatMap((r) => {
      if (r.username !== username || r.item.kind !== kind || !isDone(r.item.status)) return [];
      const second = labelOfQuality(r.item);
      if (kind === "retest") {
        // The first label as it was when the retest entered the queue, not as it may have been revised since.
        const first = firstLabelOf(r.item, firsts);
        return first ? [{ first, second, numSections: r.numSections }] : [];
      }
      const ref = refs.get(r.item.calibrationId!);
      return ref ? [{ first: ref.reference, second, numSections: r.numSections }] : [];
    });
  const items: RaterQualityReport["items"] = [];
  for (const a of annotators)
    for (const kind of ["retest", "calibration", "training"] as const) {
      const mine = rows.filter((r) => r.username === a && r.item.kind === kind);
      if (mine.length)
        items.push({
          annotator: a,
          kind,
          given: mine.length,
          submitted: mine.filter((r) => isDone(r.item.status)).length,
        });
    }
  const study = db
    .select({ name: visibleStudies.name })
    .from(visibleStudies)
    .where(eq(visibleStudies.id, studyId))
    .get();
  const revisedFirstLabels: RevisedFirstLabel[] = rows.flatMap((r) => {
    const now = r.item.firstAnnotationId === null ? undefined : firsts.get(r.item.firstAnnotationId);
    if (r.item.kind !== "retest" || !r.item.firstLabel || !now || sameLabel(r.item.firstLabel, labelOfAnnotation(now)))
      return [];
    return [
      {
        annotator: r.username,
        caseStudy: study?.name ?? "",
        case: r.externalId,
        asCompared: r.item.firstLabel,
        now: labelOfAnnotation(now),
        retestSubmitted: isDone(r.item.status),
      },
    ];
  });
  return {
    settings,
    revisedFirstLabels,
    firstLabelsNotKept: rows.filter((r) => r.item.kind === "retest" && isDone(r.item.status) && !r.item.firstLabel)
      .length,
    retest: retestReport(annotators.map((a) => ({ annotator: a, pairs: pairsOf(a, "retest") }))),
    calibration: annotators
      .map((a) => calibrationAccuracy(a, pairsOf(a, "calibration"), settings?.accuracyThreshold ?? null))
      .filter((c) => c.n > 0 || rows.some((r) => r.username === c.annotator && r.item.kind === "calibration")),
    items,
  };
}

const labelCells = (l: CaseLabel | null): string[] =>
  !l
    ? ["", "", "", ""]
    : l.sufficiency === "sufficient"
      ? [l.sufficiency, l.icd10, String(l.earliestSection), ""]
      : [l.sufficiency, "", "", l.missingInfo.join(";")];

/**
 * rater-quality.csv: every submitted retest, calibration and training label of the study, each marked with its kind,
 * beside the label it is compared with (the first label, or the reference). The reference-format files leave them out.
 */
export function raterQualityCsv(db: DbOrTx, studyId: number): string {
  const rows = studyQualityRows(db, studyId).filter((r) => isDone(r.item.status));
  const caseRows = new Map(
    db
      .select({ id: visibleCases.id, externalId: visibleCases.externalId, study: visibleStudies.name })
      .from(visibleCases)
      .innerJoin(visibleStudies, eq(visibleStudies.id, visibleCases.studyId))
      .where(
        inArray(
          visibleCases.id,
          rows.map((r) => r.item.caseId),
        ),
      )
      .all()
      .map((c) => [c.id, c]),
  );
  const { firsts, refs } = comparedWith(db, studyId, rows);
  const out: string[][] = [
    [
      "annotator",
      "kind",
      "case_study",
      "case",
      "compared_with",
      "compared_sufficiency",
      "compared_icd10",
      "compared_earliest_section",
      "compared_missing_info",
      "sufficiency",
      "icd10",
      "earliest_section",
      "missing_info",
      "submitted_at",
      "first_label_revised",
      "first_label_now_sufficiency",
      "first_label_now_icd10",
      "first_label_now_earliest_section",
      "first_label_now_missing_info",
    ],
  ];
  for (const r of rows) {
    const c = caseRows.get(r.item.caseId)!;
    const retest = r.item.kind === "retest";
    // A retest is compared with its first label as it was when the retest entered the queue; the label as it is now
    // sits at the end of the row, with whether it was revised since ("not kept": given before labels were kept).
    const compared = retest ? firstLabelOf(r.item, firsts) : (refs.get(r.item.calibrationId!)?.reference ?? null);
    const nowRow = retest && r.item.firstAnnotationId !== null ? firsts.get(r.item.firstAnnotationId) : undefined;
    const now = nowRow && isDone(nowRow.status) ? labelOfAnnotation(nowRow) : null;
    const revised = !retest
      ? ""
      : !r.item.firstLabel
        ? "not kept"
        : now && !sameLabel(r.item.firstLabel, now)
          ? "yes"
          : "no";
    out.push([
      r.username,
      r.item.kind,
      c.study,
      c.externalId,
      r.item.kind === "retest" ? "first_label" : "reference",
      ...labelCells(compared),
      ...labelCells(labelOfQuality(r.item)),
      new Date(r.item.submittedAt ?? 0).toISOString(),
      revised,
      ...(retest ? labelCells(now) : ["", "", "", ""]),
    ]);
  }
  return formatCsv(out);
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1) + ".";
}
