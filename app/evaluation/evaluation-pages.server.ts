/**
 * What the evaluation pages read (docs/evaluation.md, "Runs in the app", "A case, step by step"): the runs of an
 * evaluation and its failure list as windows read by keyset (docs/architecture.md, "Pages are windows"), one case's
 * trajectories with their steps loaded for that case only, and the tables' CSV and charts.
 */
import type { ImportedStep } from "./domain/run-import";
import { and, asc, count, eq, sql, type SQL } from "drizzle-orm";
import { evaluationCaseCounts, evaluations, evaluationSteps, evaluationTrajectories } from "../../db/schema-evaluation";
import { visibleCases, visibleEvaluationRuns } from "../../db/schema-visible";
import { formatCsv } from "../formats/csv-text";
import type { CaseLabel } from "../labels/labels";
import { expertActionLabels } from "../gold/public";
import { getCaseSections } from "../annotation/public.server";
import { SECTION_TITLES } from "../annotation/public";
import type { Db } from "../platform/db.server";
import { finishWindow, prefixRange, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import { ServiceError } from "../platform/service-error";
import type { MetricsMode, MetricsOutput } from "./domain/metrics";
import { readGold } from "./domain/metrics-inputs";
import { metricsTables, tableChart, tableCsvRows, TABLE_IDS, type TableId } from "./domain/metrics-tables";
import { evaluationMetricsOf } from "./evaluations.server";
import { FAILURE_FILTERS, MAX_SIDE_BY_SIDE, type FailureFilter } from "./domain/failures";

export const RUNS_WINDOW = {
  prefix: "r_",
  sorts: ["model"],
  defaultSort: "model",
  filters: ["q"],
} as const satisfies WindowSpec<string, string>;

export interface RunRow {
  id: number;
  model: string;
  strategy: string;
  seed: number | null;
  status: string;
  trajectories: number;
  calls: number;
  retries: number | null;
  tokens: number | null;
  failures: number;
  seconds: number | null;
  path: string;
}

/** The evaluation's runs by model, strategy, seed; `q` a model-name prefix. */
export function runsWindow(db: Db, evaluationId: number, params: URLSearchParams): ListWindow<RunRow> {
  const w = readWindow(params, RUNS_WINDOW, 4);
  const r = visibleEvaluationRuns;
  const seed = sql<number>`coalesce(${r.seed}, -1)`;
  const k = keyset(w, [r.model, r.strategy, seed, r.id]);
  const [lo, hi] = prefixRange(w.filters.q);
  const filter = and(
    eq(r.evaluationId, evaluationId),
    w.filters.q ? sql`${r.model} >= ${lo} and ${r.model} < ${hi}` : undefined,
  );
  const rows = db
    .select({
      id: r.id,
      model: r.model,
      strategy: r.strategy,
      seed: r.seed,
      status: r.status,
      trajectories: r.trajectories,
      calls: r.calls,
      retries: r.retries,
      tokens: r.tokens,
      failures: r.failures,
      seconds: r.seconds,
      path: r.path,
    })
    .from(r)
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all();
  const total = db.select({ n: count() }).from(r).where(filter).get()!.n;
  return finishWindow(w, rows, total, (x) => [x.model, x.strategy, x.seed ?? -1, x.id]);
}

// ---------------------------------------------------------------------------------------------------------------
// The failure list

export const CASES_WINDOW = {
  prefix: "c_",
  sorts: ["case"],
  defaultSort: "case",
  filters: ["failure", "model", "strategy", "q"],
} as const satisfies WindowSpec<string, string>;

export interface TrajectoryRow {
  id: number;
  runId: number;
  sampleId: string;
  model: string;
  strategy: string;
  seed: number | null;
  outcome: string;
  firstDiagnosis: number | null;
  stepsExecuted: number;
  excluded: string | null;
  prematureDiagnosis: number;
  prematureAbstention: number;
  overAbstention: number;
  wrongCode: number;
  seedDisagreement: number;
}

/** The case list's filters, as its window reads them and as a review is sent with them (model-review.server.ts). */
export interface CaseListFilters {
  failure: string;
  model: string;
  strategy: string;
  q: string;
}

/**
 * The condition on `evaluation_trajectories` of the case list's filters: one failure (each flag kept on the row at
 * import, read from its index; disagreement between seeds read at query time), a model, a strategy and a case-id
 * prefix. The one definition of what a filter picks, for the list and for a review sent with it.
 */
const failureOf = (v: string): FailureFilter | null =>
  (FAILURE_FILTERS as readonly string[]).includes(v) ? (v as FailureFilter) : null;

export function caseListFilter(evaluationId: number, f: CaseListFilters): SQL | undefined {
  const t = evaluationTrajectories;
  const failure = failureOf(f.failure);
  const flag: Record<FailureFilter, SQL> = {
    premature_diagnosis: sql`${t.prematureDiagnosis} = 1`,
    premature_abstention: sql`${t.prematureAbstention} = 1`,
    over_abstention: sql`${t.overAbstention} = 1`,
    wrong_code: sql`${t.wrongCode} = 1`,
    seed_disagreement: sql`${t.seedDisagreement} = 1`,
  };
  const [lo, hi] = prefixRange(f.q);
  return and(
    eq(t.evaluationId, evaluationId),
    failure ? flag[failure] : undefined,
    f.model ? eq(t.model, f.model) : undefined,
    f.strategy ? eq(t.strategy, f.strategy) : undefined,
    f.q ? sql`${t.sampleId} >= ${lo} and ${t.sampleId} < ${hi}` : undefined,
  );
}

/**
 * Trajectories of the evaluation by case, filtered by one failure (each flag kept on the row at import, read from its
 * index), a model, a strategy and a case-id prefix. Disagreement between seeds: another seed of the same model and
 * strategy ended this case differently (a diagnosis with another code, or no diagnosis), a flag kept at import;
 * trajectories left out of the metrics are not compared. The count is read from the counts kept at import, or, with a
 * case-id prefix, counted up to CASE_COUNT_CAP: the list's cost does not grow with the runs (docs/evaluation.md,
 * "Scale").
 */
export function casesWindow(db: Db, evaluationId: number, params: URLSearchParams): ListWindow<TrajectoryRow> {
  const w = readWindow(params, CASES_WINDOW, 2);
  const t = evaluationTrajectories;
  const filter = caseListFilter(evaluationId, w.filters);
  const failure = failureOf(w.filters.failure);
  const k = keyset(w, [t.sampleId, t.id]);
  const r = visibleEvaluationRuns;
  const rows = db
    .select({
      id: t.id,
      runId: t.runId,
      sampleId: t.sampleId,
      model: t.model,
      strategy: t.strategy,
      seed: r.seed,
      outcome: t.outcome,
      firstDiagnosis: t.firstDiagnosis,
      stepsExecuted: t.stepsExecuted,
      excluded: t.excluded,
      prematureDiagnosis: t.prematureDiagnosis,
      prematureAbstention: t.prematureAbstention,
      overAbstention: t.overAbstention,
      wrongCode: t.wrongCode,
      seedDisagreement: t.seedDisagreement,
    })
    .from(t)
    .innerJoin(r, eq(r.id, t.runId))
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all();
  const window = finishWindow(w, rows, 0, (x) => [x.sampleId, x.id]);
  if (!w.filters.q) return { ...window, total: keptCaseCount(db, evaluationId, failure, w.filters) };
  // A case-id prefix: counted from its index range, at most CASE_COUNT_CAP rows read (docs/evaluation.md, "Scale").
  const capped = db
    .select({ n: count() })
    .from(
      db
        .select({ one: sql`1` })
        .from(t)
        .innerJoin(r, eq(r.id, t.runId))
        .where(filter)
        .limit(CASE_COUNT_CAP + 1)
        .as("capped"),
    )
    .get()!.n;
  return capped > CASE_COUNT_CAP
    ? { ...window, total: CASE_COUNT_CAP, totalCapped: true }
    : { ...window, total: capped };
}

/** The most rows the case list counts for a case-id prefix; above it the page says "more than". */
export const CASE_COUNT_CAP = 1000;

/**
 * The case list's count without a case-id prefix, from the counts kept at import (`evaluation_case_counts`,
 * evaluations.server.ts:keepCaseCounts): one row per model and strategy, whatever the number of trajectories.
 */
function keptCaseCount(
  db: Db,
  evaluationId: number,
  failure: FailureFilter | null,
  filters: { model: string; strategy: string },
): number {
  const c = evaluationCaseCounts;
  const column = {
    premature_diagnosis: c.prematureDiagnosis,
    premature_abstention: c.prematureAbstention,
    over_abstention: c.overAbstention,
    wrong_code: c.wrongCode,
    seed_disagreement: c.seedDisagreement,
  };
  const summed = failure ? column[failure] : c.trajectories;
  return db
    .select({ n: sql<number>`coalesce(sum(${summed}), 0)` })
    .from(c)
    .where(
      and(
        eq(c.evaluationId, evaluationId),
        filters.model ? eq(c.model, filters.model) : undefined,
        filters.strategy ? eq(c.strategy, filters.strategy) : undefined,
      ),
    )
    .get()!.n;
}

/** The models and strategies of an evaluation's runs, for the filters (one row per run, read from its index). */
export function runChoices(db: Db, evaluationId: number): { models: string[]; strategies: string[] } {
  const r = visibleEvaluationRuns;
  const rows = db
    .selectDistinct({ model: r.model, strategy: r.strategy })
    .from(r)
    .where(eq(r.evaluationId, evaluationId))
    .all();
  return {
    models: [...new Set(rows.map((x) => x.model))].sort(),
    strategies: [...new Set(rows.map((x) => x.strategy))].sort(),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// One case

/** A step as the case page shows it: as imported (docs/evaluation.md, "Runs in the app"). */
type CaseStep = ImportedStep;

export interface CaseTrajectory {
  id: number;
  runId: number;
  model: string;
  strategy: string;
  seed: number | null;
  outcome: string;
  stoppingReason: string;
  excluded: string | null;
  flags: FailureFilter[];
  steps: CaseStep[];
}

export interface CaseView {
  sampleId: string;
  gold: { sufficient: boolean; diagnosis: string | null; tau: number | null; sections: number };
  /** The expert action label of each section (docs/safe-psych.md#gold-labels-and-expert-action-labels). */
  expertActions: string[];
  /** The note's sections, when the evaluation names its study and the study has the case. */
  sections: { title: string; content: string }[] | null;
  strategy: string;
  /** This case's trajectories under the strategy shown: the choices of the side-by-side view. */
  available: { id: number; model: string; seed: number | null; outcome: string }[];
  strategies: string[];
  shown: CaseTrajectory[];
}

/** The gold record of a case in an evaluation's data_gt.json, or undefined. */
export function goldRecordOf(gold: readonly unknown[], sampleId: string): Record<string, unknown> | undefined {
  return gold.find((g) => typeof g === "object" && g !== null && String((g as { id?: unknown }).id) === sampleId) as
    Record<string, unknown> | undefined;
}

/**
 * A case's gold label as the case page and the review show it, and the expert action label of each section
 * (`expertActionLabels`, docs/safe-psych.md, "Gold labels and expert action labels"); T is the record's
 * `num_sections_in_input`, else the trajectory's. Null when the record does not read as a gold label.
 */
export function caseGold(goldRecord: Record<string, unknown>, sampleId: string, sectionsTotal: number) {
  const goldCase = readGold([goldRecord]).cases.get(sampleId);
  if (!goldCase) return { gold: null, expertActions: [] as string[] };
  const T = Number(goldRecord.num_sections_in_input ?? sectionsTotal) || sectionsTotal;
  let expertActions: string[] = [];
  if (T > 0) {
    try {
      const label = (
        goldCase.sufficient
          ? { sufficiency: "sufficient", earliestSection: goldCase.tau, diagnosis: goldCase.code }
          : { sufficiency: "insufficient" }
      ) as CaseLabel;
      expertActions = expertActionLabels(label, T);
    } catch {
      expertActions = [];
    }
  }
  return {
    gold: {
      sufficient: goldCase.sufficient,
      diagnosis:
        goldCase.code ??
        (typeof goldRecord.diagnosis === "string" && goldRecord.diagnosis ? goldRecord.diagnosis : null),
      tau: goldCase.tau,
      sections: T,
    },
    expertActions,
  };
}

/**
 * One case of an evaluation: its gold label and expert actions, the note's sections, and the steps of the
 * trajectories asked for (at most four, by id; by default the first seed of each of the first four models under the
 * strategy). Reads this case's rows only.
 */
export function caseView(
  db: Db,
  evaluationId: number,
  sampleId: string,
  ask: { strategy?: string; trajectories?: number[] },
): CaseView | null {
  const evaluation = db
    .select({ gold: evaluations.gold, studyId: evaluations.studyId })
    .from(evaluations)
    .where(eq(evaluations.id, evaluationId))
    .get();
  if (!evaluation) return null;
  const goldRecord = goldRecordOf(evaluation.gold, sampleId);
  if (!goldRecord) return null;
  const t = evaluationTrajectories;
  const r = visibleEvaluationRuns;
  const all = db
    .select({
      id: t.id,
      runId: t.runId,
      model: t.model,
      strategy: t.strategy,
      seed: r.seed,
      outcome: t.outcome,
      stoppingReason: t.stoppingReason,
      excluded: t.excluded,
      sectionsTotal: t.sectionsTotal,
      prematureDiagnosis: t.prematureDiagnosis,
      prematureAbstention: t.prematureAbstention,
      overAbstention: t.overAbstention,
      wrongCode: t.wrongCode,
    })
    .from(t)
    .innerJoin(r, eq(r.id, t.runId))
    .where(and(eq(t.evaluationId, evaluationId), eq(t.sampleId, sampleId)))
    .orderBy(asc(t.model), asc(t.strategy), asc(sql`coalesce(${r.seed}, -1)`), asc(t.id))
    .all();
  const strategies = [...new Set(all.map((x) => x.strategy))].sort();
  const asked = ask.trajectories?.length ? all.filter((x) => ask.trajectories!.includes(x.id)) : [];
  const strategy =
    ask.strategy && strategies.includes(ask.strategy)
      ? ask.strategy
      : (asked[0]?.strategy ?? strategies.find((s) => s.startsWith("sequential")) ?? strategies[0] ?? "");
  const under = all.filter((x) => x.strategy === strategy);
  let chosen = asked.filter((x) => x.strategy === strategy).slice(0, MAX_SIDE_BY_SIDE);
  if (chosen.length === 0) {
    const models = new Set<string>();
    chosen = under.filter((x) => !models.has(x.model) && models.add(x.model)).slice(0, MAX_SIDE_BY_SIDE);
  }
  const stepsOf = db
    .select()
    .from(evaluationSteps)
    .where(sql`${evaluationSteps.trajectoryId} = ${sql.placeholder("id")}`)
    .orderBy(asc(evaluationSteps.stepIndex))
    .prepare();
  const { gold, expertActions } = caseGold(goldRecord, sampleId, all[0]?.sectionsTotal ?? 0);
  if (!gold) return null;
  let sections: CaseView["sections"] = null;
  if (evaluation.studyId !== null) {
    const found = db
      .select({ id: visibleCases.id })
      .from(visibleCases)
      .where(and(eq(visibleCases.studyId, evaluation.studyId), eq(visibleCases.externalId, sampleId)))
      .get();
    if (found)
      sections = getCaseSections(db, found.id).map((s) => ({ title: SECTION_TITLES[s.kind], content: s.content }));
  }
  return {
    sampleId,
    gold,
    expertActions,
    sections,
    strategy,
    strategies,
    available: under.map((x) => ({ id: x.id, model: x.model, seed: x.seed, outcome: x.outcome })),
    shown: chosen.map((x) => ({
      id: x.id,
      runId: x.runId,
      model: x.model,
      strategy: x.strategy,
      seed: x.seed,
      outcome: x.outcome,
      stoppingReason: x.stoppingReason,
      excluded: x.excluded,
      flags: (
        [
          ["premature_diagnosis", x.prematureDiagnosis],
          ["premature_abstention", x.prematureAbstention],
          ["over_abstention", x.overAbstention],
          ["wrong_code", x.wrongCode],
        ] as const
      )
        .filter(([, v]) => v === 1)
        .map(([k]) => k),
      steps: stepsOf.all({ id: x.id }).map((s) => ({
        stepIndex: s.stepIndex,
        sectionOrder: s.sectionOrder,
        prompt: s.prompt,
        answer: s.answer,
        judgeOutput: s.judgeOutput,
        primaryAnswer: s.primaryAnswer,
        infoRequest: s.infoRequest,
        icdCodes: s.icdCodes,
        diagnosisNames: s.diagnosisNames,
        action: s.action,
      })),
    })),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Tables, CSV and charts

export function evaluationTables(db: Db, evaluationId: number, mode: MetricsMode) {
  const output = evaluationMetricsOf(db, evaluationId, mode);
  return { output, tables: metricsTables(output) };
}

/** A table's file: `<table>-<mode>.csv` (formula-safe, the one CSV writer) or `<table>-<mode>.svg` (its chart). */
export async function evaluationTableFile(
  db: Db,
  evaluationId: number,
  file: string,
): Promise<{ filename: string; contentType: string; body: string } | null> {
  const m = /^([a-z]+)-(paper|reference)\.(csv|svg)$/.exec(file);
  if (!m || !(TABLE_IDS as readonly string[]).includes(m[1]!)) return null;
  const id = m[1] as TableId;
  const mode = m[2] as MetricsMode;
  let output;
  try {
    output = evaluationMetricsOf(db, evaluationId, mode);
  } catch (e) {
    if (e instanceof ServiceError && e.status === 404) return null;
    throw e;
  }
  if (m[3] === "csv") {
    const table = metricsTables(output).find((t) => t.id === id)!;
    return { filename: file, contentType: "text/csv; charset=utf-8", body: formatCsv(tableCsvRows(table)) };
  }
  const spec = tableChart(output as MetricsOutput, id);
  if (!spec) return null;
  const { renderSvg } = await import("../charts/charts.server");
  return { filename: file, contentType: "image/svg+xml", body: await renderSvg(spec) };
}
