/**
 * Preparation projects (docs/preparation.md): source-language notes reviewed for data minimisation before they
 * become a study, kept apart from the annotation studies. Only admins and the reviewers a project names read its
 * notes (docs/security.md, "Source text"). Times are integer milliseconds since the epoch.
 *
 * The translation and its quality checks (a later step) hang off `prep_notes` by note and section number, so they
 * add tables beside these and change none of them.
 */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { users } from "./schema-users";
import type { PrepDecision, PrepDetectorSettings, PrepMissedSpan, PrepProposal, PrepSection } from "./vocabulary";

export const PREP_WORK_STATUSES = ["draft", "submitted"] as const;

export const prepProjects = sqliteTable("prep_projects", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  /** The notes' language as the import named it ("ro", "hu", …): the detectors' family wording follows it. */
  sourceLanguage: text("source_language").notNull(),
  settings: text("settings", { mode: "json" }).$type<PrepDetectorSettings>().notNull(),
  createdAt: integer("created_at").notNull(),
  createdBy: text("created_by").references(() => users.id),
});

/** The reviewers a project names: with the admins, the only people who see its source text. */
export const prepReviewers = sqliteTable(
  "prep_reviewers",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => prepProjects.id),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    addedAt: integer("added_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId] }), index("prep_reviewers_user_idx").on(t.userId)],
);

/** One source note: its sections as imported and the detectors' proposals on them. */
export const prepNotes = sqliteTable(
  "prep_notes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => prepProjects.id),
    externalId: text("external_id").notNull(),
    position: integer("position").notNull(),
    ageGroup: text("age_group").notNull().default(""),
    sex: text("sex").notNull().default(""),
    sections: text("sections", { mode: "json" }).$type<PrepSection[]>().notNull(),
    proposals: text("proposals", { mode: "json" }).$type<PrepProposal[]>().notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("prep_notes_project_external_idx").on(t.projectId, t.externalId),
    index("prep_notes_project_pos_idx").on(t.projectId, t.position),
  ],
);

/** A reviewer's minimisation review of one note, saved through the work-item engine (drafts, versions, audit). */
export const prepReviews = sqliteTable(
  "prep_reviews",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    noteId: integer("note_id")
      .notNull()
      .references(() => prepNotes.id),
    reviewerId: text("reviewer_id")
      .notNull()
      .references(() => users.id),
    status: text("status", { enum: PREP_WORK_STATUSES }).notNull().default("draft"),
    /** Proposal id → decision. */
    decisions: text("decisions", { mode: "json" }).$type<Record<string, PrepDecision>>().notNull().default({}),
    missed: text("missed", { mode: "json" }).$type<PrepMissedSpan[]>().notNull().default([]),
    excluded: integer("excluded", { mode: "boolean" }).notNull().default(false),
    exclusionReason: text("exclusion_reason").notNull().default(""),
    version: integer("version").notNull().default(1),
    updatedAt: integer("updated_at").notNull(),
    submittedAt: integer("submitted_at"),
  },
  (t) => [
    uniqueIndex("prep_reviews_note_reviewer_idx").on(t.noteId, t.reviewerId),
    index("prep_reviews_reviewer_idx").on(t.reviewerId),
  ],
);
