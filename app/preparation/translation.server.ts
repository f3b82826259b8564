/**
 * The translation of a preparation project (docs/preparation.md, "Translation"): every section of every note with a
 * final text (final-review.server.ts `finalSections`) translated into English with the paper's prompt
 * (domain/translation-prompt.ts), then back into the source language, through an OpenAI-compatible endpoint with the
 * runner's client, retries and progress (app/model-calls/). One code for the command (`prep-translate`) and the job
 * started from the project's page (`runTranslationJob` on a worker thread).
 *
 * Resumable by construction (docs/reliability.md, "Translation runs"): each section's answer is written in its own
 * transaction as it arrives, so a crash loses only the calls in flight; a run does only what is missing — a section
 * with no translation, one whose stored `source_text` is no longer the note's final text (re-translated, its
 * back-translation, scores and correction cleared), one translated but not back-translated. A failed call is recorded
 * on its section (`last_error`, `error_count`) and tried again by the next run. Nothing here logs a note's text.
 */
import { and, asc, eq, isNotNull, isNull, sql } from "drizzle-orm";
import { prepCorrections, prepNoteQuality, prepNotes, prepProjects, prepTranslations } from "../../db/schema";
import { recordEvent } from "../audit/audit.server";
import { CallError, createOpenAiResultEndpoint, type ChatResultEndpoint } from "../model-calls/client";
import { runPool } from "../model-calls/pool";
import type { ProgressSink, ProgressState } from "../model-calls/progress";
import { findProvider, ProviderConfigError, providerConnection } from "../model-calls/providers.server";
import {
  DEFAULT_RETRY_POLICY,
  realRetryDeps,
  RetriesExhausted,
  withRetry,
  type RetryDeps,
  type RetryPolicy,
} from "../model-calls/retry";
import type { Db, DbOrTx } from "../platform/db.server";
import { latestJob, type JobView } from "../platform/jobs.server";
import { ServiceError } from "../platform/service-error";
import { jobProgressSink, startWorkerJob, type JobContext, type JobOutcome } from "../platform/worker-jobs.server";
import { projectFinalSections } from "./final-review.server";
import {
  backTranslationPrompt,
  languageName,
  PAPER_MAX_TOKENS,
  TRANSLATION_TEMPERATURE,
  translationPrompt,
} from "./domain/translation-prompt";

/** One section of a final note as it stands now. */
interface FinalSection {
  noteId: number;
  section: number;
  text: string;
}

/** The project's notes by their final review: the sections of the final ones, and how many are not. */
interface FinalWork {
  notes: number;
  finalNotes: number;
  excluded: number;
  notFinal: number;
  sections: FinalSection[];
}

function finalWorkOf(db: DbOrTx, projectId: number): FinalWork {
  const notes = projectFinalSections(db, projectId);
  const work: FinalWork = { notes: notes.length, finalNotes: 0, excluded: 0, notFinal: 0, sections: [] };
  for (const { noteId, sections } of notes) {
    if (sections === null) work.excluded++;
    else if (sections === "not final") work.notFinal++;
    else {
      work.finalNotes++;
      sections.forEach((s, section) => work.sections.push({ noteId, section, text: s.content }));
    }
  }
  return work;
}

type Row = typeof prepTranslations.$inferSelect;

function rowsOf(db: DbOrTx, projectId: number): Map<string, Row> {
  const rows = db
    .select({ t: prepTranslations })
    .from(prepTranslations)
    .innerJoin(prepNotes, eq(prepNotes.id, prepTranslations.noteId))
    .where(eq(prepNotes.projectId, projectId))
    .all();
  return new Map(rows.map(({ t }) => [`${t.noteId}:${t.section}`, t]));
}

const keyOf = (s: { noteId: number; section: number }) => `${s.noteId}:${s.section}`;
const isEmpty = (text: string) => text.trim() === "";

/** A section's translation is current: its row was translated from the note's final text as it is now. */
const translatedNow = (s: FinalSection, row: Row | undefined) =>
  row !== undefined && row.sourceText === s.text && row.translation !== null;

