import { and, asc, eq, inArray } from "drizzle-orm";
import { annotations, cases, users, workTime } from "../../db/schema";
import type { Db } from "../platform/db.server";
import { summariseTimeOnTask, type TimeOnTask } from "./domain/time-on-task";

/**
 * Time on task of a study's submitted annotations (docs/statistics.md, "Time on task"): the active time the
 * work-item engine recorded for each (case, annotator), as medians per annotator and per case.
 */
export function getTimeOnTask(db: Db, studyId: number): TimeOnTask {
  const rows = db
    .select({
      annotator: users.username,
      caseId: cases.id,
      externalId: cases.externalId,
      activeMs: workTime.activeMs,
    })
    .from(annotations)
    .innerJoin(cases, eq(cases.id, annotations.caseId))
    .innerJoin(users, eq(users.id, annotations.annotatorId))
    .innerJoin(
      workTime,
      and(
        eq(workTime.entity, "annotation"),
        eq(workTime.itemId, annotations.caseId),
        eq(workTime.userId, annotations.annotatorId),
      ),
    )
    .where(and(eq(cases.studyId, studyId), inArray(annotations.status, ["submitted", "locked"])))
    .orderBy(asc(cases.id))
    .all();
  return summariseTimeOnTask(rows);
}
