/** Bradley–Terry label fits of a bank's submitted ratings (docs/mentat.md#preference-labels). */
import { and, desc, eq } from "drizzle-orm";
import { z } from "zod";
import { mentatFits, mentatReleaseRatings, users } from "../../db/schema";
import { visibleMentatBanks, visibleMentatQuestions, visibleMentatRatings } from "../../db/schema-visible";
import {
  CURRENT_MENTAT_FIT,
  fitPreferenceLabels,
  HBT_DEFAULTS,
  MENTAT_FIT_VERSION_NAMES,
  MENTAT_FIT_VERSIONS,
  type AnnotationRow,
  type MentatFitVersion,
  type PreferenceLabels,
  type RaterEffects,
} from "./domain/bradley-terry";
import { OPTION_COUNT, type MentatDomain } from "../expert-panel/domain/expert-scales";
import { annotationRowsHash, optionAgreement, type QuestionAgreement } from "./domain/mentat";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { writeTransaction } from "../work-items/engine.server";
import { ServiceError } from "../platform/service-error";
import { domainsOf } from "./banks.server";
import { RELEASE_RATER_PREFIX } from "./mentat-release.server";
import { FitCancelled, fitPreferenceLabelsInWorkers } from "./parallel-fit.server";
import {
  createJob,
  endJob,
  getJob,
  latestJob,
  markJobRunning,
  reportJobProgress,
  type JobView,
} from "../platform/jobs.server";

/** The submitted ratings of a bank's preference-domain questions, as annotation rows (question id, username, scores a–e). */
export function bankAnnotationRows(db: DbOrTx, bankId: number): AnnotationRow[] {
  const bank = db.select().from(visibleMentatBanks).where(eq(visibleMentatBanks.id, bankId)).get();
  if (!bank) return [];
  const domains = domainsOf(bank.preferenceDomains);
  return db
    .select({
      question: visibleMentatQuestions.externalId,
      domain: visibleMentatQuestions.domain,
      rater: users.username,
      scores: visibleMentatRatings.scores,
    })
    .from(visibleMentatRatings)
    .innerJoin(visibleMentatQuestions, eq(visibleMentatQuestions.id, visibleMentatRatings.questionId))
    .innerJoin(users, eq(users.id, visibleMentatRatings.raterId))
    .where(and(eq(visibleMentatQuestions.bankId, bankId), eq(visibleMentatRatings.status, "submitted")))
    .all()
    .filter((r) => domains.includes(r.domain as MentatDomain))
    .map((r): AnnotationRow => ({ question: r.question, rater: r.rater, scores: r.scores as number[] }))
    .concat(releaseAnnotationRows(db, bankId, domains));
}

/**
 * The bank's imported MENTAT release (mentat-release.server.ts): every row as MENTAT's pipeline keeps it, raters
 * prefixed `mentat:` so they stay apart from the bank's experts (docs/mentat.md, "MENTAT's released annotations").
 */
function releaseAnnotationRows(db: DbOrTx, bankId: number, domains: readonly string[]): AnnotationRow[] {
  return db
    .select({
      question: visibleMentatQuestions.externalId,
      domain: visibleMentatQuestions.domain,
      rater: mentatReleaseRatings.rater,
      scores: mentatReleaseRatings.scores,
    })
    .from(mentatReleaseRatings)
    .innerJoin(visibleMentatQuestions, eq(visibleMentatQuestions.id, mentatReleaseRatings.questionId))
    .where(eq(mentatReleaseRatings.bankId, bankId))
    .orderBy(mentatReleaseRatings.id)
    .all()
    .filter((r) => domains.includes(r.domain))
    .map((r) => ({ question: r.question, rater: `${RELEASE_RATER_PREFIX}${r.rater}`, scores: r.scores }));
}

export interface FitOptions {
  /** The version of MENTAT's fit whose penalty, slope bounds and replicate count apply (docs/mentat.md). */
  fitVersion?: MentatFitVersion;
  raterEffects?: RaterEffects;
  penalty?: number;
  slopeBounds?: [number, number];
  strengthPenalty?: number;
  bootstrap?: number;
  seed?: number;
}

export interface MentatFitResult {
  labels: PreferenceLabels;
  agreement: QuestionAgreement[];
  nRows: number;
}

export interface FitSummary {
  id: number;
  createdAt: number;
  params: Required<FitOptions>;
  inputHash: string;
  /** True when the submitted ratings differ from those the fit used. */
  stale: boolean;
  result: MentatFitResult;
}

/** "LO,HI" (the command line) or [LO, HI]: slope bounds with LO ≤ 1 ≤ HI, both positive. */
const SlopeBoundsSchema = z.preprocess(
  (v) => (typeof v === "string" ? v.split(",").map((x) => (x.trim() === "" ? NaN : Number(x))) : v),
  z
    .tuple([z.number().finite(), z.number().finite()], { message: "expected LO,HI" })
    .refine(([lo, hi]) => lo > 0 && lo <= 1 && hi >= 1 && hi <= 100, {
      message: "expected LO,HI with 0 < LO ≤ 1 ≤ HI ≤ 100",
    }),
);

