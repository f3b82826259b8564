/**
 * The visible rows of every table an import writes behind its run (docs/reliability.md, "Bulk imports"; decision
 * 0010): one view per table, `visible_<table>`, selecting only the rows a reader may see. Every reader of these
 * tables selects from the view; writers and the import machinery use the table. The rule is checked by the ESLint
 * rule `concord/visible-rows` (eslint/visible-rows.js, docs/checks.md): a read of the table outside the import
 * machinery fails the lint.
 *
 * A row is hidden while the run that wrote it is still listed in `import_runs` (rows added to an existing parent, a
 * case import's cases, events and study), and a parent created by an import is hidden while its own `import_run` is
 * set, whatever the state of the run (`importBehindHiddenParent` in app/platform/hidden-parents.server.ts); the rows
 * under such a parent are hidden with it, so a query by id or by parent finds nothing of a half-written import.
 */
import { sql, type SQL } from "drizzle-orm";
import { sqliteView, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import { cases, events, importRuns, studies } from "./schema";
import { judgeResponseImports, judgeResponses, judgeSets } from "./schema-judge";
import { gradingSets, gradingVerdicts } from "./schema-grading";
import { mentatBanks, mentatQuestions, mentatRatings, reviewItems, reviewSets } from "./schema-ratings";
import { screeningItems, screeningLabels, screeningRecallTiers, screeningStudies } from "./schema-screening";
import { evaluationImports, evaluationRuns } from "./schema-evaluation";

/** A row of a run still in progress: `import_run` set and its run still listed. */
const notPending = (run: SQLiteColumn): SQL =>
  sql`(${run} is null or ${run} not in (select ${importRuns.id} from ${importRuns}))`;

/** The parent (`table` by its id `ref`) is not hidden by the import that creates it. */
const parentShown = (table: "judge_sets" | "mentat_banks" | "review_sets" | "screening_studies", ref: SQLiteColumn) =>
  sql`exists (select 1 from ${sql.identifier(table)} p where p.id = ${ref} and p.import_run is null)`;

export const visibleStudies = sqliteView("visible_studies").as((qb) =>
  qb.select().from(studies).where(notPending(studies.importRun)),
);

export const visibleCases = sqliteView("visible_cases").as((qb) =>
  qb.select().from(cases).where(notPending(cases.importRun)),
);

export const visibleEvents = sqliteView("visible_events").as((qb) =>
  qb.select().from(events).where(notPending(events.importRun)),
);

export const visibleJudgeSets = sqliteView("visible_judge_sets").as((qb) =>
  qb
    .select()
    .from(judgeSets)
    .where(sql`${judgeSets.importRun} is null`),
);

export const visibleJudgeResponseImports = sqliteView("visible_judge_response_imports").as((qb) =>
  qb
    .select()
    .from(judgeResponseImports)
    .where(
      sql`${notPending(judgeResponseImports.importRun)} and ${parentShown("judge_sets", judgeResponseImports.setId)}`,
    ),
);

export const visibleJudgeResponses = sqliteView("visible_judge_responses").as((qb) =>
  qb
    .select()
    .from(judgeResponses)
    .where(sql`${notPending(judgeResponses.importRun)} and ${parentShown("judge_sets", judgeResponses.setId)}`),
);

export const visibleGradingVerdicts = sqliteView("visible_grading_verdicts").as((qb) =>
  qb.select().from(gradingVerdicts).where(notPending(gradingVerdicts.importRun)),
);

export const visibleGradingSets = sqliteView("visible_grading_sets").as((qb) =>
  qb
    .select()
    .from(gradingSets)
    .where(sql`${gradingSets.importRun} is null`),
);

export const visibleMentatBanks = sqliteView("visible_mentat_banks").as((qb) =>
  qb
    .select()
    .from(mentatBanks)
    .where(sql`${mentatBanks.importRun} is null`),
);

export const visibleMentatQuestions = sqliteView("visible_mentat_questions").as((qb) =>
  qb
    .select()
    .from(mentatQuestions)
    .where(sql`${notPending(mentatQuestions.importRun)} and ${parentShown("mentat_banks", mentatQuestions.bankId)}`),
);

export const visibleMentatRatings = sqliteView("visible_mentat_ratings").as((qb) =>
  qb.select().from(mentatRatings).where(notPending(mentatRatings.importRun)),
);

export const visibleReviewSets = sqliteView("visible_review_sets").as((qb) =>
  qb
    .select()
    .from(reviewSets)
    .where(sql`${reviewSets.importRun} is null`),
);

export const visibleReviewItems = sqliteView("visible_review_items").as((qb) =>
  qb
    .select()
    .from(reviewItems)
    .where(sql`${notPending(reviewItems.importRun)} and ${parentShown("review_sets", reviewItems.setId)}`),
);

export const visibleScreeningStudies = sqliteView("visible_screening_studies").as((qb) =>
  qb
    .select()
    .from(screeningStudies)
    .where(sql`${screeningStudies.importRun} is null`),
);

export const visibleScreeningItems = sqliteView("visible_screening_items").as((qb) =>
  qb
    .select()
    .from(screeningItems)
    .where(
      sql`${notPending(screeningItems.importRun)} and ${parentShown("screening_studies", screeningItems.studyId)}`,
    ),
);

export const visibleScreeningLabels = sqliteView("visible_screening_labels").as((qb) =>
  qb
    .select()
    .from(screeningLabels)
    .where(
      sql`${notPending(screeningLabels.importRun)} and exists (select 1 from ${screeningItems} i join ${screeningStudies} p on p.id = i.study_id where i.id = ${screeningLabels.itemId} and p.import_run is null and (i.import_run is null or i.import_run not in (select id from ${importRuns})))`,
    ),
);

export const visibleScreeningRecallTiers = sqliteView("visible_screening_recall_tiers").as((qb) =>
  qb
    .select()
    .from(screeningRecallTiers)
    .where(
      sql`${notPending(screeningRecallTiers.importRun)} and ${parentShown("screening_studies", screeningRecallTiers.studyId)}`,
    ),
);

export const visibleEvaluationImports = sqliteView("visible_evaluation_imports").as((qb) =>
  qb
    .select()
    .from(evaluationImports)
    .where(sql`${evaluationImports.importRun} is null`),
);

/** A run is shown once the import that wrote it is (its trajectories and steps are reached only through it). */
export const visibleEvaluationRuns = sqliteView("visible_evaluation_runs").as((qb) =>
  qb
    .select()
    .from(evaluationRuns)
    .where(
      sql`${notPending(evaluationRuns.importRun)} and exists (select 1 from evaluation_imports p where p.id = ${evaluationRuns.importId} and p.import_run is null)`,
    ),
);

/**
 * Every table with rows an import may hide, by its SQL name, with its view. The ESLint rule's list
 * (eslint/visible-rows.js) and the drizzle schema are checked against this one by test/unit/visible-rows-rule.test.ts.
 */
export const VISIBLE_VIEWS = {
  studies: visibleStudies,
  cases: visibleCases,
  events: visibleEvents,
  judge_sets: visibleJudgeSets,
  judge_response_imports: visibleJudgeResponseImports,
  judge_responses: visibleJudgeResponses,
  grading_sets: visibleGradingSets,
  grading_verdicts: visibleGradingVerdicts,
  mentat_banks: visibleMentatBanks,
  mentat_questions: visibleMentatQuestions,
  mentat_ratings: visibleMentatRatings,
  review_sets: visibleReviewSets,
  review_items: visibleReviewItems,
  screening_studies: visibleScreeningStudies,
  screening_items: visibleScreeningItems,
  screening_labels: visibleScreeningLabels,
  screening_recall_tiers: visibleScreeningRecallTiers,
  evaluation_imports: visibleEvaluationImports,
  evaluation_runs: visibleEvaluationRuns,
} as const;
