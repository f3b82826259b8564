/**
 * Judge validation (docs/judge-validation.md): validation sets of imported model responses, the
 * bucket sample drawn from them, three raters' labels per sampled response and candidate judges' outputs.
 *
 * Blinding (docs/architecture.md#roles-and-blinding): raters may load only `judge_responses.model_output_raw` of the items assigned to them and
 * their own `judge_ratings` row. Everything else here (model, strategy, sample id, bucket, derived action, judge
 * outputs, other raters' labels) is read by admin services only.
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { users } from "./schema-users";

export const JUDGE_SET_STATUSES = ["drafting", "rating", "closed"] as const;
export type JudgeSetStatus = (typeof JUDGE_SET_STATUSES)[number];

/**
 * A validation set. `drafting`: responses are imported and the sample may be drawn and re-drawn; `rating`: raters
 * were assigned, the sample is frozen; `closed`: labels are final (read-only). `targets` is JSON {bucket: k};
 * `summary` JSON {bucket: {target, available, selected}} of the current draw (null before the first draw).
 */
export const judgeSets = sqliteTable("judge_sets", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  seed: integer("seed").notNull().default(123),
  status: text("status", { enum: JUDGE_SET_STATUSES }).notNull().default("drafting"),
  targets: text("targets", { mode: "json" }).$type<Record<string, number>>().notNull(),
  summary: text("summary", { mode: "json" }).$type<unknown>(),
  drawnAt: integer("drawn_at"),
  createdBy: text("created_by").references(() => users.id),
  createdAt: integer("created_at").notNull(),
  /**
   * Set while the import that creates the set is still writing its responses in short transactions: every reader
   * hides the set (and so its responses) until the import's last transaction clears it; an import whose run is gone
   * (killed) leaves a set that the next import or start removes (docs/reliability.md, "Bulk imports").
   */
  importRun: text("import_run"),
});

/** Each file of responses imported into a set, once: the same bytes twice are refused by their hash. */
export const judgeResponseImports = sqliteTable(
  "judge_response_imports",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    setId: integer("set_id")
      .notNull()
      .references(() => judgeSets.id),
    filename: text("filename").notNull(),
    sha256: text("sha256").notNull(),
    format: text("format").notNull(),
    rows: integer("rows").notNull(),
    importedBy: text("imported_by").references(() => users.id),
    importedAt: integer("imported_at").notNull(),
    /** The import run still writing this file's responses into an existing set; readers hide it (its view, db/schema-visible.ts). */
    importRun: text("import_run"),
  },
  (t) => [
    uniqueIndex("judge_response_imports_set_sha_idx").on(t.setId, t.sha256),
    index("judge_response_imports_run_idx").on(t.importRun),
  ],
);

/**
 * One model response = one flattened trajectory step (docs/judge-validation.md#importing-responses). `record` is the whole flattened row as JSON, keys
 * in the reference's order (source_run_name … structured_action_raw, then new_judge_output and any other keys), so a
 * draw replays `build_human_validation_set.py` on exactly its input. `position` is the input order within the set.
 * `bucket` / `derivedAction` are the rule-based first parse (docs/judge-validation.md#first-parse-and-buckets) of the record, kept for counting.
 */
export const judgeResponses = sqliteTable(
  "judge_responses",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    setId: integer("set_id")
      .notNull()
      .references(() => judgeSets.id),
    importId: integer("import_id")
      .notNull()
      .references(() => judgeResponseImports.id),
    position: integer("position").notNull(),
    sourceRun: text("source_run").notNull().default(""),
    sampleId: text("sample_id").notNull(),
    model: text("model").notNull().default(""),
    strategy: text("strategy").notNull().default(""),
    /** Null when the reference row had none (the reference reads odd values leniently; so does the import). */
    stepIndex: integer("step_index"),
    /** The row's `is_last_section` as Python's truthiness reads it (the record keeps the original value). */
    isLastSection: integer("is_last_section", { mode: "boolean" }).notNull(),
    modelOutputRaw: text("model_output_raw").notNull(),
    /** The first-parse features `new_judge_output` as JSON, or null when the row had none. */
    newJudgeOutput: text("new_judge_output", { mode: "json" }).$type<unknown>(),
    record: text("record", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    bucket: text("bucket"),
    derivedAction: text("derived_action").notNull(),
    /**
     * The import run still writing this response into an existing set: readers hide it (its view, db/schema-visible.ts) until the run's
     * last transaction (docs/reliability.md, "Bulk imports"). Null for every committed response. The readers that
     * reach responses through `judge_items` need no check: a draw takes only visible responses.
     */
    importRun: text("import_run"),
  },
  (t) => [
    index("judge_responses_run_idx").on(t.importRun),
    uniqueIndex("judge_responses_set_pos_idx").on(t.setId, t.position),
    uniqueIndex("judge_responses_identity_idx").on(t.setId, t.sourceRun, t.model, t.strategy, t.sampleId, t.stepIndex),
  ],
);

