/**
 * Safe-Psych evaluations in the app (docs/evaluation.md, "Runs in the app"): an evaluation holds the gold labels its
 * runs are scored against (a data_gt.json, the file `metrics --gold` reads) and, optionally, the study whose cases
 * those are; run folders are imported under it, each run one model × strategy × seed, each with one trajectory per
 * case and one row per step. Metrics are computed by the same code as `concord metrics` and kept per evaluation
 * version.
 *
 * An import of run folders is written behind its hidden parent (`evaluation_imports.import_run`, docs/reliability.md,
 * "Bulk imports"): readers reach runs, trajectories and steps only through `visible_evaluation_imports`.
 */
import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const evaluations = sqliteTable("evaluations", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  /**
   * The study whose cases the gold labels are (its cases' sections are shown on the case page); null if none. No
   * foreign key: this schema file imports no other (a study removed leaves the evaluation without its sections).
   */
  studyId: integer("study_id"),
  /** The gold labels, data_gt.json as read (an array of records), for the metrics. */
  gold: text("gold", { mode: "json" }).$type<unknown[]>().notNull(),
  goldSha256: text("gold_sha256").notNull(),
  /** Moves with every finished import: the kept metrics of an older version are computed again. */
  version: integer("version").notNull().default(0),
  createdAt: integer("created_at").notNull(),
  createdBy: text("created_by"),
});

export const evaluationImports = sqliteTable(
  "evaluation_imports",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    evaluationId: integer("evaluation_id")
      .notNull()
      .references(() => evaluations.id),
    /** What was imported: the folders given, as the importer named them. */
    source: text("source").notNull(),
    createdAt: integer("created_at").notNull(),
    createdBy: text("created_by"),
    /** The import still writing these runs (docs/reliability.md, "Bulk imports"); cleared by its last transaction. */
    importRun: text("import_run"),
  },
  (t) => [index("evaluation_imports_eval_idx").on(t.evaluationId)],
);

export const evaluationRuns = sqliteTable(
  "evaluation_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    evaluationId: integer("evaluation_id")
      .notNull()
      .references(() => evaluations.id),
    importId: integer("import_id")
      .notNull()
      .references(() => evaluationImports.id),
    /** The trajectory file as the metrics see it: `runs/<folder>/trajectories.jsonl` or `runs_seeds/…`. */
    path: text("path").notNull(),
    model: text("model").notNull(),
    strategy: text("strategy").notNull(),
    /** null when neither the records nor the folder name give one. */
    seed: integer("seed"),
    judge: text("judge"),
    /** run.json's status (complete, incomplete, running), or "unknown" for a folder without run.json (the reference's). */
    status: text("status").notNull(),
    trajectories: integer("trajectories").notNull(),
    /** Model and judge calls the trajectories hold (one of each per judged step, one model call per unjudged step). */
    calls: integer("calls").notNull(),
    /** Retries recorded by run.json's sessions; null without run.json. */
    retries: integer("retries"),
    /** Tokens, when the records carry usage; the runner's records do not, so usually null. */
    tokens: integer("tokens"),
    /** Trajectories left out of every metric: an empty model output or a judge failure (docs/evaluation.md). */
    failures: integer("failures").notNull(),
    /** timing.json's total_time_seconds; null without timing.json. */
    seconds: real("seconds"),
    /** The import run that wrote it (docs/reliability.md, "Bulk imports"); shown once its import is. */
    importRun: text("import_run"),
  },
  (t) => [
    uniqueIndex("evaluation_runs_eval_path_idx").on(t.evaluationId, t.path),
    index("evaluation_runs_eval_model_idx").on(t.evaluationId, t.model, t.strategy, t.seed, t.id),
    index("evaluation_runs_import_idx").on(t.importId),
  ],
);

