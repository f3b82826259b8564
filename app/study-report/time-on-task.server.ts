import { and, asc, eq, inArray } from "drizzle-orm";
import { adjudications, annotations, users, workTime } from "../../db/schema";
import { visibleCases } from "../../db/schema-visible";
import type { Db } from "../platform/db.server";
import { ADJUDICATION_TIME } from "../adjudication/public.server";
import { summariseAdjudicationTime, summariseTimeOnTask, type TimeOnTask } from "./domain/time-on-task";

/**
 * Time on task of a study (docs/statistics.md, "Time on task"): the active time the work-item engine recorded for
 * each submitted annotation (case, annotator), as medians per annotator and per case; and for each decided case of an
 * adjudicator (drafts, independent judgement and decision together), as medians per adjudicator.
 */
export function getTimeOnTask(db: Db, studyId: number): TimeOnTask {
  const rows = db
    .select({
      annotator: users.username,
      caseId: visibleCases.id,
      externalId: visibleCases.externalId,
      activeMs: workTime.activeMs,
    })
    .from(annotations)
    .innerJoin(visibleCases, eq(visibleCases.id, annotations.caseId))
    .innerJoin(users, eq(users.id, annotations.annotatorId))
    .innerJoin(
      workTime,
      and(
        eq(workTime.entity, "annotation"),
        eq(workTime.itemId, annotations.caseId),
        eq(workTime.userId, annotations.annotatorId),
      ),
    )
    .where(and(eq(visibleCases.studyId, studyId), inArray(annotations.status, ["submitted", "locked"])))
    .orderBy(asc(visibleCases.id))
    .all();
  return { ...summariseTimeOnTask(rows), adjudication: getAdjudicationTime(db, studyId) };
}

/**
 * One entry per (case, adjudicator) with a decision — the reference label now, or one an admin has since reopened:
 * the work was done. A judgement left behind when another adjudicator decided first (superseded, or still in
 * progress) is not a decision and does not count, like an annotation never submitted.
 */
function getAdjudicationTime(db: Db, studyId: number) {
  const timed = db
    .select({
      adjudicator: users.username,
      userId: workTime.userId,
      caseId: visibleCases.id,
      activeMs: workTime.activeMs,
    })
    .from(workTime)
    .innerJoin(visibleCases, eq(visibleCases.id, workTime.itemId))
    .innerJoin(users, eq(users.id, workTime.userId))
    .where(and(eq(workTime.entity, ADJUDICATION_TIME), eq(visibleCases.studyId, studyId)))
    .orderBy(asc(visibleCases.id), asc(users.username))
    .all();
  const decided = new Set(
    db
      .select({ caseId: adjudications.caseId, userId: adjudications.adjudicatorId })
      .from(adjudications)
      .innerJoin(visibleCases, eq(visibleCases.id, adjudications.caseId))
      .where(and(eq(visibleCases.studyId, studyId), inArray(adjudications.status, ["decided", "reopened"])))
      .all()
      .map((d) => `${d.caseId}:${d.userId}`),
  );
  return summariseAdjudicationTime(timed.filter((t) => decided.has(`${t.caseId}:${t.userId}`)));
}
