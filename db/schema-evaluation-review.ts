/**
 * Clinician review of model failures (docs/evaluation.md, "Clinician review of model steps"): an admin sends the
 * model steps an evaluation's case-list filter picks to a blinded review queue; the psychiatrists the admin names
 * judge each step clinically defensible or not, with a reason. Written by the admin's send (one transaction) and by
 * the reviewers' saves through the work-item engine, never behind an import run, so no `visible_*` view is needed;
 * the trajectories a review names are read through `visible_evaluation_runs`.
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { evaluations, evaluationTrajectories } from "./schema-evaluation";
import { users } from "./schema-users";

/** The case-list filter a review was sent with (docs/evaluation.md, "A case, step by step"). */
export interface EvaluationReviewFilter {
  failure: string;
  model: string;
  strategy: string;
  q: string;
}

export const evaluationReviews = sqliteTable(
  "evaluation_reviews",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    evaluationId: integer("evaluation_id")
      .notNull()
      .references(() => evaluations.id),
    name: text("name").notNull(),
    filter: text("filter", { mode: "json" }).$type<EvaluationReviewFilter>().notNull(),
    /** 1, or 2 for a second reviewer per item (agreement). */
    reviewersPerItem: integer("reviewers_per_item").notNull(),
    createdAt: integer("created_at").notNull(),
    createdBy: text("created_by"),
  },
  (t) => [uniqueIndex("evaluation_reviews_name_idx").on(t.evaluationId, t.name)],
);

/** One model step under review: a trajectory's first diagnosis, else its last step. */
export const evaluationReviewItems = sqliteTable(
  "evaluation_review_items",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    reviewId: integer("review_id")
      .notNull()
      .references(() => evaluationReviews.id),
    trajectoryId: integer("trajectory_id")
      .notNull()
      .references(() => evaluationTrajectories.id),
    stepIndex: integer("step_index").notNull(),
    /** The trajectory's failures when it was sent (the case list's filters), for the metrics' link back. */
    failures: text("failures", { mode: "json" }).$type<string[]>().notNull(),
  },
  (t) => [uniqueIndex("evaluation_review_items_traj_idx").on(t.reviewId, t.trajectoryId)],
);

/**
 * One reviewer's work on one item: created when the review is sent (not started, version 0), saved through the
 * work-item engine. `itemKey` is the item's only address on the reviewer's pages (opaque, per reviewer); `position`
 * the reviewer's own shuffled order.
 */
export const evaluationReviewLabels = sqliteTable(
  "evaluation_review_labels",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    itemId: integer("item_id")
      .notNull()
      .references(() => evaluationReviewItems.id),
    reviewerId: text("reviewer_id")
      .notNull()
      .references(() => users.id),
    itemKey: text("item_key").notNull().unique(),
    position: integer("position").notNull(),
    status: text("status", { enum: ["not_started", "draft", "submitted"] })
      .notNull()
      .default("not_started"),
    /** "yes" (clinically defensible) or "no"; null until chosen. */
    defensible: text("defensible", { enum: ["yes", "no"] }),
    reason: text("reason").notNull().default(""),
    version: integer("version").notNull().default(0),
    updatedAt: integer("updated_at"),
    submittedAt: integer("submitted_at"),
    /**
     * When the reviewer was removed from the review: the label is kept (its figures count) but the reviewer no longer
     * reaches it (docs/evaluation.md, "Changing the reviewers"); null while they review.
     */
    removedAt: integer("removed_at"),
  },
  (t) => [
    uniqueIndex("evaluation_review_labels_item_idx").on(t.itemId, t.reviewerId),
    index("evaluation_review_labels_reviewer_idx").on(t.reviewerId, t.position),
  ],
);
