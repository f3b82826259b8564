/**
 * Safe-Psych evaluations in the app (docs/evaluation.md, "Runs in the app"): an evaluation's gold labels, the run
 * folders imported under it, and their metrics computed by the code `concord metrics` runs, kept per version.
 *
 * The import follows the import contract (docs/reliability.md, "The import contract"): every trajectory file is read
 * through the one streaming reader and checked whole before anything is written (refusals `FILE:LINE: reason`); the
 * runs are then written behind a hidden parent (`evaluation_imports`, `importBehindHiddenParent`) in short
 * transactions, a second pass over the same bytes (a file changed between the passes is refused), and the last
 * transaction makes the whole import visible at once.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { and, asc, count, eq, sql } from "drizzle-orm";
import { evaluationImports, evaluationMetrics, evaluations } from "../../db/schema-evaluation";
import { visibleEvaluationRuns, visibleStudies } from "../../db/schema-visible";
import { importFileSource, readImportFile } from "../cli/io";
import { importIdProblem } from "../formats/import-contract";
import { readJsonlLine } from "../formats/jsonl";
import type { Db } from "../platform/db.server";
import { openOutputFile } from "../platform/output-files.server";
import { importBehindHiddenParent, INTERRUPTED, type HiddenParent } from "../platform/hidden-parents.server";
import { ServiceError } from "../platform/service-error";
import { computeReferenceMetrics } from "./compat";
import type { MetricsMode, MetricsOutput } from "./domain/metrics";
import { readGold, type GoldCase, type TrajectoryFile } from "./domain/metrics-inputs";
import { computePaperMetrics } from "./domain/paper-metrics";
import { readTrajectoryRecord, type ImportedTrajectory } from "./domain/run-import";
import type { Strategy } from "./domain/runner-protocol";
import { groupTrajectoryFiles, locateTrajectoryFiles, type LocatedFile } from "./trajectory-files";
import { RUN_JSON, TIMING } from "./run-folder";

/** What an import of run folders writes under its hidden parent, children first (docs/reliability.md, "Bulk imports"). */
export const EVALUATION_IMPORT_PARENT: HiddenParent = {
  table: "evaluation_imports",
  children: [
    `delete from evaluation_steps where rowid in (select s.rowid from evaluation_steps s
       join evaluation_trajectories t on t.id = s.trajectory_id join evaluation_runs r on r.id = t.run_id
       where r.import_id = ? limit 2000)`,
    `delete from evaluation_trajectories where id in (select t.id from evaluation_trajectories t
       join evaluation_runs r on r.id = t.run_id where r.import_id = ? limit 2000)`,
    "delete from evaluation_runs where id in (select id from evaluation_runs where import_id = ? limit 2000)",
  ],
};

/** The most problems an import lists; the rest are counted. */
const MAX_PROBLEMS = 50;

export interface EvaluationSummary {
  id: number;
  name: string;
  studyId: number | null;
  studyName: string | null;
  cases: number;
  runs: number;
  createdAt: number;
}

export function listEvaluations(db: Db): EvaluationSummary[] {
  return db
    .select({
      id: evaluations.id,
      name: evaluations.name,
      studyId: evaluations.studyId,
      studyName: visibleStudies.name,
      cases: sql<number>`json_array_length(${evaluations.gold})`,
      runs: sql<number>`(select count(*) from visible_evaluation_runs r where r.evaluation_id = ${evaluations.id})`,
      createdAt: evaluations.createdAt,
    })
    .from(evaluations)
    .leftJoin(visibleStudies, eq(visibleStudies.id, evaluations.studyId))
    .orderBy(asc(evaluations.name))
    .all();
}

export function getEvaluation(db: Db, id: number): EvaluationSummary | null {
  return listEvaluations(db).find((e) => e.id === id) ?? null;
}

/** The gold labels of an evaluation by case id, as the metrics read them. */
function goldOf(db: Db, evaluationId: number): Map<string, GoldCase> {
  const row = db.select({ gold: evaluations.gold }).from(evaluations).where(eq(evaluations.id, evaluationId)).get();
  if (!row) throw new ServiceError("No such evaluation.", undefined, 404);
  return readGold(row.gold).cases;
}

// ---------------------------------------------------------------------------------------------------------------
// Import

