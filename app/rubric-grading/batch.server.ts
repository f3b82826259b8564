/**
 * Batch mode (docs/rubric-grading.md, "Batch mode"): the pending judge calls written as OpenAI Batch API request
 * files, either submitted to a Batch endpoint (`/v1/files`, `/v1/batches`) and polled, or left for an offline
 * engine that reads the same format (vLLM's `run-batch`); the results ingested as verdicts. A dropped, failed or
 * unreadable result leaves its call pending, for the synchronous fallback (`grade-run --mode sync`).
 * Files are written and read a line at a time, so memory does not grow with the batch. Every long step reports to a
 * progress sink (app/model-calls/progress.ts: a bar on a terminal, a line every 10% otherwise, on stderr).
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { openOutputFile, type OutputFile } from "../platform/output-files.server";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { createReadStream } from "node:fs";
import { and, eq, inArray } from "drizzle-orm";
import { gradingBatches, gradingModels } from "../../db/schema";
import { beginImportRun } from "../platform/import-runs.server";
import { forEachFileLine } from "../platform/line-file.server";
import { ServiceError } from "../platform/service-error";
import type { Db } from "../platform/db.server";
import { CallError, classifyError } from "../model-calls/client";
import { abortableSleep } from "../model-calls/retry";
import { silentProgress, type ProgressSink } from "../model-calls/progress";
import { batchRequestLine, customId, parseBatchOutputLine, parseCustomId } from "./domain/batch";
import type { LineError } from "./domain/eval-set";
import { graderMessages, type GraderText } from "./domain/grader";
import { readVerdict } from "./domain/verdict";
import type { GradingModel } from "./sets.server";
import {
  countPendingGrading,
  createContextLoader,
  pendingGradingPage,
  type GradingItem,
  type Scope,
} from "./work.server";

/** A new progress sink counting `unit` (one per step, so each step has its own bar). */
export type ProgressFactory = (unit: string) => ProgressSink;

const noProgress: ProgressFactory = () => silentProgress;

/** The longest result line read: a judge's answer is capped at a few thousand tokens, far below it. */
export const MAX_RESULT_LINE_BYTES = 4 << 20;

/** The number of non-blank lines of a result file, for a progress total. */
function countLines(path: string): number {
  let n = 0;
  forEachFileLine(path, MAX_RESULT_LINE_BYTES, (l) => {
    if (!("text" in l) || l.text.trim() !== "") n++;
  });
  return n;
}

/** The Batch API's limit per input file. */
export const MAX_REQUESTS_PER_FILE = 50_000;

export interface WrittenFile {
  path: string;
  requests: number;
  batchId: number;
}

/** Writes every pending call of `judge` as request files `requests-NNN.jsonl` in `dir`. */
export function writeBatchRequests(
  db: Db,
  input: {
    setId: number;
    judge: GradingModel;
    scope: Scope;
    dir: string;
    grader: GraderText;
    maxPerFile?: number;
    mode: "api" | "offline";
    now?: number;
    progress?: ProgressFactory;
  },
): WrittenFile[] {
  mkdirSync(input.dir, { recursive: true });
  const progress = (input.progress ?? noProgress)("requests written");
  const state = {
    finished: 0,
    total: countPendingGrading(db, input.judge.id, input.setId, input.scope).pending,
    calls: 0,
    retries: 0,
    failures: 0,
    unit: "requests written",
  };
  progress.start(state);
  const maxPerFile = input.maxPerFile ?? MAX_REQUESTS_PER_FILE;
  const load = createContextLoader(db);
  const files: WrittenFile[] = [];
  let fd: OutputFile | null = null;
  let current: { path: string; requests: number } | null = null;
  const close = () => {
    if (fd === null || !current) return;
    fd.commit();
    const row = db
      .insert(gradingBatches)
      .values({
        judgeId: input.judge.id,
        mode: input.mode,
        status: "written",
        requests: current.requests,
        inputPath: current.path,
        createdAt: input.now ?? Date.now(),
      })
      .returning({ id: gradingBatches.id })
      .get();
    files.push({ ...current, batchId: row.id });
    fd = null;
    current = null;
  };
  let after: GradingItem | null = null;
  for (;;) {
    const page = pendingGradingPage(db, input.judge.id, input.setId, input.scope, after, 4096);
    if (page.length === 0) break;
    after = page[page.length - 1];
    for (const item of page) {
      if (current === null) {
        const path = join(input.dir, `requests-${String(files.length + 1).padStart(3, "0")}.jsonl`);
        fd = openOutputFile(path);
        current = { path, requests: 0 };
      }
      const ctx = load(item);
      const line = batchRequestLine(customId(item.responseId, item.criterionIdx, input.judge.id), {
        model: input.judge.model,
        messages: graderMessages(input.grader, ctx.prompt, ctx.response, ctx),
        temperature: input.judge.temperature,
        maxTokens: input.judge.maxTokens,
        maxTokensParam: input.judge.maxTokensParam,
      });
      fd!.write(line + "\n");
      state.calls = ++state.finished;
      progress.update(state);
      if (++current.requests >= maxPerFile) close();
    }
  }
  close();
  state.total = state.finished;
  progress.finish(state);
  return files;
}

