/**
 * A study's counts as the database keeps them (docs/architecture.md, "Pages are windows"): cases per progress state
 * (`study_progress_counts`) and each annotator's assigned, started and done work (`study_annotator_counts`), both
 * kept by triggers (migration 0016) whatever code writes. One row per state or annotator: no page counts a whole
 * study. The rows of an import still running are not in the counts: the triggers leave them out and the import adds
 * them in the transaction that makes them visible (migration import_counts_in_bulk, docs/reliability.md, "Bulk
 * imports").
 */
import { eq } from "drizzle-orm";
import { studyAnnotatorCounts, studyProgressCounts } from "../../db/schema";
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
