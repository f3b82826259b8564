/**
 * Concord's database schema (drizzle, SQLite). camelCase keys over snake_case columns; times are integer
 * milliseconds since the epoch unless named otherwise. Migrations in db/migrations are generated from this file
 * with `npm run db:generate` and applied at start.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

import { ADJUDICATION_MODES, CASE_STATES, ROLES, type CaseLabel } from "./vocabulary";
import { newItemKey } from "./schema-quality";
import { users } from "./schema-users";
export { ADJUDICATION_MODES, ROLES, type AdjudicationMode, type Role } from "./vocabulary";

// The users table is in its own file, which the other schema files import without coming back here.
export { users } from "./schema-users";

export const userRoles = sqliteTable(
  "user_roles",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    role: text("role", { enum: ROLES }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.role] })],
);

/**
 * Sessions (app/accounts/auth.server.ts): the id is the SHA-256 of the browser's token; expires_at is in seconds.
 */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    expiresAt: integer("expires_at").notNull(),
    /** Login time (ms): sessions end SESSION_MAX_HOURS after it, however active. */
    createdAt: integer("created_at").notNull().default(0),
    /** Last request (ms), kept to within a minute; shown on the account page. */
    lastUsedAt: integer("last_used_at"),
    /** The browser it was made in (User-Agent, at most 200 characters) and its address, shown to its owner. */
    userAgent: text("user_agent"),
    ip: text("ip"),
  },
  (t) => [index("sessions_user_idx").on(t.userId)],
);

/**
 * One-time links an admin makes so that a user sets a new password themselves (docs/security.md, "Password
 * resets"): only the SHA-256 of the link's token is kept; a link is used once and expires.
 */
export const passwordResetLinks = sqliteTable(
  "password_reset_links",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    createdBy: text("created_by").references(() => users.id),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [index("password_reset_links_user_idx").on(t.userId)],
);

/**
 * The institution's identity provider's accounts linked to users (docs/security.md, "Single sign-on"): a user is
 * found by the issuer and its stable subject (`sub`), never by a name or address the provider may let people change.
 */
export const userIdentities = sqliteTable(
  "user_identities",
  {
    issuer: text("issuer").notNull(),
    subject: text("subject").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    createdAt: integer("created_at").notNull(),
    lastSignInAt: integer("last_sign_in_at"),
  },
  (t) => [primaryKey({ columns: [t.issuer, t.subject] }), index("user_identities_user_idx").on(t.userId)],
);

/**
 * The second step of a login with a second factor: made when the password was right, ended by a right code or
 * after a few minutes (only the SHA-256 of the browser's token is kept). It grants nothing else.
 */
export const loginChallenges = sqliteTable(
  "login_challenges",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    failures: integer("failures").notNull().default(0),
    /** Where to go after the code, and the session this browser held before (ended by the login). */
    redirectTo: text("redirect_to").notNull().default("/"),
  },
  (t) => [index("login_challenges_user_idx").on(t.userId)],
);

/** Recovery codes of a user's second factor: SHA-256 of each, each used once. */
export const recoveryCodes = sqliteTable(
  "recovery_codes",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    codeHash: text("code_hash").notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [primaryKey({ columns: [t.userId, t.codeHash] })],
);

/** Failed logins, for throttling. Rows older than the throttling window are pruned. */
export const loginFailures = sqliteTable(
  "login_failures",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    username: text("username").notNull(),
    ip: text("ip").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("login_failures_username_idx").on(t.username, t.at), index("login_failures_ip_idx").on(t.ip, t.at)],
);

/** Small key/value facts about this database (e.g. `demo` = "1" when it was seeded as a demo). */
export const appMeta = sqliteTable("app_meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

export const studies = sqliteTable("studies", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  description: text("description").notNull().default(""),
  adjudicationMode: text("adjudication_mode", { enum: ADJUDICATION_MODES }).notNull().default("two_phase"),
  createdAt: integer("created_at").notNull(),
  /**
   * Seed of the per-case "Annotator A/B" order (docs/safe-psych.md, "Annotator A and B"): drawn when the study's
   * first case gets both annotations, then fixed, so an export or a restore can replay every case's order.
   */
  annotatorOrderSeed: integer("annotator_order_seed"),
  /** The bulk import that created this study: hidden while that import runs (see importRuns). */
  importRun: text("import_run"),
});