export interface IngestResult {
  /** Lines refused (not a result, another judge's or an unknown call, conflicting duplicates), as FILE:LINE. */
  errors: LineError[];
  /** Lines ignored with a note: a repeat of an earlier line's result for the same call. */
  notes: LineError[];
  lines: number;
  verdicts: number;
  recovered: number;
  /**
   * Calls that got no verdict: for a batch, its requests minus the distinct calls graded from its output (missing
   * from the output, errors, empty or unreadable answers, refused lines); for a file alone, the distinct calls in it
   * without a verdict. They stay pending, for the synchronous fallback or the next batch.
   */
  dropped: number;
  /** Results for calls that already have a verdict (a repeated ingest). */
  already: number;
  /** collectBatches: the output file read, or the Batch API's status of a batch that ended without one. */
  file?: string;
  endedWithout?: string;
}

/** What a result line says about its call, to tell a repeated line from a conflicting one. */
function outcomeOf(parsed: Extract<ReturnType<typeof parseBatchOutputLine>, { customId: string }>): string {
  return parsed.ok ? `answer ${createHash("sha256").update(parsed.text).digest("base64")}` : "no answer";
}

/**
 * Ingests a Batch API / vLLM output file (docs/rubric-grading.md, "Batch mode"). The whole file is checked first,
 * a line at a time: a line that is not a batch result, names another judge's or an unknown call, or gives a call a
 * different answer than an earlier line (both line numbers reported) is refused as FILE:LINE; a line repeating an
 * earlier one's answer is ignored with a note. Every other line is then ingested, so one bad line does not hold
 * back the rest; the refused lines' calls stay pending, for the synchronous fallback or the next batch. The
 * verdicts are written in an import run's short transactions (one ingest at a time per judge), hidden from every
 * reader until the last one, which checks the judge again and marks the batch ingested with its dropped calls
 * (requests minus the distinct calls graded); a failure removes them, a killed ingest's are removed by the next
 * import or start. The caller reports the refused lines and exits 2.
 */