/** Where a project's translation stands (the project's page; the command's summary). */
export interface TranslationStatus {
  notes: number;
  finalNotes: number;
  excluded: number;
  notFinal: number;
  /** Sections of the final notes. */
  sections: number;
  translated: number;
  backTranslated: number;
  /** Sections translated from a final text that has changed since: re-translated by the next run. */
  changed: number;
  /** Sections whose last call failed (retried by the next run), and the failed calls of all runs. */
  failing: number;
  failedCalls: number;
}

export function translationStatus(db: DbOrTx, projectId: number): TranslationStatus {
  const work = finalWorkOf(db, projectId);
  const rows = rowsOf(db, projectId);
  const status: TranslationStatus = {
    notes: work.notes,
    finalNotes: work.finalNotes,
    excluded: work.excluded,
    notFinal: work.notFinal,
    sections: work.sections.length,
    translated: 0,
    backTranslated: 0,
    changed: 0,
    failing: 0,
    failedCalls: 0,
  };
  for (const s of work.sections) {
    const row = rows.get(keyOf(s));
    if (!row) continue;
    if (row.sourceText !== s.text) status.changed++;
    else if (row.translation !== null) {
      status.translated++;
      if (row.backTranslation !== null) status.backTranslated++;
    }
    if (row.lastError !== null) status.failing++;
    status.failedCalls += row.errorCount;
  }
  return status;
}

/** A section whose last call failed: the note, the section, the reason (codes only) and the failed calls. */
export interface TranslationFailure {
  note: string;
  section: number;
  reason: string;
  errors: number;
}

/** What the project's page shows of its translation: where it stands, the failing sections, the latest job. */
export interface ProjectTranslationView {
  status: TranslationStatus;
  failures: TranslationFailure[];
  moreFailures: number;
  job: { id: number; status: string; done: number; total: number } | null;
}

const FAILURES_SHOWN = 20;

export function projectTranslationView(db: Db, projectId: number): ProjectTranslationView {
  const failing = db
    .select({
      note: prepNotes.externalId,
      section: prepTranslations.section,
      reason: prepTranslations.lastError,
      errors: prepTranslations.errorCount,
    })
    .from(prepTranslations)
    .innerJoin(prepNotes, eq(prepNotes.id, prepTranslations.noteId))
    .where(and(eq(prepNotes.projectId, projectId), isNotNull(prepTranslations.lastError)))
    .orderBy(asc(prepNotes.position), asc(prepTranslations.section))
    .all();
  const job = latestJob(db, `prep_translate:${projectId}`, TRANSLATION_JOB_KIND);
  return {
    status: translationStatus(db, projectId),
    failures: failing.slice(0, FAILURES_SHOWN).map((f) => ({ ...f, reason: f.reason ?? "" })),
    moreFailures: Math.max(0, failing.length - FAILURES_SHOWN),
    job: job ? { id: job.id, status: job.status, done: job.progressDone, total: job.progressTotal } : null,
  };
}

// --- writes: each in its own transaction, each checked against what the run planned on ---------------------------

/**
 * Stores a section's translation of `text`, unless another run stored one of the same text meanwhile. A new source
 * text replaces the row's whole content: its back-translation, scores and correction were of another text.
 */
