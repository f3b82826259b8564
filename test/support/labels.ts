/**
 * Integration-test helpers for the annotation → outcome → adjudication chain: annotation values, a study whose cases
 * are all assigned to the same two annotators, and both annotations of a case submitted through the service.
 */
import { and, asc, eq } from "drizzle-orm";
import { copyFileSync, rmSync } from "node:fs";
import { annotations, assignments, caseOutcomes, cases, events } from "../../db/schema";
import { openDatabase, setDb, type Db } from "../../app/platform/db.server";
import { EMPTY_VALUES, submitAnnotation, type AnnotationValues } from "../../app/annotation/annotations.server";
import { autoAssign } from "../../app/annotation/assignments.server";
import { importCases, requireStudyByName } from "../../app/annotation/studies.server";
import { smallStudyJsonl } from "./fixtures";
import { tempDbPath } from "./server";

/**
 * A copy of an existing test database (e.g. one with users already created, whose password hashing is slow), as a
 * fresh process-wide database like freshDb().
 */
export function cloneDb(source: Db): { db: Db; path: string; cleanup: () => void } {
  source.$client.pragma("wal_checkpoint(TRUNCATE)");
  const { dir, dbPath } = tempDbPath();
  copyFileSync(source.$client.name, dbPath);
  const db = openDatabase(dbPath);
  setDb(db);
  return {
    db,
    path: dbPath,
    cleanup: () => {
      setDb(undefined);
      db.$client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function sufficient(icd10: string, earliestSection: number, notes = ""): AnnotationValues {
  return { ...EMPTY_VALUES, sufficiency: "sufficient", icd10, earliestSection, notes };
}

export function insufficient(missingInfo: string[], missingOther = "", notes = ""): AnnotationValues {
  return { ...EMPTY_VALUES, sufficiency: "insufficient", missingInfo, missingOther, notes };
}

/** Imports `n` cases (smallStudyJsonl) as study `name` and assigns every one of them to both annotators. */
export function studyForPair(db: Db, input: { name: string; cases: number; annotatorIds: [string, string] }) {
  const r = importCases(db, {
    studyName: input.name,
    bytes: smallStudyJsonl(input.cases),
    filename: `${input.name}.jsonl`,
    actorId: null,
  });
  if (!r.ok) throw new Error(`import failed: ${JSON.stringify(r.parse.errors)}`);
  const study = requireStudyByName(db, input.name);
  autoAssign(db, { studyId: study.id, annotatorIds: input.annotatorIds, seed: 1, actorId: null });
  const caseIds = db
    .select({ id: cases.id })
    .from(cases)
    .where(eq(cases.studyId, study.id))
    .orderBy(asc(cases.position))
    .all()
    .map((c) => c.id);
  return { study, caseIds };
}

/** Submits both annotations of a case (first `a`, then `b`); throws if either is refused. */
export function submitPair(
  db: Db,
  caseId: number,
  a: { userId: string; values: AnnotationValues },
  b: { userId: string; values: AnnotationValues },
) {
  const ra = submitAnnotation(db, { userId: a.userId, caseId, values: a.values, version: 0 });
  if (!ra.ok) throw new Error(`first submission refused: ${JSON.stringify(ra)}`);
  const rb = submitAnnotation(db, { userId: b.userId, caseId, values: b.values, version: 0 });
  if (!rb.ok) throw new Error(`second submission refused: ${JSON.stringify(rb)}`);
  return { first: ra, second: rb };
}

export function outcomeOf(db: Db, caseId: number) {
  return db.select().from(caseOutcomes).where(eq(caseOutcomes.caseId, caseId)).get();
}

export function annotationsOf(db: Db, caseId: number) {
  return db.select().from(annotations).where(eq(annotations.caseId, caseId)).orderBy(asc(annotations.id)).all();
}

export function eventsOf(db: Db, caseId: number, action?: string) {
  return db
    .select()
    .from(events)
    .where(action ? and(eq(events.caseId, caseId), eq(events.action, action)) : eq(events.caseId, caseId))
    .orderBy(asc(events.id))
    .all()
    .map((e) => ({ ...e, changes: e.changes as Record<string, unknown> }));
}

export function assignmentsOf(db: Db, caseId: number) {
  return db.select().from(assignments).where(eq(assignments.caseId, caseId)).orderBy(asc(assignments.id)).all();
}

/** Everything a refused write must leave unchanged for a case, as one comparable value. */
export function caseSnapshot(db: Db, caseId: number) {
  return {
    annotations: annotationsOf(db, caseId),
    outcome: outcomeOf(db, caseId) ?? null,
    events: eventsOf(db, caseId).length,
  };
}