/**
 * A case (note). Its text lives in case_sections; `contentHash` covers sections and metadata so a re-import can tell
 * an unchanged case from a changed one. `version` grows when an unannotated case's text is replaced.
 */
export const cases = sqliteTable(
  "cases",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    studyId: integer("study_id")
      .notNull()
      .references(() => studies.id),
    externalId: text("external_id").notNull(),
    /** Position in the imported file(s): export order is import order (docs/formats.md#data_gtjson: one record per case in import order). */
    position: integer("position").notNull(),
    ageGroup: text("age_group").notNull().default(""),
    sex: text("sex").notNull().default(""),
    numSections: integer("num_sections").notNull(),
    contentHash: text("content_hash").notNull(),
    version: integer("version").notNull().default(1),
    createdAt: integer("created_at").notNull(),
    /** The bulk import that wrote this case: hidden while that import runs (see importRuns). */
    importRun: text("import_run"),
    /**
     * Where the case stands (app/annotation/domain/case-progress.ts), kept by the database: a new case is
     * unassigned, and triggers on assignments, case_outcomes and reference_labels recompute it whenever one of them
     * changes; triggers on cases keep `study_progress_counts` (migration 0016; docs/architecture.md, "Pages are
     * windows").
     */
    progressState: text("progress_state", { enum: CASE_STATES }).notNull().default("unassigned"),
  },
  (t) => [
    uniqueIndex("cases_study_external_idx").on(t.studyId, t.externalId),
    index("cases_import_run_idx").on(t.importRun),
    index("cases_study_pos_idx").on(t.studyId, t.position),
    index("cases_study_state_pos_idx").on(t.studyId, t.progressState, t.position),
  ],
);

/**
 * How many of a study's cases are in each progress state, kept by triggers (migration 0016) as `cases.progress_state`
 * changes; rows of an import still running are counted too, and their readers subtract them.
 */
export const studyProgressCounts = sqliteTable(
  "study_progress_counts",
  {
    studyId: integer("study_id").notNull(),
    state: text("state", { enum: CASE_STATES }).notNull(),
    n: integer("n").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.studyId, t.state] })],
);

/**
 * Each annotator's assignments in a study, started (an annotation exists), done (submitted or locked) and locked, kept by
 * triggers on assignments and annotations (migration 0016): the study and progress pages read them in one step.
 */
export const studyAnnotatorCounts = sqliteTable(
  "study_annotator_counts",
  {
    studyId: integer("study_id").notNull(),
    annotatorId: text("annotator_id").notNull(),
    assigned: integer("assigned").notNull().default(0),
    started: integer("started").notNull().default(0),
    done: integer("done").notNull().default(0),
    /** Of the done, those locked (the case's second annotation is in). */
    locked: integer("locked").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.studyId, t.annotatorId] }),
    // The case page sums one annotator's rows over their studies.
    index("study_annotator_counts_annotator_idx").on(t.annotatorId),
  ],
);

/**
 * A number per study that changes whenever its time on task may have changed: an annotation submitted, locked or
 * reopened, active time recorded on submitted work or on an adjudicator's decided case, a decision made or reopened,
 * a user renamed, an import finished. Bumped by triggers (docs/statistics.md, "Time on task"); the progress page
 * keeps the study's time on task computed at one version and computes it again only when the version has moved.
 */
export const studySummaryVersions = sqliteTable("study_summary_versions", {
  studyId: integer("study_id").primaryKey(),
  version: integer("version").notNull().default(0),
});

/** Present sections only, numbered 1..T in column order (compacted numbering, docs/safe-psych.md#cases-and-sections). */
export const caseSections = sqliteTable(
  "case_sections",
  {
    caseId: integer("case_id")
      .notNull()
      .references(() => cases.id),
    ord: integer("ord").notNull(),
    kind: text("kind").notNull(),
    content: text("content").notNull(),
  },
  (t) => [primaryKey({ columns: [t.caseId, t.ord] })],
);

/**
 * Labels that came with an imported dataset (the released CSV's label columns) and a source (hospital) diagnosis.
 * Stored apart from everything annotators and adjudicators can load; only admin services and exports read it.
 */
