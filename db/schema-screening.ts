/**
 * Screening review studies (docs/screening.md; the HealthBench-Psych protocol): a corpus of items, an
 * automatic screen's label per item, blinded review rounds with concealed controls, and recall rounds.
 *
 * Blinding lives in the services' projections: reviewers' queries never select `screening_labels`,
 * `screening_recall_tiers`, `screening_round_items.is_control` / `stratum`, `screening_items.source` (rubrics) or
 * other reviewers' `screening_votes`.
 */
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { users } from "./schema-users";

export const SCREEN_LABELS = ["relevant", "borderline", "not_relevant"] as const;
export const RECALL_TIERS = ["clear", "possible", "no"] as const;
export const SCREENING_ITEM_KINDS = ["conversation", "text"] as const;
export const SCREENING_ROUND_STATUSES = ["open", "closed"] as const;
export const SCREENING_VOTE_STATUSES = ["draft", "submitted"] as const;
export const REVIEW_CONFIDENCES = ["low", "medium", "high"] as const;

/**
 * A screening review study. Its settings are fixed once round 1 opens; each round also keeps a copy of the ones it
 * was decided by. `categories` is the controlled vocabulary, a JSON array of terms.
 */
export const screeningStudies = sqliteTable("screening_studies", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  description: text("description").notNull().default(""),
  categories: text("categories", { mode: "json" }).$type<string[]>().notNull(),
  /** What belongs to the subset, shown to every reviewer above the relevance question (docs/screening.md#review). */
  inclusionCriterion: text("inclusion_criterion").notNull().default(""),
  /** Reviewers per round, each reviewing every item of the round. */
  reviewersPerRound: integer("reviewers_per_round").notNull().default(3),
  /** An item is included when at least this many reviewers say it is relevant (2 of 3). */
  inclusionVotes: integer("inclusion_votes").notNull().default(2),
  /** A control-inclusion rate above this opens a recall round (0.05). */
  controlThreshold: real("control_threshold").notNull().default(0.05),
  /** The default number of concealed controls when a round is opened. */
  controlsPerRound: integer("controls_per_round").notNull().default(150),
  createdAt: integer("created_at").notNull(),
  /** Set while the import that creates it is still writing (docs/reliability.md, "Bulk imports"): readers skip it. */
  importRun: text("import_run"),
});

/**
 * One item of the corpus: a HealthBench conversation (`content` = the `prompt` messages as JSON) or a plain text.
 * `source` is the whole record as imported (rubrics, example_tags, …): released with the subset, never shown.
 */
export const screeningItems = sqliteTable(
  "screening_items",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    studyId: integer("study_id")
      .notNull()
      .references(() => screeningStudies.id),
    externalId: text("external_id").notNull(),
    position: integer("position").notNull(),
    kind: text("kind", { enum: SCREENING_ITEM_KINDS }).notNull(),
    /** conversation: JSON [{role, content}]; text: the text. */
    content: text("content").notNull(),
    /** JSON array of strings (HealthBench `example_tags`). */
    tags: text("tags", { mode: "json" }).$type<string[]>().notNull().default([]),
    source: text("source").notNull(),
    /** sha256 of what a reviewer sees (kind and content). */
    contentHash: text("content_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    /** The import that added it to an existing study: hidden while that import runs (docs/reliability.md, "Bulk imports"). */
    importRun: text("import_run"),
  },
  (t) => [
    uniqueIndex("screening_items_study_external_idx").on(t.studyId, t.externalId),
    index("screening_items_study_pos_idx").on(t.studyId, t.position),
    index("screening_items_import_run_idx").on(t.importRun),
  ],
);

/** The automatic screen's label of an item (admin only). */
export const screeningLabels = sqliteTable(
  "screening_labels",
  {
    itemId: integer("item_id")
      .primaryKey()
      .references(() => screeningItems.id),
    label: text("label", { enum: SCREEN_LABELS }).notNull(),
    category: text("category"),
    confidence: text("confidence"),
    rationale: text("rationale").notNull().default(""),
    updatedAt: integer("updated_at").notNull(),
    /** The import that added it to an existing study: hidden while that import runs (docs/reliability.md, "Bulk imports"). */
    importRun: text("import_run"),
  },
  (t) => [index("screening_labels_import_run_idx").on(t.importRun)],
);