export interface RunPreview {
  path: string;
  model: string;
  strategy: Strategy;
  seed: number | null;
  trajectories: number;
  status: string;
}

export interface RunImportResult {
  /** `FILE:LINE: reason` (or `FILE: reason`), at most MAX_PROBLEMS; empty when the import was accepted. */
  problems: string[];
  /** Problems beyond those listed. */
  moreProblems: number;
  runs: RunPreview[];
  trajectories: number;
  /** The evaluation written to (null on a dry run that would create it, or a refusal). */
  evaluationId: number | null;
  dryRun: boolean;
}

export interface RunImportInput {
  /** The evaluation's name: runs are added to it, or it is created with `create`. */
  evaluation: string;
  /** To create the evaluation: its gold labels (a data_gt.json) and the study whose cases they are. */
  create?: { goldFile: string; studyId: number | null };
  /** Run folders, or folders of run folders (as `metrics --runs`). */
  dirs: string[];
  dryRun?: boolean;
  actor?: string | null;
  now?: number;
}

interface CheckedFile extends LocatedFile {
  sha256: string | null;
  model: string;
  strategy: Strategy;
  seed: number | null;
  trajectories: number;
  calls: number;
  failures: number;
  status: string;
  retries: number | null;
  tokens: number | null;
  seconds: number | null;
  judge: string | null;
}

class Problems {
  readonly list: string[] = [];
  more = 0;
  add(line: string): void {
    if (this.list.length < MAX_PROBLEMS) this.list.push(line);
    else this.more++;
  }
  get any(): boolean {
    return this.list.length > 0;
  }
}

/** Reads an optional small JSON file of a run folder (run.json, timing.json) through the contract. */
function readSideFile(file: string, problems: Problems): Record<string, unknown> | null {
  if (!existsSync(file)) return null;
  let text: string;
  try {
    text = readImportFile(file, "evalRuns", { json: true });
  } catch (e) {
    problems.add((e as Error).message);
    return null;
  }
  try {
    const value: unknown = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    problems.add(`${file}: must be one JSON object`);
  } catch (e) {
    problems.add(`${file}: not valid JSON (${(e as Error).message})`);
  }
  return null;
}

/** One pass over a trajectory file through the contract's streaming reader; `each` gets every record's rows. */
function readTrajectoryFile(
  located: LocatedFile,
  gold: ReadonlyMap<string, GoldCase>,
  problems: Problems,
  each: (t: ImportedTrajectory, line: number, text: string) => void,
): string | null {
  const source = importFileSource(located.file, "evalRuns", { json: true });
  const firstLine = new Map<string, number>();
  let identity: { key: string; line: number } | null = null;
  try {
    for (const { line, text } of source.jsonlLines()) {
      const entry = readJsonlLine(line, text);
      if (!entry) continue;
      const at = `${located.file}:${line}`;
      if ("invalid" in entry) {
        problems.add(`${at}: not valid JSON (${entry.invalid})`);
        continue;
      }
      const read = readTrajectoryRecord(located.path, entry.value, gold);
      if ("problem" in read) {
        problems.add(`${at}: ${read.problem}`);
        continue;
      }
      const t = read.trajectory;
      const idProblem = importIdProblem(t.sampleId, "sample_id");
      if (idProblem) {
        problems.add(`${at}: ${idProblem}`);
        continue;
      }
      const first = firstLine.get(t.sampleId);
      if (first !== undefined) {
        problems.add(`${at}: case "${t.sampleId}" again (first on line ${first})`);
        continue;
      }
      firstLine.set(t.sampleId, line);
      const key = JSON.stringify([t.model, t.strategy, t.seed]);
      if (identity === null) identity = { key, line };
      else if (identity.key !== key) {
        problems.add(
          `${at}: model, strategy or seed differs from line ${identity.line}'s (one run per file: ${t.model}, ${t.strategy}, seed ${t.seed})`,
        );
        continue;
      }
      each(t, line, text);
    }
  } catch (e) {
    // A problem of the bytes (encoding, a line too long, the size): the contract's own refusal.
    problems.add((e as Error).message);
    return null;
  }
  if (firstLine.size === 0) problems.add(`${located.file}: no trajectory records`);
  return source.sha256();
}

