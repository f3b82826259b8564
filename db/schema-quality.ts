/**
 * Rater quality of a Safe-Psych study (docs/rater-quality.md): its settings, the calibration set (known-answer cases
 * with a reference label and its rationale), and the quality items put in annotators' queues — test–retest repeats of
 * their own submitted cases, calibration cases and the training round. Quality items keep their own labels here: they
 * never enter `annotations`, so gold, adjudication and the inter-rater statistics never read them.
 */
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { CaseLabel } from "./vocabulary";

/**
 * The opaque key an annotator's page is addressed by in a study with rater quality switched on: the same form for an
 * ordinary assignment and for a quality item ("k" + 12 hex digits), so a URL tells nothing.
 */
export const newItemKey = (): string => `k${randomBytes(6).toString("hex")}`;

/** One row per study that configured rater quality; a study without a row has none of it. */
export const studyQualitySettings = sqliteTable("study_quality_settings", {
  studyId: integer("study_id").primaryKey(),
  /** Share of each annotator's assigned cases re-presented once (0: no test–retest). */
  retestFraction: real("retest_fraction").notNull().default(0),
  /** Wash-out: other cases of the study the annotator has submitted since the first label… */
  washoutCases: integer("washout_cases").notNull().default(0),
  /** …and whole days since it. */
  washoutDays: integer("washout_days").notNull().default(0),
  /** Seed of the retest sample, the calibration draw and the places in the queue. */
  seed: integer("seed").notNull().default(1),
  /** Calibration cases per ordinary assigned case (0: none). */
  calibrationRate: real("calibration_rate").notNull().default(0),
  /** A training round of the training cases before real work. */
  training: integer("training", { mode: "boolean" }).notNull().default(false),
  /** Accuracy below which the admin's view marks an annotator (null: no mark). */
  accuracyThreshold: real("accuracy_threshold"),
  updatedAt: integer("updated_at").notNull(),
  updatedBy: text("updated_by"),
});

export const CALIBRATION_PURPOSES = ["calibration", "training"] as const;
export type CalibrationPurpose = (typeof CALIBRATION_PURPOSES)[number];

/** A known-answer case of a study's calibration set: a case of another study with its reference label. */
export const calibrationCases = sqliteTable(
  "calibration_cases",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** The study whose queues it goes into. */
    studyId: integer("study_id").notNull(),
    /** The case (of another study) whose text is shown. */
    caseId: integer("case_id").notNull(),
    purpose: text("purpose", { enum: CALIBRATION_PURPOSES }).notNull(),
    reference: text("reference", { mode: "json" }).$type<CaseLabel>().notNull(),
    rationale: text("rationale").notNull().default(""),
    /** "admin" (entered on the page or imported from a file) or "adjudicated" (an earlier study's decision). */
    source: text("source", { enum: ["admin", "adjudicated"] }).notNull(),
    createdAt: integer("created_at").notNull(),
    createdBy: text("created_by"),
  },
  (t) => [uniqueIndex("calibration_cases_study_case_idx").on(t.studyId, t.caseId)],
);

export const QUALITY_KINDS = ["retest", "calibration", "training"] as const;
export type QualityKind = (typeof QUALITY_KINDS)[number];

/** A quality item in one annotator's queue, with that annotator's label of it. */
export const qualityItems = sqliteTable(
  "quality_items",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    itemKey: text("item_key").notNull().unique().$defaultFn(newItemKey),
    studyId: integer("study_id").notNull(),
    annotatorId: text("annotator_id").notNull(),
    caseId: integer("case_id").notNull(),
    kind: text("kind", { enum: QUALITY_KINDS }).notNull(),
    /** Retest: the annotation (first label) it repeats. */
    firstAnnotationId: integer("first_annotation_id"),
    /**
     * Retest: the first label as it stood when the retest entered the queue, the label the report compares with;
     * later revisions of the annotation do not change it (docs/rater-quality.md, "The first label"). Null on items
     * given before it was kept.
     */
    firstLabel: text("first_label", { mode: "json" }).$type<CaseLabel>(),
    /** Retest: when that first label was submitted. */
    firstSubmittedAt: integer("first_submitted_at"),
    /** Calibration and training: the calibration case. */
    calibrationId: integer("calibration_id"),
    /** Place in the annotator's list of the study, on the scale of the cases' positions (docs/rater-quality.md). */
    sortKey: real("sort_key").notNull(),
    /**
     * Retest and calibration: the annotator's ordinary case beside it in their list; a submitted item locks when that
     * case's other annotator has submitted, as the case itself would (docs/rater-quality.md, "Blinding").
     */
    pairedCaseId: integer("paired_case_id"),
    createdAt: integer("created_at").notNull(),
    status: text("status", { enum: ["draft", "submitted", "locked"] }),
    sufficiency: text("sufficiency"),
    icd10: text("icd10"),
    earliestSection: integer("earliest_section"),
    missingInfo: text("missing_info", { mode: "json" }).$type<string[]>().notNull().default([]),
    missingOther: text("missing_other").notNull().default(""),
    notes: text("notes").notNull().default(""),
    version: integer("version").notNull().default(0),
    updatedAt: integer("updated_at"),
    submittedAt: integer("submitted_at"),
    /** When a submitted retest or calibration item locks, as its case would after the grace period (docs/safe-psych.md, "Second chances"). */
    locksAt: integer("locks_at"),
  },
  (t) => [
    // Partial, as annotations_locks_at_idx: only the items still in their grace period.
    index("quality_items_locks_at_idx")
      .on(t.locksAt)
      .where(sql`status = 'submitted' AND locks_at IS NOT NULL`),
    uniqueIndex("quality_items_unique_idx").on(t.studyId, t.annotatorId, t.caseId, t.kind),
    // An annotator's items of a study in queue order, with what the case page counts (docs/architecture.md, "Cheaper pages").
    index("quality_items_queue_idx").on(t.annotatorId, t.studyId, t.sortKey, t.kind, t.status),
    // The items a co-annotator's submission locks.
    index("quality_items_paired_case_idx").on(t.pairedCaseId),
  ],
);
