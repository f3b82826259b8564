/**
 * Expert ratings (docs/mentat.md): MENTAT question banks rated option by option, their demographic variant sets and
 * Bradley–Terry label fits; MentalBench generated-case review sets. Experts hold the `rater` role. Times are integer
 * milliseconds since the epoch.
 */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { users } from "./schema-users";
import type { QuestionTexts } from "./vocabulary";

export const EXPERT_WORK_STATUSES = ["draft", "submitted"] as const;

/** A MENTAT question bank: its questions, the experts rating it, its variant sets and fits. */
export const mentatBanks = sqliteTable("mentat_banks", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  description: text("description").notNull().default(""),
  /** JSON array of domains labelled by expert preference (and shown to the raters); the others keep the intended answer. */
  preferenceDomains: text("preference_domains", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(["triage", "documentation"]),
  /** Seeds the per-rater option order and the option order of exported records. */
  seed: integer("seed").notNull().default(1),
  createdAt: integer("created_at").notNull(),
  /** Set while the import that creates it is still writing (docs/reliability.md, "Bulk imports"): readers skip it. */
  importRun: text("import_run"),
});

/**
 * One question: domain, text(s) with placeholders (JSON QuestionTexts: male/female/nonbinary or neutral), options
 * a–e (JSON array), the creator's intended answer (0–4). `contentHash` tells an unchanged re-import from a change.
 */
export const mentatQuestions = sqliteTable(
  "mentat_questions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    bankId: integer("bank_id")
      .notNull()
      .references(() => mentatBanks.id),
    externalId: text("external_id").notNull(),
    position: integer("position").notNull(),
    domain: text("domain").notNull(),
    texts: text("texts", { mode: "json" }).$type<QuestionTexts>().notNull(),
    options: text("options", { mode: "json" }).$type<string[]>().notNull(),
    intendedAnswer: integer("intended_answer").notNull(),
    notes: text("notes").notNull().default(""),
    contentHash: text("content_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** The import that added it to an existing bank: hidden while that import runs (docs/reliability.md, "Bulk imports"). */
    importRun: text("import_run"),
  },
  (t) => [
    uniqueIndex("mentat_questions_bank_external_idx").on(t.bankId, t.externalId),
    index("mentat_questions_bank_pos_idx").on(t.bankId, t.position),
    // One domain of a bank's questions as a window (docs/architecture.md, "Pages are windows").
    index("mentat_questions_bank_domain_pos_idx").on(t.bankId, t.domain, t.position),
    index("mentat_questions_import_run_idx").on(t.importRun),
  ],
);

/** The experts who rate a bank's preference-domain questions. */
export const mentatBankRaters = sqliteTable(
  "mentat_bank_raters",
  {
    bankId: integer("bank_id")
      .notNull()
      .references(() => mentatBanks.id),
    raterId: text("rater_id")
      .notNull()
      .references(() => users.id),
    assignedAt: integer("assigned_at").notNull(),
    assignedBy: text("assigned_by"),
  },
  (t) => [primaryKey({ columns: [t.bankId, t.raterId] }), index("mentat_bank_raters_rater_idx").on(t.raterId)],
);

/**
 * One expert's 0–100 ratings of a question's five options. `scores` is a JSON array in the options' original order
 * (a–e; null = not yet rated); `optionOrder` the order the expert saw them in and `shownGender` which gendered text,
 * both drawn from the bank's seed when the rating was first saved. `version` is the optimistic-concurrency counter.
 */
export const mentatRatings = sqliteTable(
  "mentat_ratings",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    questionId: integer("question_id")
      .notNull()
      .references(() => mentatQuestions.id),
    raterId: text("rater_id")
      .notNull()
      .references(() => users.id),
    status: text("status", { enum: EXPERT_WORK_STATUSES }).notNull().default("draft"),
    scores: text("scores", { mode: "json" }).$type<(number | null)[]>().notNull(),
    optionOrder: text("option_order", { mode: "json" }).$type<number[]>().notNull(),
    shownGender: text("shown_gender"),
    comment: text("comment").notNull().default(""),
    version: integer("version").notNull().default(1),
    updatedAt: integer("updated_at").notNull(),
    submittedAt: integer("submitted_at"),
    /**
     * The `mentat-import-ratings` run still writing this new rating: every reader hides it (its view, db/schema-visible.ts) until the
     * run's last transaction (docs/reliability.md, "Imports that add rows to an existing parent"). An expert's own
     * first save of the question removes it, and the import then refuses.
     */
    importRun: text("import_run"),
  },
  (t) => [
    uniqueIndex("mentat_ratings_question_rater_idx").on(t.questionId, t.raterId),
    index("mentat_ratings_rater_idx").on(t.raterId),
    index("mentat_ratings_run_idx").on(t.importRun),
  ],
);

/**
 * MENTAT's released annotation files as MENTAT's pipeline reads them (`mentat-import-ratings --layout
 * mentat-release`; docs/mentat.md, "MENTAT's released annotations"): every row kept — several per MENTAT rater and
 * question, one per wording — and the question creator's pseudo-rater `crtr`. Not any expert's work: no user, no
 * draft, never shown to experts; `mentat-fit` adds them to the bank's submitted ratings. One release per bank: a
 * new import replaces the previous one.
 */