/** Checks every file (first pass): what each run is, its counts, and every problem. */
function checkFiles(
  located: readonly LocatedFile[],
  gold: ReadonlyMap<string, GoldCase>,
  problems: Problems,
): CheckedFile[] {
  const checked: CheckedFile[] = [];
  for (const file of located) {
    if (!file.file.endsWith(".jsonl")) {
      problems.add(`${file.file}: only trajectories.jsonl files are imported (JSON Lines, one record per line)`);
      continue;
    }
    let first: ImportedTrajectory | null = null;
    let trajectories = 0;
    let calls = 0;
    let failures = 0;
    const sha256 = readTrajectoryFile(file, gold, problems, (t) => {
      first ??= t;
      trajectories++;
      calls += t.calls;
      if (t.excluded !== null) failures++;
    });
    const folder = dirname(file.file);
    const runJson = readSideFile(join(folder, RUN_JSON), problems);
    const timing = readSideFile(join(folder, TIMING), problems);
    if (first === null) continue;
    const t: ImportedTrajectory = first;
    const sessions = Array.isArray(runJson?.sessions) ? (runJson.sessions as Record<string, unknown>[]) : null;
    const judgeRecord = runJson?.judge as Record<string, unknown> | undefined;
    checked.push({
      ...file,
      sha256,
      model: t.model,
      strategy: t.strategy,
      seed: t.seed,
      trajectories,
      calls,
      failures,
      status: typeof runJson?.status === "string" ? runJson.status : "unknown",
      retries: sessions ? sessions.reduce((n, s) => n + (typeof s.retries === "number" ? s.retries : 0), 0) : null,
      tokens: recordedTokens(sessions),
      seconds: typeof timing?.total_time_seconds === "number" ? timing.total_time_seconds : null,
      judge: typeof judgeRecord?.key === "string" ? judgeRecord.key : null,
    });
  }
  return checked;
}

/**
 * The tokens a run recorded: the sum of its run.json sessions' `tokens` when every session recorded a number (the
 * servers reported usage), else null — a run by the reference's runner, by a Concord that did not record them, or
 * against a server that reports no usage (docs/formats.md, "Run folders").
 */
function recordedTokens(sessions: Record<string, unknown>[] | null): number | null {
  if (!sessions || sessions.length === 0) return null;
  let n = 0;
  for (const s of sessions) {
    if (typeof s.tokens !== "number" || !Number.isFinite(s.tokens) || s.tokens < 0) return null;
    n += s.tokens;
  }
  return n;
}

/** The gold file of a new evaluation, read whole through the contract (as `import-gold` reads data_gt.json). */
function readGoldFile(file: string, problems: Problems): unknown[] | null {
  let text: string;
  try {
    text = readImportFile(file, "gold", { json: true });
  } catch (e) {
    problems.add((e as Error).message);
    return null;
  }
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    problems.add(`${file}: not valid JSON (${(e as Error).message})`);
    return null;
  }
  if (!Array.isArray(value)) {
    problems.add(`${file}: must be one JSON array (data_gt.json)`);
    return null;
  }
  if (readGold(value).cases.size === 0) {
    problems.add(`${file}: no gold record with an id and a sufficiency label`);
    return null;
  }
  return value;
}

/**
 * Imports run folders under an evaluation (creating it with its gold labels when `create` is given): all or nothing.
 * Refusals are returned as `problems` (nothing written); a dry run checks everything and writes nothing.
 */