export const referenceLabels = sqliteTable("reference_labels", {
  caseId: integer("case_id")
    .primaryKey()
    .references(() => cases.id),
  diagnosisSufficiency: text("diagnosis_sufficiency"),
  diagnosisSufficiencyAgreement: text("diagnosis_sufficiency_agreement"),
  diagnosis: text("diagnosis"),
  diagnosisAgreement: text("diagnosis_agreement"),
  earliestSufficientSection: text("earliest_sufficient_section"),
  sourceDiagnosis: text("source_diagnosis"),
  /**
   * Concord's own fields when the labels came from a Concord data_gt.json (import-gold): JSON of adjudicated,
   * adjudication reason, missing information and the anonymised annotator labels, so a round trip loses nothing.
   */
  extras: text("extras", { mode: "json" }).$type<object>(),
});

/** Each imported file, once: a re-import of the same bytes is recognised by its hash. */
export const imports = sqliteTable("imports", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  studyId: integer("study_id")
    .notNull()
    .references(() => studies.id),
  filename: text("filename").notNull(),
  sha256: text("sha256").notNull(),
  format: text("format").notNull(),
  created: integer("created").notNull(),
  updated: integer("updated").notNull(),
  unchanged: integer("unchanged").notNull(),
  importedBy: text("imported_by"),
  importedAt: integer("imported_at").notNull(),
});

/** A validated upload waiting for the admin's confirmation (preview → confirm). */
export const pendingImports = sqliteTable("pending_imports", {
  id: text("id").primaryKey(),
  studyName: text("study_name").notNull(),
  filename: text("filename").notNull(),
  content: text("content", { mode: "json" }).$type<unknown>().notNull(),
  createdBy: text("created_by")
    .notNull()
    .references(() => users.id),
  createdAt: integer("created_at").notNull(),
});

/** Audit trail: every change to labels, assignments and decisions, appended in the same transaction as the change. */
export const events = sqliteTable(
  "events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at").notNull(),
    actorId: text("actor_id"),
    studyId: integer("study_id"),
    caseId: integer("case_id"),
    entity: text("entity").notNull(),
    entityId: text("entity_id").notNull(),
    action: text("action").notNull(),
    /** JSON: { field: [old, new] } or a free-form detail object. Never the case's clinical text (labels and annotator notes are what the trail is for). */
    changes: text("changes", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    /** The study's guidelines version in force when a submission or decision was made (docs/guidelines.md). */
    guidelineVersion: integer("guideline_version"),
    /** The bulk import that wrote this event: hidden while that import runs (see importRuns). */
    importRun: text("import_run"),
  },
  (t) => [
    index("events_case_idx").on(t.caseId, t.id),
    index("events_entity_idx").on(t.entity, t.entityId),
    index("events_import_run_idx").on(t.importRun),
  ],
);

/**
 * Bulk imports in progress (docs/reliability.md, "Bulk imports"). A big import writes its rows in many short
 * transactions, each row carrying the run's id in `import_run`; every reader hides rows whose run is still listed
 * here. The last, short transaction deletes the run's row, and the whole import becomes visible at once. A run whose
 * process is gone (killed) is removed with its rows by the next import or the next start.
 */
export const importRuns = sqliteTable("import_runs", {
  id: text("id").primaryKey(),
  /** What is being imported, e.g. "cases:<study name>". One run per target at a time. */
  target: text("target").notNull(),
  pid: integer("pid").notNull(),
  host: text("host").notNull(),
  startedAt: integer("started_at").notNull(),
  /** Updated by every chunk: a run silent for long is taken as abandoned even if its pid was reused. */
  heartbeatAt: integer("heartbeat_at").notNull(),
});

/**
 * Time on task: the active time (focused and typing or clicking, idle gaps excluded) one person has spent on one work
 * item, summed over every save the work-item engine accepted (docs/architecture.md, "The work-item engine"). One row
 * per (entity, item, user), for every workspace alike: `entity` is the engine adapter's audit entity, `item_id` the
 * item's id in its route (the case for an annotation).
 */
export const workTime = sqliteTable(
  "work_time",
  {
    entity: text("entity").notNull(),
    itemId: integer("item_id").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    activeMs: integer("active_ms").notNull().default(0),
    /** Saves that carried active time. */
    saves: integer("saves").notNull().default(0),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.entity, t.itemId, t.userId] })],
);

