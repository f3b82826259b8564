/** Judge validation: the raters of a set, their assignment when rating starts, and opening or closing the rating. */
import { and, asc, count, eq } from "drizzle-orm";
import { judgeItems, judgeRatings, judgeSets, userRoles, users } from "../../db/schema";
import { visibleJudgeSets } from "../../db/schema-visible";
import { planRaterAssignments, RATERS_PER_RESPONSE } from "./domain/rater-assignment";
import type { Db } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { ServiceError } from "../platform/service-error";

export interface RaterLoad {
  id: string;
  username: string;
  displayName: string;
  active: boolean;
  assigned: number;
  draft: number;
  submitted: number;
}

/** Every user with the rater role and their work in this set. */
export function listSetRaters(db: Db, setId: number): RaterLoad[] {
  const people = db
    .select({ id: users.id, username: users.username, displayName: users.displayName, active: users.active })
    .from(users)
    .innerJoin(userRoles, and(eq(userRoles.userId, users.id), eq(userRoles.role, "rater")))
    .orderBy(asc(users.username))
    .all();
  const rows = db
    .select({ raterId: judgeRatings.raterId, status: judgeRatings.status, n: count() })
    .from(judgeRatings)
    .innerJoin(judgeItems, eq(judgeItems.id, judgeRatings.itemId))
    .where(eq(judgeItems.setId, setId))
    .groupBy(judgeRatings.raterId, judgeRatings.status)
    .all();
  return people.map((p) => {
    const mine = rows.filter((r) => r.raterId === p.id);
    const of = (s: string) => mine.find((r) => r.status === s)?.n ?? 0;
    return {
      ...p,
      active: Boolean(p.active),
      assigned: mine.reduce((s, r) => s + r.n, 0),
      draft: of("draft"),
      submitted: of("submitted"),
    };
  });
}

/**
 * Starts rating: every sampled response goes to three of the chosen raters (planRaterAssignments: distinct people,
 * balanced load, reproducible with `seed`) and the set moves to `rating`, which freezes the sample. All or nothing;
 * each assignment is audited.
 */
export function startRating(
  db: Db,
  input: { setId: number; raterIds: string[]; seed: number; actorId: string | null; now?: number },
): { assignments: number; items: number; load: Record<string, number> } {
  const now = input.now ?? Date.now();
  return db.transaction(
    (tx) => {
      const set = tx.select().from(visibleJudgeSets).where(eq(visibleJudgeSets.id, input.setId)).get();
      if (!set) throw new ServiceError("No such validation set.", "set", 404);
      if (set.status !== "drafting") throw new ServiceError("Rating has already started on this set.", "raters", 409);
      const items = tx
        .select({ id: judgeItems.id })
        .from(judgeItems)
        .where(eq(judgeItems.setId, set.id))
        .orderBy(asc(judgeItems.position))
        .all();
      if (items.length === 0) throw new ServiceError("Draw the sample before assigning raters.", "raters", 409);
      const eligible = new Set(
        tx
          .select({ id: users.id })
          .from(users)
          .innerJoin(userRoles, and(eq(userRoles.userId, users.id), eq(userRoles.role, "rater")))
          .where(eq(users.active, true))
          .all()
          .map((u) => u.id),
      );
      if (input.raterIds.some((id) => !eligible.has(id)))
        throw new ServiceError("Only active users with the rater role can rate responses.", "raters");
      const plan = planRaterAssignments({
        itemIds: items.map((i) => i.id),
        raterIds: input.raterIds,
        seed: input.seed,
      });
      if (!plan.ok) throw new ServiceError(plan.error.charAt(0).toUpperCase() + plan.error.slice(1), "raters");
      for (const a of plan.assignments) {
        const id = tx
          .insert(judgeRatings)
          .values({
            itemId: a.itemId,
            raterId: a.raterId,
            status: "assigned",
            version: 0,
            assignedAt: now,
            assignedBy: input.actorId,
          })
          .returning({ id: judgeRatings.id })
          .get().id;
        recordEvent(tx, {
          actorId: input.actorId,
          entity: "judge_rating",
          entityId: id,
          action: "assign",
          changes: { set: set.id, item: a.itemId, rater: [null, a.raterId], seed: input.seed },
          at: now,
        });
      }
      tx.update(judgeSets).set({ status: "rating" }).where(eq(judgeSets.id, set.id)).run();
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "judge_set",
        entityId: set.id,
        action: "start_rating",
        changes: { status: ["drafting", "rating"], raters: input.raterIds.length, perResponse: RATERS_PER_RESPONSE },
        at: now,
      });
      return { assignments: plan.assignments.length, items: items.length, load: plan.load };
    },
    { behavior: "immediate" },
  );
}

/** Closes rating (labels become read-only) or reopens it. */
export function setRatingOpen(db: Db, input: { setId: number; open: boolean; actorId: string | null; now?: number }) {
  const now = input.now ?? Date.now();
  db.transaction(
    (tx) => {
      const set = tx.select().from(visibleJudgeSets).where(eq(visibleJudgeSets.id, input.setId)).get();
      if (!set) throw new ServiceError("No such validation set.", "set", 404);
      const from = input.open ? "closed" : "rating";
      const to = input.open ? "rating" : "closed";
      if (set.status !== from)
        throw new ServiceError(
          input.open ? "Only a closed set can be reopened." : "Only a set that is being rated can be closed.",
          "status",
          409,
        );
      tx.update(judgeSets).set({ status: to }).where(eq(judgeSets.id, set.id)).run();
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "judge_set",
        entityId: set.id,
        action: input.open ? "reopen" : "close",
        changes: { status: [from, to] },
        at: now,
      });
    },
    { behavior: "immediate" },
  );
}