export function importRunFolders(db: Db, input: RunImportInput): RunImportResult {
  const problems = new Problems();
  const refused = (runs: RunPreview[] = []): RunImportResult => ({
    problems: problems.list,
    moreProblems: problems.more,
    runs,
    trajectories: 0,
    evaluationId: null,
    dryRun: Boolean(input.dryRun),
  });
  const nameProblem = importIdProblem(input.evaluation, "the evaluation's name");
  if (input.evaluation.trim() === "" || nameProblem) {
    problems.add(nameProblem ?? "the evaluation needs a name");
    return refused();
  }
  const existing = db.select().from(evaluations).where(eq(evaluations.name, input.evaluation)).get();
  let goldRecords: unknown[] | null = null;
  if (existing && input.create) {
    problems.add(`the evaluation "${input.evaluation}" exists: import runs into it without new gold labels`);
    return refused();
  }
  if (!existing && !input.create) {
    problems.add(`no evaluation "${input.evaluation}": give its gold labels (data_gt.json) to create it`);
    return refused();
  }
  if (input.create) {
    if (input.create.studyId !== null) {
      const study = db.select().from(visibleStudies).where(eq(visibleStudies.id, input.create.studyId)).get();
      if (!study) problems.add(`no study ${input.create.studyId}`);
    }
    goldRecords = readGoldFile(input.create.goldFile, problems);
  }
  if (problems.any) return refused();
  const gold = existing ? goldOf(db, existing.id) : readGold(goldRecords!).cases;
  let located: LocatedFile[];
  try {
    if (input.dirs.length === 0) throw new Error("give at least one run folder");
    located = locateTrajectoryFiles(input.dirs);
  } catch (e) {
    problems.add((e as Error).message);
    return refused();
  }
  if (located.length === 0) {
    problems.add(`${input.dirs.join(", ")}: no trajectories.jsonl under ${input.dirs.length === 1 ? "it" : "them"}`);
    return refused();
  }
  const checked = checkFiles(located, gold, problems);
  // One run per model × strategy × seed and per path, in the file set and against the evaluation's runs: each file's
  // two look-ups by index (evaluation_runs_eval_path_idx, evaluation_runs_eval_model_idx), so the check costs the
  // imported runs, never the evaluation's earlier ones (docs/evaluation.md, "Scale").
  const seen = new Map<string, string>();
  const byPath = db.$client.prepare(
    "select path from visible_evaluation_runs where evaluation_id = ? and path = ? limit 1",
  );
  const byIdentity = db.$client.prepare(
    `select path from visible_evaluation_runs where evaluation_id = ? and model = ? and strategy = ?
       and seed is ? limit 1`,
  );
  for (const c of checked) {
    if (existing && byPath.get(existing.id, c.path)) {
      problems.add(`${c.file}: already imported into "${input.evaluation}" (as ${c.path})`);
      continue;
    }
    const key = JSON.stringify([c.model, c.strategy, c.seed]);
    const stored = existing
      ? (byIdentity.get(existing.id, c.model, c.strategy, c.seed) as { path: string } | undefined)
      : undefined;
    const other = stored ? `the evaluation's run ${stored.path}` : seen.get(key);
    if (other) problems.add(`${c.file}: a second run of ${c.model}, ${c.strategy}, seed ${c.seed} (first: ${other})`);
    else seen.set(key, c.file);
  }
  const runs: RunPreview[] = checked.map((c) => ({
    path: c.path,
    model: c.model,
    strategy: c.strategy,
    seed: c.seed,
    trajectories: c.trajectories,
    status: c.status,
  }));
  if (problems.any) return refused(runs);
  const trajectories = checked.reduce((n, c) => n + c.trajectories, 0);
  if (input.dryRun)
    return { problems: [], moreProblems: 0, runs, trajectories, evaluationId: existing?.id ?? null, dryRun: true };
  // The metrics are not computed here: they read every run of the evaluation, so an import that computed them would
  // cost the evaluation's size. The import moves the evaluation's version; the metrics are computed once for it when
  // first read (`evaluationMetricsOf`; docs/evaluation.md, "Scale").
  const evaluationId = writeImport(db, input, existing?.id ?? null, goldRecords, gold, checked);
  return { problems: [], moreProblems: 0, runs, trajectories, evaluationId, dryRun: false };
}

const FILE_CHANGED = "changed while it was being imported; nothing was imported. Import it again.";

