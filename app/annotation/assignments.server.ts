import { and, asc, count, eq, inArray } from "drizzle-orm";
import { annotations, assignments, userRoles, users } from "../../db/schema";
import { visibleCases } from "../../db/schema-visible";
import { planAssignments } from "./domain/assignment";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { ServiceError } from "../platform/service-error";

export interface AnnotatorLoad {
  id: string;
  username: string;
  displayName: string;
  active: boolean;
  assigned: number;
  started: number;
  submitted: number;
}

/** Every user with the annotator role and their work in this study. */
export function listStudyAnnotators(db: DbOrTx, studyId: number): AnnotatorLoad[] {
  const people = db
    .select({ id: users.id, username: users.username, displayName: users.displayName, active: users.active })
    .from(users)
    .innerJoin(userRoles, and(eq(userRoles.userId, users.id), eq(userRoles.role, "annotator")))
    .orderBy(asc(users.username))
    .all();
  const rows = db
    .select({ annotatorId: assignments.annotatorId, status: annotations.status })
    .from(assignments)
    .innerJoin(visibleCases, eq(visibleCases.id, assignments.caseId))
    .leftJoin(annotations, eq(annotations.assignmentId, assignments.id))
    .where(eq(visibleCases.studyId, studyId))
    .all();
  return people.map((p) => {
    const mine = rows.filter((r) => r.annotatorId === p.id);
    return {
      ...p,
      active: Boolean(p.active),
      assigned: mine.length,
      started: mine.filter((r) => r.status !== null).length,
      submitted: mine.filter((r) => r.status === "submitted" || r.status === "locked").length,
    };
  });
}

/**
 * Gives every case of the study that has fewer than two annotators the missing ones, from `annotatorIds`, load
 * balanced and reproducible with `seed` (app/annotation/domain/assignment.ts). Writes all or nothing; each assignment is audited.
 */
export function autoAssign(
  db: Db,
  input: { studyId: number; annotatorIds: string[]; seed: number; actorId: string | null },
) {
  // Read and write in one IMMEDIATE transaction: a concurrent `concord assign` cannot give a case a third annotator.
  return db.transaction(
    (tx) => {
      const eligible = listStudyAnnotators(tx, input.studyId);
      const unknown = input.annotatorIds.filter((id) => !eligible.some((e) => e.id === id && e.active));
      if (unknown.length)
        throw new ServiceError("Only active users with the annotator role can be assigned cases.", "annotators");
      const studyCases = tx
        .select({ id: visibleCases.id })
        .from(visibleCases)
        .where(eq(visibleCases.studyId, input.studyId))
        .orderBy(asc(visibleCases.position))
        .all();
      const onCase = new Map<number, string[]>();
      const load: Record<string, number> = {};
      for (const e of tx
        .select({ caseId: assignments.caseId, annotatorId: assignments.annotatorId })
        .from(assignments)
        .innerJoin(visibleCases, eq(visibleCases.id, assignments.caseId))
        .where(eq(visibleCases.studyId, input.studyId))
        .all()) {
        onCase.set(e.caseId, [...(onCase.get(e.caseId) ?? []), e.annotatorId]);
        load[e.annotatorId] = (load[e.annotatorId] ?? 0) + 1;
      }
      const plan = planAssignments({
        cases: studyCases.map((c) => ({ caseId: c.id, assigned: onCase.get(c.id) ?? [] })),
        annotators: input.annotatorIds,
        load,
        seed: input.seed,
      });
      if (!plan.ok) throw new ServiceError(plan.error, "annotators");
      const now = Date.now();
      for (const a of plan.assignments) {
        const id = tx
          .insert(assignments)
          .values({ caseId: a.caseId, annotatorId: a.annotatorId, assignedAt: now, assignedBy: input.actorId })
          .returning({ id: assignments.id })
          .get().id;
        recordEvent(tx, {
          actorId: input.actorId,
          entity: "assignment",
          entityId: id,
          studyId: input.studyId,
          caseId: a.caseId,
          action: "assign",
          changes: { annotator: [null, a.annotatorId], seed: input.seed },
          at: now,
        });
      }
      return { created: plan.assignments.length, cases: new Set(plan.assignments.map((a) => a.caseId)).size };
    },
    { behavior: "immediate" },
  );
}

export interface AssignmentRow {
  assignmentId: number;
  caseId: number;
  externalId: string;
  annotatorId: string;
  annotator: string;
  annotatorActive: boolean;
  started: boolean;
}

/** Assignments whose annotation has not started: the ones that can be moved to someone else. */
export function listReassignable(db: Db, studyId: number): AssignmentRow[] {
  return db
    .select({
      assignmentId: assignments.id,
      caseId: visibleCases.id,
      externalId: visibleCases.externalId,
      annotatorId: users.id,
      annotator: users.username,
      annotatorActive: users.active,
      annotationId: annotations.id,
    })
    .from(assignments)
    .innerJoin(visibleCases, eq(visibleCases.id, assignments.caseId))
    .innerJoin(users, eq(users.id, assignments.annotatorId))
    .leftJoin(annotations, eq(annotations.assignmentId, assignments.id))
    .where(eq(visibleCases.studyId, studyId))
    .orderBy(asc(visibleCases.position), asc(users.username))
    .all()
    .filter((r) => r.annotationId === null)
    .map(({ annotationId, ...r }) => ({
      ...r,
      annotatorActive: Boolean(r.annotatorActive),
      started: annotationId !== null,
    }));
}

/** Moves an unstarted assignment to another annotator who is not already on the case. */
export function reassign(
  db: Db,
  input: { assignmentId: number; toAnnotatorId: string; actorId: string; studyId: number },
) {
  db.transaction((tx) => {
    const a = tx
      .select({
        id: assignments.id,
        caseId: assignments.caseId,
        annotatorId: assignments.annotatorId,
        studyId: visibleCases.studyId,
      })
      .from(assignments)
      .innerJoin(visibleCases, eq(visibleCases.id, assignments.caseId))
      .where(eq(assignments.id, input.assignmentId))
      .get();
    if (!a || a.studyId !== input.studyId) throw new ServiceError("No such assignment.", undefined, 404);
    if (tx.select({ id: annotations.id }).from(annotations).where(eq(annotations.assignmentId, a.id)).get())
      throw new ServiceError("This annotation has started; it can no longer be reassigned.");
    const target = tx
      .select({ id: users.id, active: users.active })
      .from(users)
      .innerJoin(userRoles, and(eq(userRoles.userId, users.id), eq(userRoles.role, "annotator")))
      .where(eq(users.id, input.toAnnotatorId))
      .get();
    if (!target || !target.active) throw new ServiceError("Choose an active annotator.", "to");
    const onCase = tx
      .select({ n: count() })
      .from(assignments)
      .where(and(eq(assignments.caseId, a.caseId), inArray(assignments.annotatorId, [input.toAnnotatorId])))
      .get()!.n;
    if (onCase > 0)
      throw new ServiceError(
        "That annotator is already assigned to this case; a case goes to two different people.",
        "to",
      );
    tx.update(assignments)
      .set({ annotatorId: input.toAnnotatorId, assignedAt: Date.now(), assignedBy: input.actorId })
      .where(eq(assignments.id, a.id))
      .run();
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "assignment",
      entityId: a.id,
      studyId: a.studyId,
      caseId: a.caseId,
      action: "reassign",
      changes: { annotator: [a.annotatorId, input.toAnnotatorId] },
    });
  });
}