export function ingestBatchOutput(
  db: Db,
  input: {
    judge: GradingModel;
    setId: number;
    path: string;
    via: "batch" | "offline";
    batchId?: number;
    now?: number;
    progress?: ProgressFactory;
    /** For tests and measurements: the chunks' lock budget, and a call after each committed chunk. */
    chunkBudgetMs?: number;
    onChunk?: (done: number) => void;
  },
): IngestResult {
  const result: IngestResult = { errors: [], notes: [], lines: 0, verdicts: 0, recovered: 0, dropped: 0, already: 0 };
  const newProgress = input.progress ?? noProgress;
  const total = input.progress ? countLines(input.path) : 0;
  const checking = newProgress("results checked");
  const checked = { finished: 0, total, calls: 0, retries: 0, failures: 0, unit: "results checked" };
  checking.start(checked);
  const known = db.$client.prepare(
    `SELECT 1 FROM grading_responses r JOIN grading_models m ON m.id = r.candidate_id AND m.set_id = ?
     JOIN grading_criteria c ON c.conversation_id = r.conversation_id AND c.idx = ? WHERE r.id = ?`,
  );
  // The first line of each call and what it says; memory grows with the distinct calls named (at most the judge's
  // calls in the set), not with the file.
  const first = new Map<string, { line: number; outcome: string }>();
  const conflicting = new Set<string>();
  const refuse = (line: number, message: string) => void result.errors.push({ line, message });
  forEachFileLine(input.path, MAX_RESULT_LINE_BYTES, (l) => {
    if ("text" in l && l.text.trim() === "") return;
    result.lines++;
    checked.calls = ++checked.finished;
    checking.update(checked);
    if ("problem" in l) return refuse(l.line, l.problem);
    const parsed = parseBatchOutputLine(l.text);
    if ("invalid" in parsed)
      return refuse(l.line, l.terminated ? parsed.invalid : `${parsed.invalid} (the last line is cut short)`);
    const id = parseCustomId(parsed.customId);
    if (!id) return refuse(l.line, `custom_id "${parsed.customId}" is not a Concord grading call`);
    if (id.judgeId !== input.judge.id) return refuse(l.line, `custom_id "${parsed.customId}" belongs to another judge`);
    if (!known.get(input.setId, id.criterionIndex, id.responseId))
      return refuse(l.line, `custom_id "${parsed.customId}" names no response and criterion of this set`);
    const outcome = outcomeOf(parsed);
    const earlier = first.get(parsed.customId);
    if (!earlier) return void first.set(parsed.customId, { line: l.line, outcome });
    if (earlier.outcome === outcome)
      return void result.notes.push({
        line: l.line,
        message: `custom_id "${parsed.customId}" repeats line ${earlier.line} with the same result; ignored`,
      });
    conflicting.add(parsed.customId);
    refuse(
      l.line,
      `custom_id "${parsed.customId}" has another result at line ${earlier.line}; neither is taken, the call stays pending`,
    );
  });
  checked.failures = result.errors.length;
  checking.finish(checked);
  const ingesting = newProgress("results ingested");
  const ingested = { finished: 0, total: result.lines, calls: 0, retries: 0, failures: 0, unit: "results ingested" };
  ingesting.start(ingested);
  const now = input.now ?? Date.now();
  // Inside a caller's transaction the lock is the caller's: no run, the rows are visible with its commit.
  const run = db.$client.inTransaction
    ? null
    : beginImportRun(db, `grading-judge:${input.judge.id}`, () => null, { chunkBudgetMs: input.chunkBudgetMs }).run;
  const insert = db.$client.prepare(
    `INSERT OR IGNORE INTO grading_verdicts
       (judge_id, response_id, criterion_idx, status, criteria_met, explanation, via, attempts, error, prompt_tokens, completion_tokens, created_at, import_run)
     VALUES (?, ?, ?, ?, ?, ?, ?, 1, NULL, ?, ?, ?, ?)`,
  );
  type Row = {
    id: NonNullable<ReturnType<typeof parseCustomId>>;
    verdict: NonNullable<ReturnType<typeof readVerdict>>;
  };
  type Parsed = Extract<ReturnType<typeof parseBatchOutputLine>, { ok: true }>;
  // Distinct calls of the file given a verdict, now or by an earlier ingest, and without one.
  let graded = 0;
  let ungraded = 0;
  const writeRow = ({ id, verdict, parsed }: Row & { parsed: Parsed }) => {
    const changes = insert.run(
      input.judge.id,
      id.responseId,
      id.criterionIndex,
      verdict.status,
      verdict.criteriaMet ? 1 : 0,
      verdict.explanation,
      input.via,
      parsed.promptTokens,
      parsed.completionTokens,
      now,
      run?.id ?? null,
    ).changes;
    if (changes === 0) result.already++;
    else {
      result.verdicts++;
      if (verdict.status === "recovered") result.recovered++;
    }
  };
  const requests =
    input.batchId === undefined
      ? null
      : (db
          .select({ requests: gradingBatches.requests })
          .from(gradingBatches)
          .where(eq(gradingBatches.id, input.batchId))
          .get()?.requests ?? null);
  const finish = () => {
    result.dropped = requests === null ? ungraded + conflicting.size : Math.max(0, requests - graded);
    if (input.batchId !== undefined) {
      db.update(gradingBatches)
        .set({ status: "ingested", ingested: result.verdicts, dropped: result.dropped, finishedAt: now })
        .where(eq(gradingBatches.id, input.batchId))
        .run();
    }
  };
  // The file is read again batch by batch; each batch is written in the run's short transactions, hidden from every
  // reader (the views of db/schema-visible.ts) until the last one (docs/reliability.md, "Bulk imports").
  let batch: (Row & { parsed: Parsed })[] = [];
  const flush = () => {
    if (run) run.writeInChunks(batch, (_tx, row) => writeRow(row), input.onChunk);
    else batch.forEach(writeRow);
    batch = [];
  };
  const read = () =>
    forEachFileLine(input.path, MAX_RESULT_LINE_BYTES, (l) => {
      if ("text" in l && l.text.trim() === "") return;
      ingested.calls = ++ingested.finished;
      ingesting.update(ingested);
      if (!("text" in l)) return;
      const parsed = parseBatchOutputLine(l.text);
      if ("invalid" in parsed) return;
      // Only the first line of a call that passed the check, and none of a call with conflicting lines.
      if (first.get(parsed.customId)?.line !== l.line || conflicting.has(parsed.customId)) return;
      const id = parseCustomId(parsed.customId)!;
      const verdict = parsed.ok ? readVerdict(parsed.text) : null;
      if (!parsed.ok || !verdict) return void ungraded++;
      graded++;
      batch.push({ id, verdict, parsed });
      if (batch.length >= INGEST_BATCH) flush();
    });
  try {
    if (!run) {
      db.$client.transaction(() => {
        read();
        flush();
        finish();
      })();
      return result;
    }
    try {
      read();
      flush();
      run.finish((tx) => {
        // The guard, in the transaction that makes the verdicts visible: the judge is still a judge of this set.
        const judge = tx.select().from(gradingModels).where(eq(gradingModels.id, input.judge.id)).get();
        if (!judge || judge.setId !== input.setId) throw new ServiceError("The judge was removed during the ingest.");
        finish();
        return { result: null, commit: true };
      });
    } catch (error) {
      run.abandon();
      throw error;
    }
  } finally {
    ingesting.finish(ingested);
  }
  return result;
}