/**
 * The fit's options; what is not given comes from the version of MENTAT's fit (default its current one,
 * MENTAT_FIT_VERSIONS in domain/bradley-terry.ts): penalty, slope bounds and the number of bootstrap refits.
 */
export const FitOptionsSchema = z
  .object({
    fitVersion: z.enum(MENTAT_FIT_VERSION_NAMES).default(CURRENT_MENTAT_FIT),
    raterEffects: z.enum(["none", "slope", "slope+offset"]).default(HBT_DEFAULTS.raterEffects),
    penalty: z.coerce.number().min(0).max(1000).optional(),
    slopeBounds: SlopeBoundsSchema.optional(),
    strengthPenalty: z.coerce.number().min(0).max(1000).default(HBT_DEFAULTS.strengthPenalty),
    bootstrap: z.coerce.number().int().min(0).max(10_000).optional(),
    seed: z.coerce
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1)
      .default(0),
  })
  .transform((o): Required<FitOptions> => {
    const version = MENTAT_FIT_VERSIONS[o.fitVersion];
    return {
      ...o,
      penalty: o.penalty ?? version.penalty,
      slopeBounds: o.slopeBounds ?? [version.slopeBounds[0], version.slopeBounds[1]],
      bootstrap: o.bootstrap ?? version.bootstrap,
    };
  });

/**
 * Fits preference labels to the bank's submitted ratings (domain/bradley-terry fitPreferenceLabels) with
 * Krippendorff's α per question, and stores the fit, on the calling thread. Kept for tests and small banks; pages
 * start startBankFitJob and the command line awaits runBankFitInWorkers, which give the same numbers off this thread.
 */
export function runBankFit(
  db: Db,
  input: {
    bankId: number;
    options?: FitOptions;
    actorId: string | null;
    now?: number;
  },
): FitSummary {
  const params = FitOptionsSchema.parse(input.options ?? {});
  const rows = fitRowsOrRefuse(db, input.bankId);
  const labels = fitPreferenceLabels(rows, OPTION_COUNT, params);
  return storeBankFit(db, { bankId: input.bankId, rows, params, labels, actorId: input.actorId, now: input.now });
}

/** The same fit on a pool of worker threads (parallel-fit.server.ts), for the command line. */
export async function runBankFitInWorkers(
  db: Db,
  input: {
    bankId: number;
    options?: FitOptions;
    actorId: string | null;
    workers?: number;
    onReplicate?: (done: number, total: number) => void;
  },
): Promise<FitSummary> {
  const params = FitOptionsSchema.parse(input.options ?? {});
  const rows = fitRowsOrRefuse(db, input.bankId);
  const labels = await fitPreferenceLabelsInWorkers(rows, OPTION_COUNT, params, {
    workers: input.workers,
    onReplicate: input.onReplicate,
  });
  return storeBankFit(db, { bankId: input.bankId, rows, params, labels, actorId: input.actorId });
}

function fitRowsOrRefuse(db: DbOrTx, bankId: number): AnnotationRow[] {
  const rows = bankAnnotationRows(db, bankId);
  if (rows.length === 0) throw new ServiceError("No submitted ratings yet: there is nothing to fit.", "fit", 409);
  return rows;
}

/** Stores a fit of `rows` (its input hash, Krippendorff's α per question) with its audit event; job optional. */
function storeBankFit(
  db: Db,
  input: {
    bankId: number;
    rows: AnnotationRow[];
    params: Required<FitOptions>;
    labels: PreferenceLabels;
    actorId: string | null;
    now?: number;
    jobId?: number;
  },
): FitSummary {
  const { rows, params } = input;
  const result: MentatFitResult = { labels: input.labels, agreement: optionAgreement(rows), nRows: rows.length };
  const inputHash = annotationRowsHash(rows);
  const now = input.now ?? Date.now();
  const id = writeTransaction(db, (tx) => {
    const id = tx
      .insert(mentatFits)
      .values({
        bankId: input.bankId,
        params,
        inputHash,
        result,
        createdAt: now,
        createdBy: input.actorId,
      })
      .returning({ id: mentatFits.id })
      .get().id;
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "mentat_fit",
      entityId: id,
      action: "fit",
      changes: { bankId: input.bankId, rows: rows.length, inputHash, ...params },
      at: now,
    });
    // The fit and the end of its job are one write: a job is never "done" without its fit, nor a fit orphaned.
    if (input.jobId !== undefined) endJob(tx, input.jobId, { status: "done", result: { fitId: id } }, now);
    return id;
  });
  return { id, createdAt: now, params, inputHash, stale: false, result };
}

export const FIT_JOB_KIND = "mentat-fit";
const fitSubject = (bankId: number) => `mentat_bank:${bankId}`;

