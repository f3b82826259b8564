import { and, asc, count, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { annotations, assignments, userRoles, users } from "../../db/schema";
import { visibleCases } from "../../db/schema-visible";
import { ASSIGNMENT_STATES, planAssignments, type AssignmentState } from "./domain/assignment";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { ServiceError } from "../platform/service-error";
import { finishWindow, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import { annotatorCounts } from "./study-counts.server";

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
  // Kept by the database, one row per annotator (docs/architecture.md, "Pages are windows").
  const counts = annotatorCounts(db, studyId);
  return people.map((p) => {
    const c = counts.get(p.id);
    return {
      ...p,
      active: Boolean(p.active),
      assigned: c?.assigned ?? 0,
      started: c?.started ?? 0,
      submitted: c?.done ?? 0,
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
  state: AssignmentState;
}

export const ASSIGNMENTS_WINDOW = {
  prefix: "a_",
  sorts: ["position"],
  defaultSort: "position",
  filters: ["annotator", "state"],
} as const satisfies WindowSpec<string, string>;

const STATE_SQL: Record<AssignmentState, SQL> = {
  unstarted: sql`n.id IS NULL`,
  draft: sql`n.status = 'draft'`,
  done: sql`n.status IN ('submitted', 'locked')`,
};

/** The assignments a filter names: the study's, of one annotator or all, in one state or any. */
function assignmentFilter(studyId: number, f: { annotator: string; state: string }) {
  return and(
    eq(assignments.studyId, studyId),
    f.annotator ? eq(assignments.annotatorId, f.annotator) : undefined,
    f.state === "unstarted"
      ? isNull(annotations.id)
      : f.state === "draft"
        ? eq(annotations.status, "draft")
        : f.state === "done"
          ? inArray(annotations.status, ["submitted", "locked"])
          : undefined,
  );
}

/** How many assignments a filter names, from the counts the database keeps per annotator. */
function countAssignments(db: DbOrTx, studyId: number, f: { annotator: string; state: string }): number {
  let n = 0;
  for (const [id, c] of annotatorCounts(db, studyId)) {
    if (f.annotator && id !== f.annotator) continue;
    n +=
      f.state === "unstarted"
        ? c.assigned - c.started
        : f.state === "draft"
          ? c.started - c.done
          : f.state === "done"
            ? c.done
            : c.assigned;
  }
  return n;
}

/**
 * One window of the study's assignments (docs/architecture.md, "Pages are windows"), in case order, filtered by
 * annotator and state; the unstarted ones are those that can be moved to someone else.
 */
export function assignmentsWindow(
  db: Db,
  studyId: number,
  params: URLSearchParams,
): ListWindow<AssignmentRow, "position", "annotator" | "state"> {
  const w = readWindow(params, ASSIGNMENTS_WINDOW, 3);
  const f = {
    annotator: w.filters.annotator,
    state: (ASSIGNMENT_STATES as readonly string[]).includes(w.filters.state) ? w.filters.state : "",
  };
  w.filters.state = f.state;
  // The study's cases in order (cases_study_pos_idx), each tried against its assignments
  // (assignments_case_annotator_idx): CROSS JOIN keeps that order of the loops, so a window reads its rows only.
  const k = keyset(w, [sql`c.position`, sql`c.id`, sql`a.annotator_id`]);
  const rows = db.all<{
    assignmentId: number;
    caseId: number;
    position: number;
    externalId: string;
    annotatorId: string;
    annotator: string;
    annotatorActive: number;
    status: string | null;
  }>(sql`SELECT a.id AS assignmentId, c.id AS caseId, c.position AS position, c.external_id AS externalId,
      u.id AS annotatorId, u.username AS annotator, u.active AS annotatorActive, n.status AS status
    FROM visible_cases c CROSS JOIN assignments a ON a.case_id = c.id
      JOIN users u ON u.id = a.annotator_id LEFT JOIN annotations n ON n.assignment_id = a.id
    WHERE c.study_id = ${studyId}
      AND ${f.annotator ? sql`a.annotator_id = ${f.annotator}` : sql`1`}
      AND ${STATE_SQL[f.state as AssignmentState] ?? sql`1`}
      AND ${k.where}
    ORDER BY ${sql.join(k.orderBy, sql`, `)} LIMIT ${k.limit}`);
  const window = finishWindow(w, rows, countAssignments(db, studyId, f), (r) => [r.position, r.caseId, r.annotatorId]);
  return {
    ...window,
    rows: window.rows.map(({ status, position: _position, ...r }) => ({
      ...r,
      annotatorActive: Boolean(r.annotatorActive),
      state: status === null ? "unstarted" : status === "draft" ? "draft" : "done",
    })),
  };
}

/**
 * What "move every unstarted assignment of `from` in this study to `to`" would do: how many move, and how many stay
 * because `to` is already on their case (a case goes to two different people).
 */
export function bulkReassignPlan(db: DbOrTx, input: { studyId: number; from: string; to: string }) {
  const unstarted = countAssignments(db, input.studyId, { annotator: input.from, state: "unstarted" });
  const other = alias(assignments, "other");
  const blocked = db
    .select({ n: count() })
    .from(assignments)
    .leftJoin(annotations, eq(annotations.assignmentId, assignments.id))
    .innerJoin(other, and(eq(other.caseId, assignments.caseId), eq(other.annotatorId, input.to)))
    .where(assignmentFilter(input.studyId, { annotator: input.from, state: "unstarted" }))
    .get()!.n;
  return { move: unstarted - blocked, blocked };
}

/**
 * Moves every unstarted assignment of one annotator in the study to another (a bulk action on a filter, never on
 * the rows a page showed: docs/architecture.md, "Pages are windows"). The admin confirmed `expected` moves; the
 * plan is read again in the write's transaction, and a different count refuses (the study changed meanwhile).
 * Each moved assignment is audited like a single reassignment.
 */
export function bulkReassign(
  db: Db,
  input: { studyId: number; from: string; to: string; expected: number; actorId: string },
): { moved: number; blocked: number } {
  return db.transaction(
    (tx) => {
      if (input.from === input.to) throw new ServiceError("Choose another annotator to move the work to.", "to");
      requireActiveAnnotator(tx, input.to);
      const plan = bulkReassignPlan(tx, input);
      if (plan.move !== input.expected)
        throw new ServiceError(
          `The filter now names ${plan.move} assignment(s) to move, not ${input.expected}: the study changed meanwhile. Check the count and confirm again.`,
        );
      const other = alias(assignments, "other");
      const moving = tx
        .select({ id: assignments.id, caseId: assignments.caseId })
        .from(assignments)
        .leftJoin(annotations, eq(annotations.assignmentId, assignments.id))
        .leftJoin(other, and(eq(other.caseId, assignments.caseId), eq(other.annotatorId, input.to)))
        .where(and(assignmentFilter(input.studyId, { annotator: input.from, state: "unstarted" }), isNull(other.id)))
        .all();
      const now = Date.now();
      for (const a of moving) {
        tx.update(assignments)
          .set({ annotatorId: input.to, assignedAt: now, assignedBy: input.actorId })
          .where(eq(assignments.id, a.id))
          .run();
        recordEvent(tx, {
          actorId: input.actorId,
          entity: "assignment",
          entityId: a.id,
          studyId: input.studyId,
          caseId: a.caseId,
          action: "reassign",
          changes: { annotator: [input.from, input.to] },
          at: now,
        });
      }
      return { moved: moving.length, blocked: plan.blocked };
    },
    { behavior: "immediate" },
  );
}

/** The user, if an active annotator; else the form's "to" field is refused. */
function requireActiveAnnotator(tx: DbOrTx, userId: string): void {
  const target = tx
    .select({ id: users.id, active: users.active })
    .from(users)
    .innerJoin(userRoles, and(eq(userRoles.userId, users.id), eq(userRoles.role, "annotator")))
    .where(eq(users.id, userId))
    .get();
  if (!target || !target.active) throw new ServiceError("Choose an active annotator.", "to");
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
    requireActiveAnnotator(tx, input.toAnnotatorId);
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