function storeTranslation(db: Db, s: FinalSection, translation: string, model: string, now: number): boolean {
  return db.transaction(
    (tx) => {
      const row = tx
        .select()
        .from(prepTranslations)
        .where(and(eq(prepTranslations.noteId, s.noteId), eq(prepTranslations.section, s.section)))
        .get();
      if (row && row.sourceText === s.text && row.translation !== null) return false;
      const fresh = {
        sourceText: s.text,
        translation,
        backTranslation: null,
        model,
        translatedAt: now,
        backTranslatedAt: null,
        backModel: "",
        bleu: null,
        chrf: null,
        comet: null,
        correctedText: null,
        correctedBy: null,
        correctedAt: null,
        lastError: null,
      };
      if (row)
        tx.update(prepTranslations)
          .set(fresh)
          .where(and(eq(prepTranslations.noteId, s.noteId), eq(prepTranslations.section, s.section)))
          .run();
      else
        tx.insert(prepTranslations)
          .values({ noteId: s.noteId, section: s.section, ...fresh })
          .run();
      // The note's quality summary was of its earlier translation (docs/preparation.md, "Quality"), and so was its
      // correction: the work item starts again from the new English (its key kept; the version moves on, so a page
      // read before answers 409), never showing the old translation's correction as done ("Correction").
      tx.delete(prepNoteQuality).where(eq(prepNoteQuality.noteId, s.noteId)).run();
      tx.update(prepCorrections)
        .set({ status: "not_started", texts: {}, submittedAt: null, version: sql`${prepCorrections.version} + 1` })
        .where(eq(prepCorrections.noteId, s.noteId))
        .run();
      return true;
    },
    { behavior: "immediate" },
  );
}

/** Stores the back-translation of the row's translation, if the row still holds that translation and has none. */
function storeBackTranslation(
  db: Db,
  row: Pick<Row, "noteId" | "section" | "sourceText" | "translation">,
  back: string,
  model: string,
  now: number,
): boolean {
  const r = db
    .update(prepTranslations)
    .set({ backTranslation: back, backTranslatedAt: now, backModel: model, lastError: null })
    .where(
      and(
        eq(prepTranslations.noteId, row.noteId),
        eq(prepTranslations.section, row.section),
        eq(prepTranslations.sourceText, row.sourceText),
        eq(prepTranslations.translation, row.translation!),
        isNull(prepTranslations.backTranslation),
      ),
    )
    .run();
  return r.changes > 0;
}

/**
 * Records a failed call on its section: the reason (status and error codes only) and one more failed call. A
 * section with no row yet gets one holding the text that was sent and no translation.
 */
function recordFailure(db: Db, s: FinalSection, reason: string, step: "translation" | "back-translation"): void {
  db.transaction(
    (tx) => {
      const where = and(eq(prepTranslations.noteId, s.noteId), eq(prepTranslations.section, s.section));
      const row = tx.select().from(prepTranslations).where(where).get();
      const lastError = `${step}: ${reason}`.slice(0, 500);
      if (!row)
        tx.insert(prepTranslations)
          .values({ noteId: s.noteId, section: s.section, sourceText: s.text, lastError, errorCount: 1 })
          .run();
      else
        tx.update(prepTranslations)
          .set({ lastError, errorCount: sql`${prepTranslations.errorCount} + 1` })
          .where(where)
          .run();
    },
    { behavior: "immediate" },
  );
}

// --- the run --------------------------------------------------------------------------------------------------------

export interface TranslateSpec {
  projectId: number;
  /** The English name of the notes' language, as the prompt says it ("Romanian"). */
  languageName: string;
  endpoint: ChatResultEndpoint;
  /** The model's name as the provider names it: recorded with each section. */
  model: string;
  maxTokens: number;
  concurrency: number;
  backTranslateOnly: boolean;
  retry: RetryPolicy;
}

export interface TranslateHooks {
  /** The progress of one step: "translations" or "back-translations". */
  progress(step: "translations" | "back-translations"): ProgressSink;
  signal?: AbortSignal;
  retryDeps?: RetryDeps;
  now?: () => number;
}

export interface TranslateResult {
  /** complete: nothing is missing; incomplete: some sections failed (the next run tries them); stopped: see message. */
  status: "complete" | "incomplete" | "stopped";
  message: string | null;
  notes: number;
  finalNotes: number;
  excluded: number;
  notFinal: number;
  sections: number;
  /** Sections translated and back-translated by this run (empty sections stored without a call included). */
  translated: number;
  backTranslated: number;
  /** Sections whose call failed in this run. */
  failed: number;
  /** Sections still without a current translation or back-translation when the run ended. */
  missing: number;
  calls: number;
  retries: number;
  /** Answers that stopped at the length limit (finish reason `length`): stored, and worth a look in the report. */
  truncated: number;
}