export const evaluationTrajectories = sqliteTable(
  "evaluation_trajectories",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: integer("run_id")
      .notNull()
      .references(() => evaluationRuns.id),
    evaluationId: integer("evaluation_id").notNull(),
    model: text("model").notNull(),
    strategy: text("strategy").notNull(),
    sampleId: text("sample_id").notNull(),
    /** Line of the record in its file. */
    line: integer("line").notNull(),
    stoppingReason: text("stopping_reason").notNull(),
    stepsExecuted: integer("steps_executed").notNull(),
    sectionsTotal: integer("sections_total").notNull(),
    /** The first step with a Diagnose action and its code (metrics-trajectories.ts:scoreTrajectory); null if none. */
    firstDiagnosis: integer("first_diagnosis"),
    code: text("code"),
    /** Why the paper's metrics leave it out (empty_output, judge_failure, no_steps), or null. */
    excluded: text("excluded"),
    /** What the trajectory ended with, compared across seeds: "Diagnose F32.1", "Abstain", "Finished". */
    outcome: text("outcome").notNull(),
    /** The failure filters of the case list (docs/evaluation.md, "A case, step by step"): 1 or 0. */
    prematureDiagnosis: integer("premature_diagnosis").notNull(),
    prematureAbstention: integer("premature_abstention").notNull(),
    overAbstention: integer("over_abstention").notNull(),
    wrongCode: integer("wrong_code").notNull(),
    /**
     * Another seed of the same model and strategy ended this case otherwise (docs/evaluation.md, "A case, step by
     * step"): kept at import for every trajectory of the imported runs' models and strategies
     * (evaluations.server.ts:keepCaseCounts), 1 or 0.
     */
    seedDisagreement: integer("seed_disagreement").notNull().default(0),
    /** The record as its line held it, for the metrics (the reference mode reads fields the steps do not keep). */
    record: text("record").notNull(),
  },
  (t) => [
    index("evaluation_trajectories_run_idx").on(t.runId, t.sampleId),
    index("evaluation_trajectories_case_idx").on(t.evaluationId, t.sampleId, t.model, t.strategy),
    index("evaluation_trajectories_pd_idx").on(t.evaluationId, t.prematureDiagnosis, t.sampleId, t.id),
    index("evaluation_trajectories_pa_idx").on(t.evaluationId, t.prematureAbstention, t.sampleId, t.id),
    index("evaluation_trajectories_oa_idx").on(t.evaluationId, t.overAbstention, t.sampleId, t.id),
    index("evaluation_trajectories_wc_idx").on(t.evaluationId, t.wrongCode, t.sampleId, t.id),
    index("evaluation_trajectories_sd_idx").on(t.evaluationId, t.seedDisagreement, t.sampleId, t.id),
  ],
);

/**
 * The case list's counts (docs/evaluation.md, "Scale"): per evaluation, model and strategy, the visible trajectories
 * and those with each failure flag, written in the transaction that makes an import visible
 * (evaluations.server.ts:keepCaseCounts), so the list's count reads at most one row per model and strategy instead of
 * counting trajectories.
 */
export const evaluationCaseCounts = sqliteTable(
  "evaluation_case_counts",
  {
    evaluationId: integer("evaluation_id")
      .notNull()
      .references(() => evaluations.id),
    model: text("model").notNull(),
    strategy: text("strategy").notNull(),
    trajectories: integer("trajectories").notNull(),
    prematureDiagnosis: integer("premature_diagnosis").notNull(),
    prematureAbstention: integer("premature_abstention").notNull(),
    overAbstention: integer("over_abstention").notNull(),
    wrongCode: integer("wrong_code").notNull(),
    seedDisagreement: integer("seed_disagreement").notNull(),
  },
  (t) => [uniqueIndex("evaluation_case_counts_pk").on(t.evaluationId, t.model, t.strategy)],
);

export const evaluationSteps = sqliteTable(
  "evaluation_steps",
  {
    trajectoryId: integer("trajectory_id")
      .notNull()
      .references(() => evaluationTrajectories.id),
    stepIndex: integer("step_index").notNull(),
    sectionOrder: integer("section_order"),
    /** This turn's user message. */
    prompt: text("prompt").notNull(),
    answer: text("answer").notNull(),
    judgeOutput: text("judge_output").notNull(),
    /** The judge's parsed fields (docs/evaluation.md, "Judge parse and mapping"). */
    primaryAnswer: text("primary_answer"),
    infoRequest: text("info_request"),
    icdCodes: text("icd_codes", { mode: "json" }).$type<string[]>().notNull(),
    diagnosisNames: text("diagnosis_names", { mode: "json" }).$type<string[]>().notNull(),
    /** The step's action as the metrics read it (a re-judge's override first), "" when none. */
    action: text("action").notNull(),
  },
  (t) => [uniqueIndex("evaluation_steps_pk").on(t.trajectoryId, t.stepIndex)],
);

/** The metrics of an evaluation version, in each mode, as `metrics --json` prints them. */
export const evaluationMetrics = sqliteTable(
  "evaluation_metrics",
  {
    evaluationId: integer("evaluation_id")
      .notNull()
      .references(() => evaluations.id),
    mode: text("mode", { enum: ["paper", "reference"] }).notNull(),
    version: integer("version").notNull(),
    output: text("output", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  },
  (t) => [uniqueIndex("evaluation_metrics_pk").on(t.evaluationId, t.mode)],
);
