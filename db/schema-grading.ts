/**
 * Rubric-graded evaluation (the HealthBench-Psych evaluation; docs/rubric-grading.md): evaluation sets of
 * HealthBench conversations with their rubric criteria, named subsets, candidate models and their stored responses,
 * judges and their per-criterion verdicts, and batch jobs.
 *
 * Verdicts are keyed by (judge, response, criterion), so a finished call is never repeated and every judge grades
 * the identical stored response text.
 */
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const GRADING_VERDICT_STATUSES = ["parsed", "recovered", "failed"] as const;
export const GRADING_BATCH_STATUSES = ["written", "submitted", "ingested", "failed"] as const;

export const gradingSets = sqliteTable("grading_sets", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  /** sha256 of the imported file's bytes. */
  sourceSha256: text("source_sha256").notNull(),
  /** The set's content hash (docs/rubric-grading.md, "Hashes"). */
  contentSha256: text("content_sha256").notNull(),
  createdAt: integer("created_at").notNull(),
  /**
   * The import still writing this set (docs/reliability.md, "Bulk imports"): every reader skips a set whose column
   * is set, and the import's last transaction clears it.
   */
  importRun: text("import_run"),
});

export const gradingConversations = sqliteTable(
  "grading_conversations",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    setId: integer("set_id")
      .notNull()
      .references(() => gradingSets.id),
    promptId: text("prompt_id").notNull(),
    position: integer("position").notNull(),
    /** JSON [{role, content}], verbatim. */
    prompt: text("prompt", { mode: "json" }).$type<{ role: string; content: string }[]>().notNull(),
    /** JSON array of strings. */
    exampleTags: text("example_tags", { mode: "json" }).$type<string[]>().notNull(),
    contentHash: text("content_hash").notNull(),
  },
  (t) => [
    uniqueIndex("grading_conversations_set_prompt_idx").on(t.setId, t.promptId),
    index("grading_conversations_set_pos_idx").on(t.setId, t.position),
  ],
);

export const gradingCriteria = sqliteTable(
  "grading_criteria",
  {
    conversationId: integer("conversation_id")
      .notNull()
      .references(() => gradingConversations.id),
    /** 0-based position in the conversation's rubric. */
    idx: integer("idx").notNull(),
    criterion: text("criterion").notNull(),
    points: real("points").notNull(),
    /** JSON array of strings. */
    tags: text("tags", { mode: "json" }).$type<string[]>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.idx] })],
);

export const gradingSubsets = sqliteTable(
  "grading_subsets",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    setId: integer("set_id")
      .notNull()
      .references(() => gradingSets.id),
    name: text("name").notNull(),
    /** sha256 of the id list file as given. */
    idsSha256: text("ids_sha256").notNull(),
    contentSha256: text("content_sha256").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("grading_subsets_set_name_idx").on(t.setId, t.name)],
);

export const gradingSubsetMembers = sqliteTable(
  "grading_subset_members",
  {
    subsetId: integer("subset_id")
      .notNull()
      .references(() => gradingSubsets.id),
    conversationId: integer("conversation_id")
      .notNull()
      .references(() => gradingConversations.id),
  },
  (t) => [primaryKey({ columns: [t.subsetId, t.conversationId] })],
);

/**
 * A model as a candidate or a judge of a set. `temperature` null = not sent (the provider's default, for models
 * whose API rejects the parameter); `params` keeps whatever else the manifest should show (JSON).
 */
export const gradingModels = sqliteTable(
  "grading_models",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    setId: integer("set_id")
      .notNull()
      .references(() => gradingSets.id),
    role: text("role", { enum: ["candidate", "judge"] }).notNull(),
    name: text("name").notNull(),
    model: text("model").notNull(),
    baseUrl: text("base_url").notNull(),
    temperature: real("temperature"),
    maxTokens: integer("max_tokens").notNull(),
    maxTokensParam: text("max_tokens_param", { enum: ["max_tokens", "max_completion_tokens"] }).notNull(),
    /** For a judge: the candidate name it also is (self-preference), if any. */
    selfCandidate: text("self_candidate"),
    note: text("note").notNull().default(""),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("grading_models_set_role_name_idx").on(t.setId, t.role, t.name)],
);

/** One candidate's stored response to one conversation: every judge grades exactly this text. */
export const gradingResponses = sqliteTable(
  "grading_responses",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    candidateId: integer("candidate_id")
      .notNull()
      .references(() => gradingModels.id),
    conversationId: integer("conversation_id")
      .notNull()
      .references(() => gradingConversations.id),
    text: text("text").notNull(),
    finishReason: text("finish_reason"),
    /** An explicit refusal (stop reason or refusal field), kept and graded as returned. */
    refusal: integer("refusal", { mode: "boolean" }).notNull().default(false),
    promptTokens: integer("prompt_tokens"),
    completionTokens: integer("completion_tokens"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("grading_responses_candidate_conv_idx").on(t.candidateId, t.conversationId)],
);

export const gradingVerdicts = sqliteTable(
  "grading_verdicts",
  {
    judgeId: integer("judge_id")
      .notNull()
      .references(() => gradingModels.id),
    responseId: integer("response_id")
      .notNull()
      .references(() => gradingResponses.id),
    criterionIdx: integer("criterion_idx").notNull(),
    status: text("status", { enum: GRADING_VERDICT_STATUSES }).notNull(),
    /** Null when status = failed (excluded from scores). */
    criteriaMet: integer("criteria_met", { mode: "boolean" }),
    explanation: text("explanation").notNull().default(""),
    /** sync | batch | offline */
    via: text("via").notNull(),
    attempts: integer("attempts").notNull(),
    /** For a failure: the last error's kind and status code, never response text. */
    error: text("error"),
    promptTokens: integer("prompt_tokens"),
    completionTokens: integer("completion_tokens"),
    createdAt: integer("created_at").notNull(),
    /**
     * The batch ingest still writing this verdict: every reader of results hides it (its view, db/schema-visible.ts) until the ingest's
     * last transaction (docs/reliability.md, "Bulk imports"). The grading queue counts it as graded, so that no call
     * is graded twice while its result is being ingested.
     */
    importRun: text("import_run"),
  },
  (t) => [
    primaryKey({ columns: [t.judgeId, t.responseId, t.criterionIdx] }),
    index("grading_verdicts_run_idx").on(t.importRun),
  ],
);

/** Failed candidate calls (a transport failure is never stored as a response): the error log of the manifest. */
export const gradingCallErrors = sqliteTable(
  "grading_call_errors",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    modelId: integer("model_id")
      .notNull()
      .references(() => gradingModels.id),
    conversationId: integer("conversation_id")
      .notNull()
      .references(() => gradingConversations.id),
    criterionIdx: integer("criterion_idx"),
    error: text("error").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("grading_call_errors_model_idx").on(t.modelId)],
);

export const gradingBatches = sqliteTable("grading_batches", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  judgeId: integer("judge_id")
    .notNull()
    .references(() => gradingModels.id),
  mode: text("mode", { enum: ["api", "offline"] }).notNull(),
  status: text("status", { enum: GRADING_BATCH_STATUSES }).notNull(),
  requests: integer("requests").notNull(),
  /** The request file (offline) or the Batch API's ids. */
  inputPath: text("input_path"),
  remoteFileId: text("remote_file_id"),
  remoteBatchId: text("remote_batch_id"),
  ingested: integer("ingested").notNull().default(0),
  dropped: integer("dropped").notNull().default(0),
  createdAt: integer("created_at").notNull(),
  finishedAt: integer("finished_at"),
});