export const mentatReleaseRatings = sqliteTable(
  "mentat_release_ratings",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    bankId: integer("bank_id")
      .notNull()
      .references(() => mentatBanks.id),
    questionId: integer("question_id")
      .notNull()
      .references(() => mentatQuestions.id),
    /** MENTAT's rater id (lower-cased, as its pipeline reads it), or `crtr` for the question's creator. */
    rater: text("rater").notNull(),
    /** MENTAT's `q_key` (q_male, q_female, q_they), or `creator`. */
    wording: text("wording").notNull(),
    /** Scores of options a–e, 0–100. */
    scores: text("scores", { mode: "json" }).$type<number[]>().notNull(),
    /** FILE:LINE of the row, or the question id for the creator's row. */
    source: text("source").notNull(),
  },
  (t) => [index("mentat_release_ratings_bank_idx").on(t.bankId)],
);

/** A demographic variant set (base, gender, age or race) of a bank, with the parameters that reproduce it. */
export const mentatDatasets = sqliteTable(
  "mentat_datasets",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    bankId: integer("bank_id")
      .notNull()
      .references(() => mentatBanks.id),
    dimension: text("dimension").notNull(),
    /** JSON { ages, races }. */
    params: text("params", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** sha256 of the variants (ids and texts, in order). */
    contentHash: text("content_hash").notNull(),
    count: integer("count").notNull(),
    createdAt: integer("created_at").notNull(),
    createdBy: text("created_by"),
  },
  (t) => [uniqueIndex("mentat_datasets_bank_dimension_idx").on(t.bankId, t.dimension)],
);

export const mentatVariants = sqliteTable(
  "mentat_variants",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => mentatDatasets.id),
    questionId: integer("question_id")
      .notNull()
      .references(() => mentatQuestions.id),
    variantId: text("variant_id").notNull(),
    position: integer("position").notNull(),
    gender: text("gender"),
    age: integer("age"),
    race: text("race"),
    text: text("text").notNull(),
  },
  (t) => [
    uniqueIndex("mentat_variants_dataset_variant_idx").on(t.datasetId, t.variantId),
    index("mentat_variants_dataset_pos_idx").on(t.datasetId, t.position),
  ],
);

/** A Bradley–Terry label fit of a bank's submitted ratings: options, input hash and the full result (JSON). */
export const mentatFits = sqliteTable(
  "mentat_fits",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    bankId: integer("bank_id")
      .notNull()
      .references(() => mentatBanks.id),
    /** JSON of the fit options (rater effects, penalties, bootstrap replicates, seed). */
    params: text("params", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** sha256 of the annotation rows the fit used; a different hash now means ratings changed since. */
    inputHash: text("input_hash").notNull(),
    /** JSON MentatFitResult. */
    result: text("result", { mode: "json" }).$type<unknown>().notNull(),
    createdAt: integer("created_at").notNull(),
    createdBy: text("created_by"),
  },
  (t) => [index("mentat_fits_bank_idx").on(t.bankId, t.id)],
);

/** A MentalBench review set: generated cases and seeds to rate or accept. */
export const reviewSets = sqliteTable("review_sets", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  description: text("description").notNull().default(""),
  createdAt: integer("created_at").notNull(),
  /** Set while the import that creates it is still writing (docs/reliability.md, "Bulk imports"): readers skip it. */
  importRun: text("import_run"),
});

export const reviewItems = sqliteTable(
  "review_items",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    setId: integer("set_id")
      .notNull()
      .references(() => reviewSets.id),
    externalId: text("external_id").notNull(),
    position: integer("position").notNull(),
    /** "case" (rated on the three scales) or "seed" (accepted or rejected). */
    kind: text("kind").notNull(),
    text: text("text").notNull(),
    caseType: text("case_type").notNull().default(""),
    diagnosis: text("diagnosis").notNull().default(""),
    seedId: text("seed_id").notNull().default(""),
    contentHash: text("content_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    /** The import that added it to an existing set: hidden while that import runs (docs/reliability.md, "Bulk imports"). */
    importRun: text("import_run"),
  },
  (t) => [
    uniqueIndex("review_items_set_external_idx").on(t.setId, t.externalId),
    index("review_items_set_pos_idx").on(t.setId, t.position),
    // One kind of a set's items as a window (docs/architecture.md, "Pages are windows").
    index("review_items_set_kind_pos_idx").on(t.setId, t.kind, t.position),
    index("review_items_import_run_idx").on(t.importRun),
  ],
);

export const reviewSetRaters = sqliteTable(
  "review_set_raters",
  {
    setId: integer("set_id")
      .notNull()
      .references(() => reviewSets.id),
    raterId: text("rater_id")
      .notNull()
      .references(() => users.id),
    assignedAt: integer("assigned_at").notNull(),
    assignedBy: text("assigned_by"),
  },
  (t) => [primaryKey({ columns: [t.setId, t.raterId] }), index("review_set_raters_rater_idx").on(t.raterId)],
);

/** One expert's review of one item: three 1–5 scores (cases) or accept/reject with a reason (seeds), a comment. */
export const reviewJudgements = sqliteTable(
  "review_judgements",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    itemId: integer("item_id")
      .notNull()
      .references(() => reviewItems.id),
    raterId: text("rater_id")
      .notNull()
      .references(() => users.id),
    status: text("status", { enum: EXPERT_WORK_STATUSES }).notNull().default("draft"),
    naturalness: integer("naturalness"),
    validity: integer("validity"),
    realism: integer("realism"),
    decision: text("decision", { enum: ["accept", "reject"] }),
    reason: text("reason").notNull().default(""),
    comment: text("comment").notNull().default(""),
    version: integer("version").notNull().default(1),
    updatedAt: integer("updated_at").notNull(),
    submittedAt: integer("submitted_at"),
  },
  (t) => [
    uniqueIndex("review_judgements_item_rater_idx").on(t.itemId, t.raterId),
    index("review_judgements_rater_idx").on(t.raterId),
  ],
);
