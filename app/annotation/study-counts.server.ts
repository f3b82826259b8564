/**
 * A study's counts as the database keeps them (docs/architecture.md, "Pages are windows"): cases per progress state
 * (`study_progress_counts`) and each annotator's assigned, started and done work (`study_annotator_counts`), both
 * kept by triggers (migration 0016) whatever code writes. One row per state or annotator: no page counts a whole
 * study. The rows of an import still running are in the counts; they are subtracted here, read from the index of
 * the cases by import run (empty but for the minutes an import runs).
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import { cases, importRuns, studyAnnotatorCounts, studyProgressCounts } from "../../db/schema";
import { CASE_STATES, type CaseProgressState } from "./domain/case-progress";
import type { DbOrTx } from "../platform/db.server";

/** The study's visible cases in each progress state. */
export function studyStateCounts(db: DbOrTx, studyId: number): Record<CaseProgressState, number> {
  const out = Object.fromEntries(CASE_STATES.map((s) => [s, 0])) as Record<CaseProgressState, number>;
  for (const r of db
    .select({ state: studyProgressCounts.state, n: studyProgressCounts.n })
    .from(studyProgressCounts)
    .where(eq(studyProgressCounts.studyId, studyId))
    .all())
    out[r.state] += r.n;
  for (const r of db
    .select({ state: cases.progressState, id: cases.id })
    // eslint-disable-next-line concord/visible-rows -- reads hidden rows on purpose: the counters count them, so they are subtracted here
    .from(cases)
    // `+study_id`: read by import run (few rows, none most of the time), never by walking the study.
    .where(
      and(
        inArray(cases.importRun, db.select({ id: importRuns.id }).from(importRuns)),
        sql`+${cases.studyId} = ${studyId}`,
      ),
    )
    .all())
    out[r.state]--;
  return out;
}

/** The study's visible cases, in all. */
export function studyCaseCount(db: DbOrTx, studyId: number): number {
  return Object.values(studyStateCounts(db, studyId)).reduce((a, b) => a + b, 0);
}

export interface AnnotatorCounts {
  assigned: number;
  started: number;
  done: number;
  locked: number;
}

/** Each annotator's work in the study, by annotator id (absent: none). */
export function annotatorCounts(db: DbOrTx, studyId: number): Map<string, AnnotatorCounts> {
  return new Map(
    db
      .select({
        annotatorId: studyAnnotatorCounts.annotatorId,
        assigned: studyAnnotatorCounts.assigned,
        started: studyAnnotatorCounts.started,
        done: studyAnnotatorCounts.done,
        locked: studyAnnotatorCounts.locked,
      })
      .from(studyAnnotatorCounts)
      .where(eq(studyAnnotatorCounts.studyId, studyId))
      .all()
      .map(({ annotatorId, ...c }) => [annotatorId, c]),
  );
}