/** A recall screen's tier for an item that no round has used, imported for round `roundNumber` (admin only). */
export const screeningRecallTiers = sqliteTable(
  "screening_recall_tiers",
  {
    studyId: integer("study_id")
      .notNull()
      .references(() => screeningStudies.id),
    roundNumber: integer("round_number").notNull(),
    itemId: integer("item_id")
      .notNull()
      .references(() => screeningItems.id),
    tier: text("tier", { enum: RECALL_TIERS }).notNull(),
    rationale: text("rationale").notNull().default(""),
    updatedAt: integer("updated_at").notNull(),
    /** The import that added it to an existing study: hidden while that import runs (docs/reliability.md, "Bulk imports"). */
    importRun: text("import_run"),
  },
  (t) => [
    primaryKey({ columns: [t.studyId, t.roundNumber, t.itemId] }),
    index("screening_recall_tiers_import_run_idx").on(t.importRun),
  ],
);

/**
 * A review round. Round 1 reviews the screen's relevant and borderline items, later (recall) rounds the recall
 * screen's clear and possible ones, each with fresh concealed controls, in one seeded order. `inclusionVotes`,
 * `reviewersPerRound` and `controlThreshold` are the study's settings when the round opened. A round closes by
 * itself when its last vote is submitted.
 */
export const screeningRounds = sqliteTable(
  "screening_rounds",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    studyId: integer("study_id")
      .notNull()
      .references(() => screeningStudies.id),
    number: integer("number").notNull(),
    seed: integer("seed").notNull(),
    status: text("status", { enum: SCREENING_ROUND_STATUSES }).notNull().default("open"),
    reviewersPerRound: integer("reviewers_per_round").notNull(),
    inclusionVotes: integer("inclusion_votes").notNull(),
    controlThreshold: real("control_threshold").notNull(),
    openedAt: integer("opened_at").notNull(),
    openedBy: text("opened_by"),
    closedAt: integer("closed_at"),
  },
  (t) => [uniqueIndex("screening_rounds_study_number_idx").on(t.studyId, t.number)],
);

/**
 * An item of a round at its place in the shared order. Rows are inserted in `position` order, so their ids (the
 * reviewers' URLs) follow the shuffled order and reveal nothing about which items are controls.
 */
export const screeningRoundItems = sqliteTable(
  "screening_round_items",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    roundId: integer("round_id")
      .notNull()
      .references(() => screeningRounds.id),
    itemId: integer("item_id")
      .notNull()
      .references(() => screeningItems.id),
    position: integer("position").notNull(),
    isControl: integer("is_control", { mode: "boolean" }).notNull(),
    /** Where the item came from: its screen label (round 1) or recall tier (later rounds). */
    stratum: text("stratum").notNull(),
  },
  (t) => [
    uniqueIndex("screening_round_items_round_pos_idx").on(t.roundId, t.position),
    uniqueIndex("screening_round_items_round_item_idx").on(t.roundId, t.itemId),
  ],
);

/** The reviewers of a round: each reviews every item of it. */
export const screeningReviewers = sqliteTable(
  "screening_reviewers",
  {
    roundId: integer("round_id")
      .notNull()
      .references(() => screeningRounds.id),
    reviewerId: text("reviewer_id")
      .notNull()
      .references(() => users.id),
    assignedAt: integer("assigned_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.roundId, t.reviewerId] }), index("screening_reviewers_user_idx").on(t.reviewerId)],
);

/** One reviewer's vote on one round item; `version` is the optimistic-concurrency counter. */
export const screeningVotes = sqliteTable(
  "screening_votes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    roundItemId: integer("round_item_id")
      .notNull()
      .references(() => screeningRoundItems.id),
    roundId: integer("round_id")
      .notNull()
      .references(() => screeningRounds.id),
    reviewerId: text("reviewer_id")
      .notNull()
      .references(() => users.id),
    status: text("status", { enum: SCREENING_VOTE_STATUSES }).notNull().default("draft"),
    relevant: integer("relevant", { mode: "boolean" }),
    category: text("category"),
    confidence: text("confidence", { enum: REVIEW_CONFIDENCES }),
    notes: text("notes").notNull().default(""),
    version: integer("version").notNull().default(1),
    updatedAt: integer("updated_at").notNull(),
    submittedAt: integer("submitted_at"),
  },
  (t) => [
    uniqueIndex("screening_votes_item_reviewer_idx").on(t.roundItemId, t.reviewerId),
    index("screening_votes_round_idx").on(t.roundId, t.reviewerId),
  ],
);

/**
 * The version of each round's figures, moved by triggers (migration 0032) on every write that may change them: a
 * vote written, changed or deleted, an item added to or removed from the round, the round's row changed. The round
 * and study pages keep the figures computed on a worker thread with the version they were computed at, and ask again
 * only when it has moved (app/screening/round-figures.server.ts; docs/screening.md, "Round figures at scale").
 */
export const screeningRoundVersions = sqliteTable("screening_round_versions", {
  roundId: integer("round_id").primaryKey(),
  version: integer("version").notNull().default(0),
});