interface StepCounters {
  calls: number;
  retries: number;
  failures: number;
  truncated: number;
}

/**
 * One step over its sections on `concurrency` slots: each asked with retries, its answer stored as it arrives. A
 * failed section is recorded and the step goes on; an endpoint that cannot serve any request (a `fatal` error) or
 * the signal stops it, the calls in flight settled first.
 */
async function runStep<T extends FinalSection>(
  items: T[],
  state: ProgressState,
  sink: ProgressSink,
  counters: StepCounters,
  spec: TranslateSpec,
  hooks: TranslateHooks,
  ask: (item: T) => string,
  store: (item: T, answer: string) => boolean,
  fail: (item: T, reason: string) => void,
): Promise<{ done: number; failed: number; stopped: string | null }> {
  let done = 0;
  let failed = 0;
  let stopped: string | null = null;
  const deps = hooks.retryDeps ?? realRetryDeps;
  const report = () => {
    Object.assign(state, counters);
    sink.update(state);
  };
  sink.start(state);
  try {
    await runPool(
      items,
      spec.concurrency,
      async (item) => {
        let answer: string;
        try {
          const result = await withRetry(
            () =>
              spec.endpoint.call(
                {
                  messages: [{ role: "user", content: ask(item) }],
                  temperature: TRANSLATION_TEMPERATURE,
                  topP: null,
                  maxTokens: spec.maxTokens,
                  seed: null,
                },
                hooks.signal,
              ),
            spec.retry,
            deps,
            { signal: hooks.signal, onRetry: () => (counters.retries++, report()) },
          );
          // An explicit refusal with no text is no translation: recorded as the section's failure.
          if (result.text.trim() === "") throw new CallError("rejected", "translation model: refused (no text)");
          if (result.finishReason === "length") counters.truncated++;
          answer = result.text;
        } catch (e) {
          if (hooks.signal?.aborted || (e instanceof CallError && e.kind === "aborted")) throw e;
          if (e instanceof CallError && e.kind === "fatal") throw e;
          const reason = e instanceof RetriesExhausted || e instanceof CallError ? e.message : "error";
          fail(item, reason);
          failed++;
          counters.failures++;
          report();
          return;
        }
        counters.calls++;
        if (store(item, answer)) {
          done++;
          state.finished++;
        }
        report();
      },
      () => hooks.signal?.aborted === true,
    );
  } catch (e) {
    if (hooks.signal?.aborted || (e instanceof CallError && e.kind === "aborted")) stopped = "cancelled.";
    else if (e instanceof CallError && e.kind === "fatal") stopped = `${e.message}.`;
    else throw e;
  }
  if (hooks.signal?.aborted) stopped ??= "cancelled.";
  Object.assign(state, counters);
  sink.finish(state);
  return { done, failed, stopped };
}

/**
 * Translates what is missing of the project's final notes, then back-translates what is missing. Returns the counts;
 * never throws for a failed call (recorded on its section), only for a broken database.
 */