/** A sampled response of the current draw, numbered ann_0001… in annotation order (`position` 1…). */
export const judgeItems = sqliteTable(
  "judge_items",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    setId: integer("set_id")
      .notNull()
      .references(() => judgeSets.id),
    responseId: integer("response_id")
      .notNull()
      .references(() => judgeResponses.id),
    annotationId: text("annotation_id").notNull(),
    bucket: text("bucket").notNull(),
    derivedAction: text("derived_action").notNull(),
    position: integer("position").notNull(),
  },
  (t) => [
    uniqueIndex("judge_items_set_annotation_idx").on(t.setId, t.annotationId),
    uniqueIndex("judge_items_set_response_idx").on(t.setId, t.responseId),
    // The set's sample as a window, by position and by bucket (docs/architecture.md, "Pages are windows").
    index("judge_items_set_pos_idx").on(t.setId, t.position),
    index("judge_items_set_bucket_pos_idx").on(t.setId, t.bucket, t.position),
  ],
);

export const JUDGE_RATING_STATUSES = ["assigned", "draft", "submitted"] as const;
export type JudgeRatingStatus = (typeof JUDGE_RATING_STATUSES)[number];

/**
 * A sampled response given to a rater, and the rater's labels (docs/judge-validation.md#raters: three raters per response). `version` is the
 * optimistic-concurrency counter (0 until the first save); every change appends an event in the same transaction.
 */
export const judgeRatings = sqliteTable(
  "judge_ratings",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    itemId: integer("item_id")
      .notNull()
      .references(() => judgeItems.id),
    raterId: text("rater_id")
      .notNull()
      .references(() => users.id),
    status: text("status", { enum: JUDGE_RATING_STATUSES }).notNull().default("assigned"),
    primaryAnswer: text("primary_answer"),
    infoRequest: text("info_request"),
    icdCodes: text("icd_codes").notNull().default(""),
    diagnosisNames: text("diagnosis_names").notNull().default(""),
    notes: text("notes").notNull().default(""),
    version: integer("version").notNull().default(0),
    assignedAt: integer("assigned_at").notNull(),
    assignedBy: text("assigned_by"),
    updatedAt: integer("updated_at"),
    submittedAt: integer("submitted_at"),
  },
  (t) => [
    uniqueIndex("judge_ratings_item_rater_idx").on(t.itemId, t.raterId),
    index("judge_ratings_rater_idx").on(t.raterId),
  ],
);

/** A candidate judge of a set (an LLM judge, a prompt variant …), by name. */
export const judgeCandidates = sqliteTable(
  "judge_candidates",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    setId: integer("set_id")
      .notNull()
      .references(() => judgeSets.id),
    name: text("name").notNull(),
    filename: text("filename").notNull(),
    importedBy: text("imported_by").references(() => users.id),
    importedAt: integer("imported_at").notNull(),
  },
  (t) => [uniqueIndex("judge_candidates_set_name_idx").on(t.setId, t.name)],
);

/** A candidate judge's features and action for one sampled response; `raw` is the judge's text when it was given. */
export const judgeOutputs = sqliteTable(
  "judge_outputs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    judgeId: integer("judge_id")
      .notNull()
      .references(() => judgeCandidates.id),
    itemId: integer("item_id")
      .notNull()
      .references(() => judgeItems.id),
    primaryAnswer: text("primary_answer"),
    infoRequest: text("info_request"),
    action: text("action"),
    raw: text("raw"),
  },
  (t) => [uniqueIndex("judge_outputs_judge_item_idx").on(t.judgeId, t.itemId)],
);