/** Results read (outside the lock) before they are written in the run's short transactions. */
const INGEST_BATCH = 2000;

export interface BatchApiOptions {
  baseURL: string;
  apiKey: string;
  pollMs: number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** One sink per step: uploading the request files, then waiting for and ingesting the batches. */
  progress: ProgressFactory;
}

const TERMINAL = new Set(["completed", "failed", "expired", "cancelled"]);

function client(options: BatchApiOptions): OpenAI {
  return new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, maxRetries: 2, timeout: options.timeoutMs });
}

async function api<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    throw classifyError(e, what);
  }
}

/** Uploads the written files and creates one batch per file. */
export async function submitBatches(db: Db, files: WrittenFile[], options: BatchApiOptions): Promise<void> {
  const openai = client(options);
  const progress = options.progress("batch files submitted");
  const state = { finished: 0, total: files.length, calls: 0, retries: 0, failures: 0, unit: "batch files submitted" };
  progress.start(state);
  try {
    await submitEach(db, openai, files, () => {
      state.finished++;
      state.calls += 2;
      progress.update(state);
    });
  } finally {
    progress.finish(state);
  }
}

async function submitEach(db: Db, openai: OpenAI, files: WrittenFile[], submitted: () => void): Promise<void> {
  for (const f of files) {
    const uploaded = await api("batch upload", async () =>
      openai.files.create({ file: await toFile(createReadStream(f.path), "requests.jsonl"), purpose: "batch" }),
    );
    const batch = await api("batch create", () =>
      openai.batches.create({ input_file_id: uploaded.id, endpoint: "/v1/chat/completions", completion_window: "24h" }),
    );
    db.update(gradingBatches)
      .set({ status: "submitted", remoteFileId: uploaded.id, remoteBatchId: batch.id })
      .where(eq(gradingBatches.id, f.batchId))
      .run();
    submitted();
  }
}