export async function translateProject(db: Db, spec: TranslateSpec, hooks: TranslateHooks): Promise<TranslateResult> {
  const now = hooks.now ?? Date.now;
  const counters: StepCounters = { calls: 0, retries: 0, failures: 0, truncated: 0 };
  const work = finalWorkOf(db, spec.projectId);
  const result: TranslateResult = {
    status: "complete",
    message: null,
    notes: work.notes,
    finalNotes: work.finalNotes,
    excluded: work.excluded,
    notFinal: work.notFinal,
    sections: work.sections.length,
    translated: 0,
    backTranslated: 0,
    failed: 0,
    missing: 0,
    calls: 0,
    retries: 0,
    truncated: 0,
  };
  const finish = (stopped: string | null) => {
    result.calls = counters.calls;
    result.retries = counters.retries;
    result.truncated = counters.truncated;
    const rows = rowsOf(db, spec.projectId);
    result.missing = work.sections.filter((s) => {
      const row = rows.get(keyOf(s));
      return !translatedNow(s, row) || row!.backTranslation === null;
    }).length;
    if (stopped) {
      result.status = "stopped";
      result.message = stopped;
    } else result.status = result.missing > 0 ? "incomplete" : "complete";
    return result;
  };

  if (!spec.backTranslateOnly) {
    const rows = rowsOf(db, spec.projectId);
    const todo = work.sections.filter((s) => !translatedNow(s, rows.get(keyOf(s))));
    // An empty section is stored as empty, translated and back-translated, without a call.
    for (const s of todo.filter((x) => isEmpty(x.text))) {
      if (storeTranslation(db, s, s.text, spec.model, now())) {
        storeBackTranslation(db, { ...s, sourceText: s.text, translation: s.text }, s.text, spec.model, now());
        result.translated++;
      }
    }
    const asked = todo.filter((x) => !isEmpty(x.text));
    const state: ProgressState = {
      finished: work.sections.length - asked.length,
      total: work.sections.length,
      unit: "sections",
      ...counters,
    };
    const r = await runStep(
      asked,
      state,
      hooks.progress("translations"),
      counters,
      spec,
      hooks,
      (s) => translationPrompt(spec.languageName, s.text),
      (s, answer) => storeTranslation(db, s, answer, spec.model, now()),
      (s, reason) => recordFailure(db, s, reason, "translation"),
    );
    result.translated += r.done;
    result.failed += r.failed;
    if (r.stopped) return finish(r.stopped);
  }

  // The back-translations: of every current translation that has none, read again after the translations.
  const rows = rowsOf(db, spec.projectId);
  const current = work.sections.map((s) => ({ s, row: rows.get(keyOf(s)) })).filter((x) => translatedNow(x.s, x.row));
  const todo = current.filter((x) => x.row!.backTranslation === null).map((x) => ({ ...x.s, row: x.row! }));
  const state: ProgressState = {
    finished: current.length - todo.length,
    total: work.sections.length,
    unit: "sections",
    ...counters,
  };
  const r = await runStep(
    todo,
    state,
    hooks.progress("back-translations"),
    counters,
    spec,
    hooks,
    (x) => backTranslationPrompt(spec.languageName, x.row.translation!),
    (x, answer) => storeBackTranslation(db, x.row, answer, spec.model, now()),
    (x, reason) => recordFailure(db, x, reason, "back-translation"),
  );
  result.backTranslated += r.done;
  result.failed += r.failed;
  return finish(r.stopped);
}

// --- what the command and the job share ---------------------------------------------------------------------------

export interface TranslationTarget {
  projectId: number;
  project: string;
  languageName: string;
}

/** The project to translate, by id or name: refused (404, 400) when unknown or its language cannot be named. */
export function translationTarget(db: DbOrTx, by: { id: number } | { name: string }): TranslationTarget {
  const p = db
    .select()
    .from(prepProjects)
    .where("id" in by ? eq(prepProjects.id, by.id) : eq(prepProjects.name, by.name))
    .get();
  if (!p)
    throw new ServiceError(
      "id" in by ? "No such preparation project." : `No preparation project "${by.name}".`,
      "project",
      404,
    );
  const name = languageName(p.sourceLanguage);
  if (!name)
    throw new ServiceError(
      `The project's language "${p.sourceLanguage}" is English or not a language the prompt can name: there is nothing to translate.`,
      "project",
      400,
    );
  return { projectId: p.id, project: p.name, languageName: name };
}

/** A configured provider, refused (400) when none has that name or its key cannot be read. */
export function checkTranslationProvider(name: string): void {
  let view;
  try {
    view = findProvider(name);
  } catch (e) {
    if (e instanceof ProviderConfigError) throw new ServiceError(e.message, "provider", 400);
    throw e;
  }
  if (!view) throw new ServiceError(`No provider "${name}" is configured.`, "provider", 400);
  if (!view.keyAvailable)
    throw new ServiceError(`Provider "${name}": its key is not available on the server.`, "provider", 400);
}

