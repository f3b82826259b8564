/**
 * Preparation projects (docs/preparation.md): source-language notes reviewed for data minimisation before they
 * become a study, kept apart from the annotation studies. Only admins and the reviewers a project names read its
 * notes (docs/security.md, "Source text"). Times are integer milliseconds since the epoch.
 *
 * After the review: a note's final minimised text (`prep_settlements` when two reviewers differ), its translation and
 * back-translation per section with their quality scores (`prep_translations`), the note's quality summary and
 * whether it needs correction (`prep_note_quality`). They hang off `prep_notes` by note and section number.
 */
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
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

/**
 * The settled minimisation of a note two reviewers reviewed differently (docs/preparation.md, "Settling two
 * reviews"): an admin's choice, which then is the note's final review. A note with one submitted review, or two that
 * agree, has no row here.
 */
export const prepSettlements = sqliteTable("prep_settlements", {
  noteId: integer("note_id")
    .primaryKey()
    .references(() => prepNotes.id),
  decisions: text("decisions", { mode: "json" }).$type<Record<string, PrepDecision>>().notNull(),
  missed: text("missed", { mode: "json" }).$type<PrepMissedSpan[]>().notNull(),
  excluded: integer("excluded", { mode: "boolean" }).notNull().default(false),
  exclusionReason: text("exclusion_reason").notNull().default(""),
  settledBy: text("settled_by").references(() => users.id),
  settledAt: integer("settled_at").notNull(),
});

/**
 * One section of a note through translation (docs/preparation.md, "Translation"): the minimised source text that
 * was sent, the English translation, its back-translation into the source language, and the section's quality
 * scores (sacreBLEU-compatible BLEU and chrF of the back-translation against `source_text`; COMET when imported).
 * `corrected_text` is the English text a reviewer corrected in the correction queue; the released text is
 * `corrected_text` when set, else `translation`.
 */
export const prepTranslations = sqliteTable(
  "prep_translations",
  {
    noteId: integer("note_id")
      .notNull()
      .references(() => prepNotes.id),
    /** The section's index in `prep_notes.sections` (0-based), as the proposals number them. */
    section: integer("section").notNull(),
    sourceText: text("source_text").notNull(),
    translation: text("translation"),
    backTranslation: text("back_translation"),
    /** The model that translated the section, as the provider names it. */
    model: text("model").notNull().default(""),
    translatedAt: integer("translated_at"),
    backTranslatedAt: integer("back_translated_at"),
    /** The model that back-translated the section, when the back-translation was made ("" until then). */
    backModel: text("back_model").notNull().default(""),
    /**
     * The last failed call's reason for this section (status and error codes only, never a body: docs/reliability.md,
     * "Model calls"), cleared when the section's step succeeds; `error_count` counts the failed calls of all runs.
     */
    lastError: text("last_error"),
    errorCount: integer("error_count").notNull().default(0),
    bleu: real("bleu"),
    chrf: real("chrf"),
    comet: real("comet"),
    correctedText: text("corrected_text"),
    correctedBy: text("corrected_by").references(() => users.id),
    correctedAt: integer("corrected_at"),
  },
  (t) => [primaryKey({ columns: [t.noteId, t.section] })],
);

/** A test name or score of the source that the back-translation does not keep (docs/preparation.md, "Quality"). */
export interface PrepMismatch {
  section: number;
  test: string;
  /** The score as the source wrote it, or "" when the test's name itself is missing. */
  score: string;
}

/**
 * A note's quality summary (docs/preparation.md, "Quality"): BLEU and chrF over its sections, its mean COMET, the
 * preservation check's mismatches, and whether it goes to the correction queue (below a threshold or a mismatch).
 */
export const prepNoteQuality = sqliteTable(
  "prep_note_quality",
  {
    noteId: integer("note_id")
      .primaryKey()
      .references(() => prepNotes.id),
    bleu: real("bleu"),
    chrf: real("chrf"),
    comet: real("comet"),
    mismatches: text("mismatches", { mode: "json" }).$type<PrepMismatch[]>().notNull().default([]),
    needsCorrection: integer("needs_correction", { mode: "boolean" }).notNull().default(false),
    /** Why the note needs correction, in words ("BLEU 18.2 below 25; MMSE 22 missing"), "" otherwise. */
    reason: text("reason").notNull().default(""),
    computedAt: integer("computed_at").notNull(),
  },
  (t) => [index("prep_note_quality_needs_idx").on(t.needsCorrection)],
);

/**
 * A note's correction in the correction queue (docs/preparation.md, "Correction"): the English text of each section
 * as the project's reviewers edit it, saved through the work-item engine (drafts, versions, audit). One row per note,
 * shared by the project's named reviewers (the note has one corrected text); the page addresses it by `key`, an
 * opaque key made when the note first needs correction (migration trigger on `prep_note_quality`), never by the
 * note's id. A submission writes `prep_translations.corrected_text` in the same transaction.
 */
export const prepCorrections = sqliteTable(
  "prep_corrections",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    noteId: integer("note_id")
      .notNull()
      .references(() => prepNotes.id),
    /** 12 hex digits, random, made by the database when the note enters the queue. */
    key: text("key").notNull(),
    status: text("status", { enum: ["not_started", ...PREP_WORK_STATUSES] })
      .notNull()
      .default("not_started"),
    /** Section index (as text) → the English text as the reviewer wrote it. */
    texts: text("texts", { mode: "json" }).$type<Record<string, string>>().notNull().default({}),
    version: integer("version").notNull().default(0),
    updatedBy: text("updated_by").references(() => users.id),
    updatedAt: integer("updated_at"),
    submittedAt: integer("submitted_at"),
  },
  (t) => [uniqueIndex("prep_corrections_note_idx").on(t.noteId), uniqueIndex("prep_corrections_key_idx").on(t.key)],
);