function writeImport(
  db: Db,
  input: RunImportInput,
  existingId: number | null,
  goldRecords: unknown[] | null,
  gold: ReadonlyMap<string, GoldCase>,
  checked: readonly CheckedFile[],
): number {
  const now = input.now ?? Date.now();
  const $ = db.$client;
  const insertRun = $.prepare(
    `insert into evaluation_runs (evaluation_id, import_id, path, model, strategy, seed, judge, status, trajectories,
       calls, retries, tokens, failures, seconds, import_run) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertTrajectory = $.prepare(
    `insert into evaluation_trajectories (run_id, evaluation_id, model, strategy, sample_id, line, stopping_reason,
       steps_executed, sections_total, first_diagnosis, code, excluded, outcome, premature_diagnosis,
       premature_abstention, over_abstention, wrong_code, record)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertStep = $.prepare(
    `insert into evaluation_steps (trajectory_id, step_index, section_order, prompt, answer, judge_output,
       primary_answer, info_request, icd_codes, diagnosis_names, action) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  let createdEvaluation: number | null = null;
  type Parent = { id: number; evaluationId: number; runIds: Map<string, number> };
  type Row = { t: ImportedTrajectory; line: number; text: string; runId: number };
  const dropCreated = () => {
    // A new evaluation is created with its first import: refused, it goes with it.
    const created = createdEvaluation;
    if (created !== null)
      db.transaction((tx) => {
        const left = tx
          .select({ n: count() })
          // eslint-disable-next-line concord/visible-rows -- a refused import's hidden row still holds the evaluation
          .from(evaluationImports)
          .where(eq(evaluationImports.evaluationId, created))
          .get()!.n;
        if (left === 0) tx.delete(evaluations).where(eq(evaluations.id, created)).run();
      });
  };
  let outcome;
  try {
    outcome = importBehindHiddenParent<Parent, Row, null>(db, EVALUATION_IMPORT_PARENT, {
      target: `evaluation:${input.evaluation}`,
      create: (tx, runId) => {
        let evaluationId = existingId;
        if (evaluationId === null) {
          if (tx.select().from(evaluations).where(eq(evaluations.name, input.evaluation)).get()) return null;
          const goldText = JSON.stringify(goldRecords);
          evaluationId = tx
            .insert(evaluations)
            .values({
              name: input.evaluation,
              studyId: input.create!.studyId,
              gold: goldRecords!,
              goldSha256: createHash("sha256").update(goldText).digest("hex"),
              createdAt: now,
              createdBy: input.actor ?? null,
            })
            .returning({ id: evaluations.id })
            .get().id;
          createdEvaluation = evaluationId;
        }
        const id = tx
          .insert(evaluationImports)
          .values({
            evaluationId,
            source: input.dirs.join("\n"),
            createdAt: now,
            createdBy: input.actor ?? null,
            importRun: runId,
          })
          .returning({ id: evaluationImports.id })
          .get().id;
        const runIds = new Map<string, number>();
        for (const c of checked) {
          const run = insertRun.run(
            evaluationId,
            id,
            c.path,
            c.model,
            c.strategy,
            c.seed,
            c.judge,
            c.status,
            c.trajectories,
            c.calls,
            c.retries,
            c.tokens,
            c.failures,
            c.seconds,
            runId,
          );
          runIds.set(c.path, Number(run.lastInsertRowid));
        }
        return { id, evaluationId, runIds };
      },
      rows: (parent) => secondPass(checked, gold, parent.runIds),
      write: (_tx, { t, line, text, runId }, parent) => {
        const trajectory = insertTrajectory.run(
          runId,
          parent.evaluationId,
          t.model,
          t.strategy,
          t.sampleId,
          line,
          t.stoppingReason,
          t.stepsExecuted,
          t.sectionsTotal,
          t.firstDiagnosis,
          t.code,
          t.excluded,
          t.outcome,
          t.prematureDiagnosis ? 1 : 0,
          t.prematureAbstention ? 1 : 0,
          t.overAbstention ? 1 : 0,
          t.wrongCode ? 1 : 0,
          text,
        ).lastInsertRowid;
        for (const s of t.steps)
          insertStep.run(
            trajectory,
            s.stepIndex,
            s.sectionOrder,
            s.prompt,
            s.answer,
            s.judgeOutput,
            s.primaryAnswer,
            s.infoRequest,
            JSON.stringify(s.icdCodes),
            JSON.stringify(s.diagnosisNames),
            s.action,
          );
      },
      finish: (tx, parent) => {
        keepCaseCounts(db, parent.evaluationId, checked);
        tx.update(evaluations)
          .set({ version: sql`${evaluations.version} + 1` })
          .where(eq(evaluations.id, parent.evaluationId))
          .run();
        return null;
      },
    });
  } catch (error) {
    dropCreated();
    throw error;
  }
  if ("refused" in outcome) {
    dropCreated();
    throw new ServiceError(outcome.refused, undefined, 409);
  }
  if ("exists" in outcome) throw new ServiceError(INTERRUPTED, undefined, 409);
  const row = db.select({ id: evaluations.id }).from(evaluations).where(eq(evaluations.name, input.evaluation)).get();
  return row!.id;
}

/**
 * The case list's kept figures for the models and strategies an import adds runs to (docs/evaluation.md, "Scale"), in
 * the transaction that makes the import visible: each trajectory's seed-disagreement flag (another seed of the same
 * model and strategy ended the case otherwise; trajectories left out of the metrics are not compared), then the counts
 * of `evaluation_case_counts`. An import into an evaluation is the only one writing it (its hidden parent's target), so
 * every trajectory of the evaluation is visible or this import's. Costs the imported models' and strategies'
 * trajectories, never the list's requests. The migration that added these figures fills them the same way.
 */
function keepCaseCounts(db: Db, evaluationId: number, checked: readonly CheckedFile[]): void {
  // The import's connection: better-sqlite3 is synchronous, so these run inside the finishing transaction.
  const $ = db.$client;
  // The model's and strategy's trajectories, reached through their runs' index (evaluation_runs_eval_model_idx, then
  // evaluation_trajectories_run_idx): one range per run, never a walk over the evaluation's trajectories.
  // eslint-disable-next-line concord/visible-rows -- this import's own runs, not yet visible in its finishing transaction
  const ofPair = `run_id in (select id from evaluation_runs where evaluation_id = ? and model = ? and strategy = ?)`;
  const flag = $.prepare(
    `update evaluation_trajectories set seed_disagreement = (excluded is null and exists (select 1
       from evaluation_trajectories u where u.evaluation_id = evaluation_trajectories.evaluation_id
       and u.sample_id = evaluation_trajectories.sample_id and u.model = evaluation_trajectories.model
       and u.strategy = evaluation_trajectories.strategy and u.excluded is null
       and u.outcome <> evaluation_trajectories.outcome))
     where ${ofPair}`,
  );
  const drop = $.prepare("delete from evaluation_case_counts where evaluation_id = ? and model = ? and strategy = ?");
  const count = $.prepare(
    `insert into evaluation_case_counts (evaluation_id, model, strategy, trajectories, premature_diagnosis,
       premature_abstention, over_abstention, wrong_code, seed_disagreement)
     select ?, ?, ?, count(*), coalesce(sum(premature_diagnosis), 0), coalesce(sum(premature_abstention), 0),
       coalesce(sum(over_abstention), 0), coalesce(sum(wrong_code), 0), coalesce(sum(seed_disagreement), 0)
     from evaluation_trajectories where ${ofPair}`,
  );
  const pairs = new Set(checked.map((c) => JSON.stringify([c.model, c.strategy])));
  for (const pair of pairs) {
    const [model, strategy] = JSON.parse(pair) as [string, string];
    flag.run(evaluationId, model, strategy);
    drop.run(evaluationId, model, strategy);
    count.run(evaluationId, model, strategy, evaluationId, model, strategy);
  }
}

/** The second pass: each file read again and checked against the first pass's hash, in batches of 200 trajectories. */
function* secondPass(
  checked: readonly CheckedFile[],
  gold: ReadonlyMap<string, GoldCase>,
  runIds: ReadonlyMap<string, number>,
): Generator<{ t: ImportedTrajectory; line: number; text: string; runId: number }[]> {
  for (const c of checked) {
    const runId = runIds.get(c.path)!;
    const problems = new Problems();
    let batch: { t: ImportedTrajectory; line: number; text: string; runId: number }[] = [];
    const pending: (typeof batch)[] = [];
    const sha = readTrajectoryFile(c, gold, problems, (t, line, text) => {
      batch.push({ t, line, text, runId });
      if (batch.length === 200) {
        pending.push(batch);
        batch = [];
      }
    });
    // The file is read to its end before its rows are handed on, so that a file changed since the first pass is
    // refused before any of it is written (its batches are held: one file's trajectories).
    if (problems.any || sha !== c.sha256) throw new ServiceError(`${c.file}: ${FILE_CHANGED}`, undefined, 409);
    if (batch.length) pending.push(batch);
    yield* pending;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Metrics

/** The evaluation's trajectory files as the metrics read them: each run's records, in file order. */
function storedFiles(db: Db, evaluationId: number): TrajectoryFile[] {
  const runs = db
    .select({ id: visibleEvaluationRuns.id, path: visibleEvaluationRuns.path })
    .from(visibleEvaluationRuns)
    .where(eq(visibleEvaluationRuns.evaluationId, evaluationId))
    .orderBy(asc(visibleEvaluationRuns.path))
    .all();
  const records = db.$client
    .prepare("select record from evaluation_trajectories where run_id = ? order by line")
    .pluck();
  return runs.map((r) => ({ path: r.path, text: (records.all(r.id) as string[]).map((l) => l + "\n").join("") }));
}

/** The document `metrics --json` prints, less the software record (which names the version). */
export type MetricsDocument = Pick<MetricsOutput, "mode" | "gold" | "results" | "expert_curve" | "warnings"> & {
  reference_scripts?: Record<string, unknown>;
};

/**
 * Computes the modes asked (both unless told) from the stored runs as `concord metrics` does from the folders, and
 * keeps them for the evaluation's version; a mode not asked keeps its row and version, computed when it is read.
 */
export function refreshMetrics(
  db: Db,
  evaluationId: number,
  modes: readonly MetricsMode[] = ["paper", "reference"],
): void {
  const row = db
    .select({ gold: evaluations.gold, version: evaluations.version })
    .from(evaluations)
    .where(eq(evaluations.id, evaluationId))
    .get();
  if (!row) return;
  const found = groupTrajectoryFiles(storedFiles(db, evaluationId));
  for (const mode of modes) {
    const output =
      mode === "reference"
        ? computeReferenceMetrics(row.gold, found.runs, found.seeds)
        : computePaperMetrics(row.gold, [...found.runs, ...found.seedsOnly]);
    const document: MetricsDocument = {
      mode: output.mode,
      gold: output.gold,
      results: output.results,
      expert_curve: output.expert_curve,
      warnings: output.warnings,
      ...(output.reference_scripts ? { reference_scripts: output.reference_scripts } : {}),
    };
    db.insert(evaluationMetrics)
      .values({ evaluationId, mode, version: row.version, output: document as unknown as Record<string, unknown> })
      .onConflictDoUpdate({
        target: [evaluationMetrics.evaluationId, evaluationMetrics.mode],
        set: { version: row.version, output: document as unknown as Record<string, unknown> },
      })
      .run();
  }
}

/** The evaluation's metrics in a mode, computed again when an import has moved its version since they were kept. */
export function evaluationMetricsOf(db: Db, evaluationId: number, mode: MetricsMode): MetricsDocument {
  const version = db
    .select({ version: evaluations.version })
    .from(evaluations)
    .where(eq(evaluations.id, evaluationId))
    .get()?.version;
  if (version === undefined) throw new ServiceError("No such evaluation.", undefined, 404);
  const kept = () =>
    db
      .select()
      .from(evaluationMetrics)
      .where(and(eq(evaluationMetrics.evaluationId, evaluationId), eq(evaluationMetrics.mode, mode)))
      .get();
  let row = kept();
  if (!row || row.version !== version) {
    // Only the mode read: the page shows one, and each costs a read of every stored run (docs/evaluation.md, "Scale").
    refreshMetrics(db, evaluationId, [mode]);
    row = kept();
  }
  return row!.output as unknown as MetricsDocument;
}

// ---------------------------------------------------------------------------------------------------------------
// The page's server path

/** The folder the page may import from (`CONCORD_RUNS_DIR`), or null when the deployment set none. */
export function runsRoot(): string | null {
  const root = process.env.CONCORD_RUNS_DIR;
  return root && root.trim() !== "" ? resolve(root) : null;
}

/**
 * A path typed on the page, relative to the runs folder: refused when it leaves the folder (`..`, an absolute path
 * elsewhere) or does not exist. Returns the absolute path.
 */
export function pathUnderRuns(root: string, typed: string): string {
  const trimmed = typed.trim();
  if (trimmed === "" || trimmed.includes("\0")) throw new ServiceError("Give a folder under the runs folder.", "path");
  const full = resolve(root, trimmed);
  const rel = relative(root, full);
  if (rel.startsWith("..") || isAbsolute(rel) || rel.split(sep).includes(".."))
    throw new ServiceError(`${trimmed}: not under the runs folder.`, "path");
  if (!existsSync(full)) throw new ServiceError(`${trimmed}: no such file or folder under the runs folder.`, "path");
  return full;
}

/** The studies an evaluation may name (id, name), for the page's choice. */
export function studyChoices(db: Db): { id: number; name: string }[] {
  return db
    .select({ id: visibleStudies.id, name: visibleStudies.name })
    .from(visibleStudies)
    .orderBy(asc(visibleStudies.name))
    .all();
}

/**
 * The page's import (docs/evaluation.md, "Runs in the app"): paths typed relative to the runs folder, checked to stay
 * under it, then `importRunFolders` as the command line runs it — a preview (dry run) or the import. A path that
 * leaves the folder is refused like a bad line, and nothing is written.
 */
export function importFromPage(
  db: Db,
  input: { evaluation: string; runs: string; gold?: string; studyId?: number | null; dryRun: boolean; actor: string },
): RunImportResult {
  const root = runsRoot();
  if (root === null)
    throw new ServiceError(
      "No runs folder is configured (CONCORD_RUNS_DIR): import with `concord eval-import`.",
      "runs",
      409,
    );
  const dirs = input.runs
    .split(/\r?\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => pathUnderRuns(root, p));
  const goldFile = input.gold !== undefined ? pathUnderRuns(root, input.gold) : undefined;
  return importRunFolders(db, {
    evaluation: input.evaluation,
    create: goldFile !== undefined ? { goldFile, studyId: input.studyId ?? null } : undefined,
    dirs,
    dryRun: input.dryRun,
    actor: input.actor,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// A folder uploaded from the browser

/** The files of a run folder an upload keeps; the rest (the step logs of `_tmp/`, anything else) are not written. */
const UPLOADED_FILES = new Set(["trajectories.jsonl", RUN_JSON, TIMING]);
/** The most bytes one uploaded file may have: the import contract's limit for a trajectory file. */
const MAX_UPLOADED_FILE = 4 * 1024 ** 3;

/**
 * Writes one file of a folder uploaded from the evaluation page (its path inside the chosen folder, as the browser's
 * folder choice names it) under the staging folder `staging`, and returns the path written, or null for a file an
 * import does not read. A path with `..`, an absolute path or a file over the contract's size is refused
 * (ServiceError, nothing imported).
 */
export async function stageUploadedFile(
  staging: string,
  name: string,
  data: AsyncIterable<Uint8Array>,
): Promise<string | null> {
  const parts = name.split(/[\\/]/).filter((p) => p !== "" && p !== ".");
  if (parts.length === 0 || parts.some((p) => p === ".." || p.includes("\0")) || isAbsolute(name))
    throw new ServiceError(`${name}: not a file of the chosen folder.`, "files", 400);
  if (!UPLOADED_FILES.has(parts[parts.length - 1]!)) {
    for await (const chunk of data) void chunk; // read past it
    return null;
  }
  if (existsSync(join(staging, ...parts))) throw new ServiceError(`${name}: sent twice.`, "files", 400);
  // Complete or absent (docs/reliability.md, "Atomic files"): a failed upload leaves no half file to import.
  const out = openOutputFile(join(staging, ...parts));
  let bytes = 0;
  try {
    for await (const chunk of data) {
      bytes += chunk.byteLength;
      if (bytes > MAX_UPLOADED_FILE) throw new ServiceError(`${name}: larger than 4 GB.`, "files", 413);
      out.write(chunk);
    }
  } catch (e) {
    out.abort();
    throw e;
  }
  out.commit();
  return parts.join("/");
}

/**
 * The import of a folder uploaded from the evaluation page (docs/evaluation.md, "Runs in the app"): the staged files
 * (`stageUploadedFile`) imported by `importRunFolders` exactly as `eval-import` imports a folder — the same preview,
 * the same refusals, all or nothing — with the refusals naming the files by their path in the chosen folder. The
 * caller removes the staging folder.
 */
export function importStagedFolder(
  db: Db,
  input: { evaluation: string; staging: string; files: string[]; dryRun: boolean; actor: string },
): RunImportResult {
  const tops = [...new Set(input.files.map((f) => f.split("/")[0]!))].sort();
  if (tops.length === 0)
    return {
      problems: ["the chosen folder has no trajectories.jsonl, run.json or timing.json"],
      moreProblems: 0,
      runs: [],
      trajectories: 0,
      evaluationId: null,
      dryRun: input.dryRun,
    };
  const result = importRunFolders(db, {
    evaluation: input.evaluation,
    dirs: tops.map((t) => join(input.staging, t)),
    dryRun: input.dryRun,
    actor: input.actor,
  });
  const prefix = input.staging + sep;
  return { ...result, problems: result.problems.map((p) => p.split(prefix).join("")) };
}