/** The endpoint of a configured provider, with the runner's client (its key read now, never kept). */
export function translationEndpoint(
  provider: string,
  timeoutMs: number,
): { endpoint: ChatResultEndpoint; model: string } {
  let c;
  try {
    c = providerConnection(provider);
  } catch (e) {
    if (e instanceof ProviderConfigError) throw new ServiceError(e.message, "provider", 400);
    throw e;
  }
  const endpoint = createOpenAiResultEndpoint({
    baseURL: c.baseURL,
    apiKey: c.apiKey,
    model: c.model,
    timeoutMs,
    maxTokensParam: c.maxTokensParam,
    label: "translation model",
  });
  return { endpoint, model: c.model };
}

/** The audit event of a run's end: its counts, never a note's text. */
export function recordTranslationRun(
  db: Db,
  input: { projectId: number; provider: string; result: TranslateResult; actorId: string | null },
): void {
  const r = input.result;
  recordEvent(db, {
    actorId: input.actorId,
    entity: "prep_project",
    entityId: input.projectId,
    action: "translate",
    changes: {
      provider: input.provider,
      status: r.status,
      translated: r.translated,
      backTranslated: r.backTranslated,
      failed: r.failed,
      missing: r.missing,
      truncated: r.truncated,
      excluded: r.excluded,
      notFinal: r.notFinal,
    },
  });
}

// --- the job started from the project's page ------------------------------------------------------------------------

export const TRANSLATION_JOB_KIND = "prep-translate";

export interface TranslationJobParams {
  projectId: number;
  project: string;
  provider: string;
  backTranslateOnly: boolean;
  maxTokens: number;
  concurrency: number;
}

export const DEFAULT_TRANSLATION_CONCURRENCY = 4;
export { PAPER_MAX_TOKENS };

/** Starts a translation job on a worker thread after the checks its worker makes (project, provider). */
export function startTranslationJob(db: Db, input: { params: TranslationJobParams; actorId: string | null }): number {
  const p = input.params;
  translationTarget(db, { id: p.projectId });
  checkTranslationProvider(p.provider);
  return startWorkerJob(db, {
    kind: TRANSLATION_JOB_KIND,
    subject: `prep_translate:${p.projectId}`,
    params: { ...p },
    worker: "prep-translate",
    actorId: input.actorId,
  });
}

/** The job's work on its worker thread: the same run as the command, its progress written to the job. */
export async function runTranslationJob(db: Db, job: JobView, ctx: JobContext): Promise<JobOutcome> {
  const p = job.params as unknown as TranslationJobParams;
  const target = translationTarget(db, { id: p.projectId });
  const { endpoint, model } = translationEndpoint(p.provider, 300_000);
  const result = await translateProject(
    db,
    {
      projectId: target.projectId,
      languageName: target.languageName,
      endpoint,
      model,
      maxTokens: p.maxTokens,
      concurrency: p.concurrency,
      backTranslateOnly: p.backTranslateOnly,
      retry: DEFAULT_RETRY_POLICY,
    },
    {
      // Each step's state carries the job's counts so far (one set of counters for both steps).
      progress: (step) => jobProgressSink(ctx, step),
      signal: ctx.signal,
    },
  );
  recordTranslationRun(db, { projectId: target.projectId, provider: p.provider, result, actorId: job.createdBy });
  const summary = {
    projectId: target.projectId,
    project: target.project,
    translated: result.translated,
    backTranslated: result.backTranslated,
    failed: result.failed,
    missing: result.missing,
    truncated: result.truncated,
    excluded: result.excluded,
    notFinal: result.notFinal,
  };
  if (result.status === "stopped") return { status: "stopped", message: result.message ?? "", result: summary };
  if (result.status === "incomplete")
    return {
      status: "stopped",
      message: `${result.missing} section${result.missing === 1 ? "" : "s"} failed (${result.failed} this run); their reasons are on the project's page.`,
      result: summary,
    };
  return { status: "done", result: summary };
}