/** A case given to an annotator. Two per case, two distinct people (docs/safe-psych.md#assignment). */
export const assignments = sqliteTable(
  "assignments",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    caseId: integer("case_id")
      .notNull()
      .references(() => cases.id),
    annotatorId: text("annotator_id")
      .notNull()
      .references(() => users.id),
    assignedAt: integer("assigned_at").notNull(),
    assignedBy: text("assigned_by"),
    /** The opaque key of the annotator's page where the study has rater quality (docs/rater-quality.md, "Blinding"). */
    itemKey: text("item_key").unique().$defaultFn(newItemKey),
    /**
     * The case's study, copied so that an annotator's work in a study is one index range (docs/architecture.md,
     * "Pages are windows"). Written by the database itself: the trigger `assignments_study_id` (migration 0016)
     * fills it from the case on every insert, whatever code inserts.
     */
    studyId: integer("study_id").references(() => studies.id),
    /**
     * The case's position, copied so that an annotator's list in a study is one index range in list order
     * (docs/architecture.md, "Pages are windows"). Written by the database: filled on insert and kept when the case
     * moves (triggers `assignments_position`, `cases_position_assignments`).
     */
    position: integer("position"),
    /**
     * The state of the annotator's work on it: not_started (no annotation yet), or its annotation's status. Kept by
     * triggers on annotations (`annotations_work_state_*`), whatever code writes; the annotator's list filters and
     * its next open case are index ranges over it.
     */
    workState: text("work_state", { enum: ["not_started", "draft", "submitted", "locked"] })
      .notNull()
      .default("not_started"),
  },
  (t) => [
    uniqueIndex("assignments_case_annotator_idx").on(t.caseId, t.annotatorId),
    index("assignments_annotator_idx").on(t.annotatorId),
    index("assignments_study_annotator_idx").on(t.studyId, t.annotatorId),
    // The annotator's list in one study, in list order, all of it or one state of it.
    index("assignments_annotator_study_pos_idx").on(t.annotatorId, t.studyId, t.position, t.caseId),
    index("assignments_annotator_study_state_pos_idx").on(t.annotatorId, t.studyId, t.workState, t.position, t.caseId),
    // Only the open work: the next open case is the first entry of a range, however much is done before it.
    index("assignments_open_pos_idx")
      .on(t.annotatorId, t.studyId, t.position, t.caseId)
      .where(sql`${t.workState} in ('not_started', 'draft')`),
  ],
);

export const ANNOTATION_STATUSES = ["draft", "submitted", "locked"] as const;
export type AnnotationStatus = (typeof ANNOTATION_STATUSES)[number];

/**
 * One annotator's labels for one case; created at the first draft save. `version` is the optimistic-concurrency
 * counter: every write names the version it read, and zero rows updated means the row changed underneath.
 */
export const annotations = sqliteTable(
  "annotations",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    assignmentId: integer("assignment_id")
      .notNull()
      .unique()
      .references(() => assignments.id),
    caseId: integer("case_id")
      .notNull()
      .references(() => cases.id),
    annotatorId: text("annotator_id")
      .notNull()
      .references(() => users.id),
    status: text("status", { enum: ANNOTATION_STATUSES }).notNull().default("draft"),
    sufficiency: text("sufficiency"),
    icd10: text("icd10"),
    earliestSection: integer("earliest_section"),
    /** JSON array of missing-information keys. */
    missingInfo: text("missing_info", { mode: "json" }).$type<string[]>().notNull().default([]),
    missingOther: text("missing_other").notNull().default(""),
    notes: text("notes").notNull().default(""),
    version: integer("version").notNull().default(1),
    updatedAt: integer("updated_at").notNull(),
    submittedAt: integer("submitted_at"),
    /**
     * Set on the submission that completes the case's pair: until then the submitter may undo it, and at this time the
     * pair locks and the dispute rule runs (docs/safe-psych.md, "Second chances"). Null otherwise.
     */
    locksAt: integer("locks_at"),
  },
  (t) => [
    index("annotations_case_idx").on(t.caseId),
    // The pairs whose grace period is over, found by the sweep and by every reader (annotations.server.ts
    // settleDueLocks): partial, so it holds only the submissions still in their grace period, not the study.
    index("annotations_locks_at_idx")
      .on(t.locksAt)
      .where(sql`status = 'submitted' AND locks_at IS NOT NULL`),
    // The case page's progress: an annotator's submitted work, counted from the index (docs/architecture.md, "Cheaper pages").
    index("annotations_annotator_status_idx").on(t.annotatorId, t.status),
  ],
);