export function openBatches(db: Db, judgeId: number) {
  return db
    .select()
    .from(gradingBatches)
    .where(
      and(
        eq(gradingBatches.judgeId, judgeId),
        eq(gradingBatches.mode, "api"),
        inArray(gradingBatches.status, ["submitted"]),
      ),
    )
    .all();
}

/**
 * Polls every submitted batch of the judge until it ends, then downloads and ingests its output; its requests
 * without a verdict (in the error file, missing, refused) are its dropped calls. A batch that failed, expired or was
 * cancelled without output is marked failed with every request dropped. Either way the batch is closed, and its
 * calls without a verdict stay pending, for the synchronous fallback or the next run's batch. The progress
 * counts requests: those of the batches already collected plus what the Batch API reports done of the current one
 * (`request_counts`).
 */
export async function collectBatches(
  db: Db,
  input: { judge: GradingModel; setId: number; dir: string },
  options: BatchApiOptions,
): Promise<IngestResult[]> {
  const openai = client(options);
  const results: IngestResult[] = [];
  const pending = openBatches(db, input.judge.id);
  const unit = "batch requests done";
  const state = {
    finished: 0,
    total: pending.reduce((n, b) => n + b.requests, 0),
    calls: 0,
    retries: 0,
    failures: 0,
    unit,
  };
  const progress = options.progress(unit);
  progress.start(state);
  let collected = 0;
  const report = (batch: { request_counts?: { completed: number; failed: number } | null }, requests: number) => {
    const done = batch.request_counts ? batch.request_counts.completed + batch.request_counts.failed : 0;
    state.finished = collected + Math.min(requests, done);
    state.failures = batch.request_counts?.failed ?? 0;
    state.calls = state.finished;
    progress.update(state);
  };
  try {
    for (const b of pending) {
      let batch = await api("batch status", () => openai.batches.retrieve(b.remoteBatchId!));
      report(batch, b.requests);
      while (!TERMINAL.has(batch.status)) {
        if (options.signal?.aborted) throw new CallError("aborted", "aborted");
        await abortableSleep(options.pollMs, options.signal);
        batch = await api("batch status", () => openai.batches.retrieve(b.remoteBatchId!));
        report(batch, b.requests);
      }
      collected += b.requests;
      if (!batch.output_file_id) {
        // Failed, expired or cancelled without any output: every request of the batch is dropped, and pending.
        db.update(gradingBatches)
          .set({ status: "failed", dropped: b.requests, finishedAt: Date.now() })
          .where(eq(gradingBatches.id, b.id))
          .run();
        results.push({
          errors: [],
          notes: [],
          lines: 0,
          verdicts: 0,
          recovered: 0,
          dropped: b.requests,
          already: 0,
          endedWithout: batch.status,
        });
        state.finished = collected;
        progress.update(state);
        continue;
      }
      const response = await api("batch download", () => openai.files.content(batch.output_file_id!));
      const path = join(input.dir, `output-${b.id}.jsonl`);
      mkdirSync(input.dir, { recursive: true });
      // Through the output layer: the output file is complete or absent (docs/reliability.md, "Atomic files").
      const out = openOutputFile(path);
      try {
        const reader = response.body!.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          out.write(value);
        }
        out.commit();
      } catch (e) {
        out.abort();
        throw e;
      }
      // The valid lines are ingested and the batch is closed even when some lines are refused (reported by the
      // caller as FILE:LINE): its calls without a verdict stay pending, for the fallback or the next batch.
      const ingested = {
        ...ingestBatchOutput(db, {
          judge: input.judge,
          setId: input.setId,
          path,
          via: "batch",
          batchId: b.id,
          progress: options.progress,
        }),
        file: path,
      };
      results.push(ingested);
      state.finished = collected;
      progress.update(state);
    }
  } finally {
    progress.finish(state);
  }
  return results;
}