/** What the bank page shows of its latest fit job. */
export interface FitJobView {
  id: number;
  status: JobView["status"];
  done: number;
  total: number;
  error: string | null;
  fitId: number | null;
  startedBy: string | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

function fitJobView(job: JobView): FitJobView {
  return {
    id: job.id,
    status: job.status,
    done: job.progressDone,
    total: job.progressTotal,
    error: job.error,
    fitId: typeof job.result?.fitId === "number" ? job.result.fitId : null,
    startedBy: job.createdBy,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
  };
}

export function latestFitJob(db: DbOrTx, bankId: number): FitJobView | null {
  const job = latestJob(db, fitSubject(bankId), FIT_JOB_KIND);
  return job && fitJobView(job);
}

/** The running fits of this process: their cancel switches and the promise that settles when each has ended. */
const runningFits = new Map<number, { controller: AbortController; ended: Promise<void> }>();

/**
 * Starts the bank's fit as a background job and returns at once (docs/mentat.md, "Fits in the background"): the
 * refits run on worker threads, the job's progress counts refits, and the fit is stored as runBankFit stores it.
 * Refused (409) while a fit of the same bank is queued or running, and when there is nothing to fit.
 */
export function startBankFitJob(
  db: Db,
  input: { bankId: number; options?: FitOptions; actorId: string | null; workers?: number; now?: number },
): FitJobView {
  const params = FitOptionsSchema.parse(input.options ?? {});
  const now = input.now ?? Date.now();
  const { jobId, rows } = writeTransaction(db, (tx) => {
    const rows = fitRowsOrRefuse(tx, input.bankId);
    const jobId = createJob(tx, {
      kind: FIT_JOB_KIND,
      subject: fitSubject(input.bankId),
      params: { bankId: input.bankId, ...params },
      total: params.bootstrap,
      actorId: input.actorId,
      now,
    });
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "job",
      entityId: jobId,
      action: "start",
      changes: { kind: FIT_JOB_KIND, bankId: input.bankId, rows: rows.length, ...params },
      at: now,
    });
    return { jobId, rows };
  });
  const controller = new AbortController();
  const ended = runFitJob(db, { ...input, jobId, rows, params, signal: controller.signal }).finally(() =>
    runningFits.delete(jobId),
  );
  runningFits.set(jobId, { controller, ended });
  return fitJobView(getJob(db, jobId)!);
}

async function runFitJob(
  db: Db,
  input: {
    bankId: number;
    jobId: number;
    rows: AnnotationRow[];
    params: Required<FitOptions>;
    actorId: string | null;
    workers?: number;
    signal: AbortSignal;
  },
): Promise<void> {
  const { jobId } = input;
  try {
    markJobRunning(db, jobId);
    let reported = 0;
    const labels = await fitPreferenceLabelsInWorkers(input.rows, OPTION_COUNT, input.params, {
      workers: input.workers,
      signal: input.signal,
      onReplicate: (done, total) => {
        // At most about a hundred progress writes per fit, and always the last.
        if (done === total || done - reported >= Math.max(1, Math.floor(total / 100))) {
          reported = done;
          reportJobProgress(db, jobId, done, total);
        }
      },
    });
    storeBankFit(db, { ...input, labels, jobId });
  } catch (e) {
    const cancelled = e instanceof FitCancelled;
    try {
      endJob(db, jobId, {
        status: cancelled ? "cancelled" : "failed",
        error: cancelled
          ? "Cancelled before it finished; nothing was saved."
          : `The fit failed: ${e instanceof Error ? e.message : String(e)}`,
      });
    } catch {
      // The database refused even this: the next server start marks the job interrupted.
    }
  }
}

/** Cancels a running fit of the bank (its workers are stopped, nothing is saved). Refused (409) when none runs. */
export async function cancelBankFitJob(db: Db, input: { bankId: number; actorId: string | null }): Promise<void> {
  const job = latestFitJob(db, input.bankId);
  const running = job && runningFits.get(job.id);
  if (!job || !running || (job.status !== "running" && job.status !== "queued"))
    throw new ServiceError("No fit of this bank is running.", "job", 409);
  running.controller.abort();
  await running.ended;
  recordEvent(db, { actorId: input.actorId, entity: "job", entityId: job.id, action: "cancel", changes: {} });
}

/** Resolves when the job started by startBankFitJob has ended (done, failed or cancelled); for tests and the bench. */
export function fitJobEnded(jobId: number): Promise<void> {
  return runningFits.get(jobId)?.ended ?? Promise.resolve();
}

export function getLatestFit(db: Db, bankId: number): FitSummary | null {
  const row = db.select().from(mentatFits).where(eq(mentatFits.bankId, bankId)).orderBy(desc(mentatFits.id)).get();
  if (!row) return null;
  const result = row.result as MentatFitResult;
  const stored = row.params as Partial<FitOptions>;
  return {
    id: row.id,
    createdAt: row.createdAt,
    // Fits stored before the version was recorded used MENTAT's first version's bounds (docs/mentat.md,
    // "Versions of MENTAT's fit").
    params: {
      ...stored,
      fitVersion: stored.fitVersion ?? "2025-01-19",
      slopeBounds: stored.slopeBounds ?? result.labels.options.slopeBounds,
    } as Required<FitOptions>,
    inputHash: row.inputHash,
    stale: annotationRowsHash(bankAnnotationRows(db, bankId)) !== row.inputHash,
    result,
  };
}