export const OUTCOME_STATUSES = ["agreed", "disputed", "adjudicated"] as const;
export type OutcomeStatus = (typeof OUTCOME_STATUSES)[number];

/**
 * What became of a case once both annotations were in (docs/safe-psych.md#disagreement-and-adjudication): agreed (gold derived from the pair), disputed
 * (waiting for adjudication, with its reason), or adjudicated (gold = the adjudicator's final decision).
 * `annotatorOrder` fixes which annotation is shown as "Annotator A" and which as "B": random per case, stable.
 */
export const caseOutcomes = sqliteTable(
  "case_outcomes",
  {
    caseId: integer("case_id")
      .primaryKey()
      .references(() => cases.id),
    studyId: integer("study_id")
      .notNull()
      .references(() => studies.id),
    status: text("status", { enum: OUTCOME_STATUSES }).notNull(),
    disputeReason: text("dispute_reason"),
    sufficiencyAgreement: integer("sufficiency_agreement", { mode: "boolean" }).notNull(),
    diagnosisAgreement: integer("diagnosis_agreement", { mode: "boolean" }).notNull(),
    /** JSON CaseLabel; null while disputed. */
    gold: text("gold", { mode: "json" }).$type<CaseLabel>(),
    /** JSON [annotationId of A, annotationId of B]. */
    annotatorOrder: text("annotator_order", { mode: "json" }).$type<[number, number]>().notNull(),
    disputedAt: integer("disputed_at"),
    version: integer("version").notNull().default(1),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("case_outcomes_study_idx").on(t.studyId, t.status),
    // The adjudicators' queue, oldest dispute first (docs/architecture.md, "Pages are windows").
    index("case_outcomes_status_disputed_idx").on(t.status, t.disputedAt),
  ],
);

/**
 * One adjudicator's work on a disputed case: the independent judgement (phase 1, before the annotations are shown),
 * then the final decision with its rationale (phase 2). A reopened decision is kept with status `reopened`.
 */
export const adjudications = sqliteTable(
  "adjudications",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    caseId: integer("case_id")
      .notNull()
      .references(() => cases.id),
    adjudicatorId: text("adjudicator_id")
      .notNull()
      .references(() => users.id),
    mode: text("mode", { enum: ADJUDICATION_MODES }).notNull(),
    status: text("status", { enum: ["in_progress", "decided", "reopened", "superseded"] }).notNull(),
    /** JSON CaseLabel. */
    independentLabel: text("independent_label", { mode: "json" }).$type<CaseLabel>(),
    independentAt: integer("independent_at"),
    finalLabel: text("final_label", { mode: "json" }).$type<CaseLabel>(),
    rationale: text("rationale").notNull().default(""),
    decidedAt: integer("decided_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("adjudications_case_idx").on(t.caseId), index("adjudications_user_idx").on(t.adjudicatorId)],
);

/**
 * An adjudicator's draft of one step (the independent judgement, or the final decision with its rationale), saved as
 * they work and restored on reload (docs/safe-psych.md, "Disagreement and adjudication"); removed when the step is
 * recorded. Versioned like every work item (docs/architecture.md, "The work-item engine").
 */
export const adjudicationDrafts = sqliteTable(
  "adjudication_drafts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    caseId: integer("case_id")
      .notNull()
      .references(() => cases.id),
    adjudicatorId: text("adjudicator_id")
      .notNull()
      .references(() => users.id),
    step: text("step", { enum: ["independent", "decide"] }).notNull(),
    /** JSON: the label fields and the rationale as the form holds them. */
    values: text("values").notNull(),
    version: integer("version").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("adjudication_drafts_unique").on(t.caseId, t.adjudicatorId, t.step)],
);
export * from "./schema-screening";
export * from "./schema-judge";
export * from "./schema-ratings";
export * from "./schema-grading";
export * from "./schema-guidelines";
export * from "./schema-quality";
export * from "./schema-jobs";
export * from "./schema-preparation";
export * from "./schema-evaluation";
export * from "./schema-evaluation-review";
