/** Judge validation: the import of model responses into a validation set, and the list of past imports. Admin only. */
import { decodeUtf8 } from "../formats/strict-text";
import { createHash } from "node:crypto";
import { and, asc, count, eq, max, type InferInsertModel } from "drizzle-orm";
import { judgeItems, judgeResponseImports, judgeResponses, judgeSets, users } from "../../db/schema";
import { visibleJudgeResponseImports, visibleJudgeResponses, visibleJudgeSets } from "../../db/schema-visible";
import {
  type ParsedResponse,
  type ParsedResponses,
  parseResponsesJsonl,
  type ResponseFormat,
  responseIdentity,
  responseKey,
  responseRecords,
  type RunSource,
} from "./domain/judge-import";
import { DEFAULT_BUCKET_TARGETS, DEFAULT_VALIDATION_SEED, firstParse } from "./domain/validation-set";
import type { Db, DbOrTx, Tx } from "../platform/db.server";
import { beginImportRun, cleanAbandonedRuns } from "../platform/import-runs.server";
import { ServiceError } from "../platform/service-error";
import { cleanHiddenParents, importBehindHiddenParent, type HiddenParent } from "../platform/hidden-parents.server";
import { recordEvent } from "../audit/audit.server";
import { FILE_CHANGED_MESSAGE, FileChangedError, secondPass, type ImportSource } from "../formats/import-source";
import { discardDraw } from "./judge-sample.server";
import { JudgeSetNameSchema } from "./judge-sets.server";

export type ResponsesFile = {
  filename: string;
  /** For a trajectories.jsonl: the run folder it came from (docs/formats.md#run-folders). */
  source?: RunSource;
} & (
  | { bytes: Uint8Array }
  /**
   * The command line's stream of the file (`importFileSource`): read line by line, never held whole
   * (docs/reliability.md, "Memory bounded by the longest line"); its sha256 is the one its read computed.
   */
  | { stream: ImportSource }
);

export interface ResponsesImportInput {
  setName: string;
  /** One file, or every trajectories.jsonl of a runs/ folder in the reference's (sorted) order. */
  files: ResponsesFile[];
  format?: ResponseFormat;
}

export interface ResponsesImportPlan {
  ok: boolean;
  setName: string;
  setExists: boolean;
  /** Each file's validation, in order; a caller lists `errors` as "file:line: message". */
  files: { filename: string; parse: ParsedResponses }[];
  /** A refusal of the whole import (set not drafting, same file imported before); null when none. */
  refusal: string | null;
  /** True when importing would discard the set's current (unrated) sample. */
  discardsDraw: boolean;
  /** Responses the import adds. */
  total: number;
}

const sha256Of = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** A file's sha256: of its bytes, or as its stream's last read computed it (after the file was parsed). */
function fileSha(file: ResponsesFile): string {
  if ("bytes" in file) return sha256Of(file.bytes);
  const sha = file.stream.sha256();
  if (sha === null) throw new Error(`${file.filename}: hashed before it was read`);
  return sha;
}
const when = (at: number) => new Date(at).toISOString().slice(0, 16).replace("T", " ") + " UTC";

function planWithin(db: DbOrTx, input: ResponsesImportInput, keepStreamed = false): ResponsesImportPlan {
  const name = JudgeSetNameSchema.parse(input.setName);
  // eslint-disable-next-line concord/visible-rows -- a set another import is still writing is refused by name
  const set = db.select().from(judgeSets).where(eq(judgeSets.name, name)).get();
  const base = { setName: name, setExists: Boolean(set), discardsDraw: false, total: 0 };
  const refuse = (refusal: string): ResponsesImportPlan => ({ ...base, ok: false, files: [], refusal });
  if (input.files.length === 0) return refuse("No file to import.");
  if (set?.importRun)
    return refuse(`Another import is still writing the new set "${name}". Wait for it to finish, then import again.`);
  if (set && set.status !== "drafting")
    return refuse(`Rating has started on "${name}": responses can no longer be added (the sample is frozen).`);
  // Each file is parsed first (a stream is hashed as it is read), then the hashes compared.
  const parsed = parseFiles(db, set?.id ?? null, input, keepStreamed);
  // A stream whose parse stopped early (a file of no known format) was not read to its end: its errors stand alone.
  if (input.files.some((f) => "stream" in f && f.stream.sha256() === null))
    return { ...base, ok: false, files: parsed, refusal: null };
  const hashes = input.files.map(fileSha);
  for (const [i, f] of input.files.entries()) {
    const j = hashes.indexOf(hashes[i]);
    if (j !== i)
      return refuse(`${f.filename} has the same content as ${input.files[j].filename}: nothing was imported.`);
    const before = set
      ? db
          .select({ at: visibleJudgeResponseImports.importedAt, filename: visibleJudgeResponseImports.filename })
          .from(visibleJudgeResponseImports)
          .where(and(eq(visibleJudgeResponseImports.setId, set.id), eq(visibleJudgeResponseImports.sha256, hashes[i])))
          .get()
      : undefined;
    if (before)
      return refuse(
        `${f.filename} was already imported into "${name}" (as ${before.filename}, ${when(
          before.at,
        )}): nothing was imported.`,
      );
  }
  const files = parsed;
  const ok = files.every((f) => f.parse.errors.length === 0);
  const drawn = set
    ? Boolean(db.select({ id: judgeItems.id }).from(judgeItems).where(eq(judgeItems.setId, set.id)).get())
    : false;
  return {
    ...base,
    ok,
    files,
    refusal: null,
    discardsDraw: ok && drawn,
    total: ok ? files.reduce((s, f) => s + f.parse.count, 0) : 0,
  };
}

/** Each file parsed in order, against the responses already in the set and those of the files before it. */
function parseFiles(
  db: DbOrTx,
  setId: number | null,
  input: ResponsesImportInput,
  keepStreamed: boolean,
): { filename: string; parse: ParsedResponses }[] {
  const existing = new Set(
    setId !== null
      ? db
          .select({
            sourceRun: visibleJudgeResponses.sourceRun,
            model: visibleJudgeResponses.model,
            strategy: visibleJudgeResponses.strategy,
            sampleId: visibleJudgeResponses.sampleId,
            stepIndex: visibleJudgeResponses.stepIndex,
          })
          .from(visibleJudgeResponses)
          .where(eq(visibleJudgeResponses.setId, setId))
          .all()
          .map(responseIdentity)
      : [],
  );
  let format = input.format;
  return input.files.map((f) => {
    const decoded = "bytes" in f ? decodeUtf8(f.bytes) : { text: f.stream };
    // A streamed file is a first pass unless `keepStreamed`: its responses are read again as they are written.
    const keep = "bytes" in f || keepStreamed;
    const parse: ParsedResponses =
      "error" in decoded
        ? { format: format ?? null, responses: [], count: 0, keys: [], errors: [decoded.error], warnings: [] }
        : parseResponsesJsonl(decoded.text, { format, source: f.source, existing, keep });
    // Responses of earlier files count as existing for later ones; every file of one import has one format.
    for (const r of parse.responses) existing.add(responseIdentity(r));
    for (const k of parse.keys) existing.add(k.key);
    format ??= parse.format ?? undefined;
    return { filename: f.filename, parse };
  });
}

/** Validates responses files against the set without writing anything. */
export function planResponsesImport(db: Db, input: ResponsesImportInput): ResponsesImportPlan {
  return planWithin(db, input);
}

/**
 * Imports responses files into a set (created if new), all or nothing: every file is validated first
 * (parseResponsesJsonl) and a single bad line writes nothing; a big new set and every existing set are written in
 * short transactions that readers see only once complete, a small new set in one IMMEDIATE transaction. Responses keep the files' order after
 * those already in the set: that is the input order of the draw. Importing into a set with a drawn (unrated) sample
 * discards that sample: it must be drawn again over the new pool.
 */
export function importResponses(
  db: Db,
  input: ResponsesImportInput & { actorId: string | null; now?: number },
  /** For tests and the bench: the chunks' lock budget, and a call after each committed chunk. */
  opts: { chunkBudgetMs?: number; onChunk?: (done: number) => void } = {},
): ResponsesImportResult {
  const now = input.now ?? Date.now();
  // Inside a caller's transaction (the demo seed) the lock is the caller's: one transaction, as below.
  if (!db.$client.inTransaction) {
    cleanAbandonedRuns(db);
    cleanHiddenParents(db, [JUDGE_SET_PARENT]);
    // Parsed and checked before any lock; a big file into a new set is then written in short transactions.
    const plan = planWithin(db, input);
    if (!plan.ok) return { ...plan, written: 0, setId: null };
    if (!plan.setExists && plan.total >= CHUNKED_FROM) {
      const chunked = importIntoNewSet(db, input, plan, now, opts);
      if (chunked) return chunked;
    }
    if (plan.setExists) {
      const chunked = importIntoExistingSet(db, input, plan, now, opts);
      if (chunked) return chunked;
    }
  }
  return importInOneTransaction(db, input, now);
}

type ResponsesImportResult = ResponsesImportPlan & { written: number; setId: number | null };

/**
 * From this many responses, an import that creates its set writes them in short transactions behind the set's
 * `import_run` (docs/reliability.md, "Bulk imports"): measured, 20,000 responses held the write lock for 1.2 s in one
 * transaction. Below it, one IMMEDIATE transaction; into an existing set, always the import run's short transactions.
 */
const CHUNKED_FROM = 1000;

/**
 * A new set's responses in short IMMEDIATE transactions: the set is created hidden (its `import_run` set, so no reader
 * lists or opens it) with its file rows, the responses follow in chunks, and the last transaction checks that the set
 * is still this import's, records the audit events and clears `import_run`, making the whole set visible at once. A
 * failure removes what was written; a kill leaves a hidden set that the next import or start removes
 * (`cleanHiddenParents`). Null when the set was created meanwhile by someone else: the caller then imports in
 * one transaction, which checks everything again.
 */
function importIntoNewSet(
  db: Db,
  input: ResponsesImportInput & { actorId: string | null },
  plan: ResponsesImportPlan,
  now: number,
  opts: { chunkBudgetMs?: number; onChunk?: (done: number) => void },
): ResponsesImportResult | null {
  const outcome = importBehindHiddenParent(db, JUDGE_SET_PARENT, {
    target: `judge-set:${plan.setName}`,
    create: (tx, runId) => {
      // eslint-disable-next-line concord/visible-rows -- a hidden set of that name is taken too
      if (tx.select({ id: judgeSets.id }).from(judgeSets).where(eq(judgeSets.name, plan.setName)).get()) return null;
      const set = tx
        .insert(judgeSets)
        .values({ ...newSet(plan.setName, input.actorId, now), importRun: runId })
        .returning({ id: judgeSets.id })
        .get();
      const importIds = plan.files.map((file, i) =>
        insertFileRow(tx, set.id, file, fileSha(input.files[i]!), input, now),
      );
      return { id: set.id, importIds };
    },
    rows: function* ({ id, importIds }) {
      let position = 0;
      for (const [i, batch] of responseBatches(input, plan))
        yield batch.map((r) => responseRow(id, importIds[i]!, ++position, r, firstParse(r.record)));
    },
    write: (tx, row) => tx.insert(judgeResponses).values(row).run(),
    finish: (tx, { id }) => {
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "judge_set",
        entityId: id,
        action: "create",
        changes: { name: [null, plan.setName] },
        at: now,
      });
      for (const [i, file] of plan.files.entries())
        recordImportEvent(tx, input.actorId, id, file, fileSha(input.files[i]!), now);
      return { ...plan, setExists: true, written: plan.total, setId: id };
    },
    ...opts,
  });
  if ("exists" in outcome) return null;
  if ("refused" in outcome) return { ...plan, ok: false, files: [], refusal: outcome.refused, written: 0, setId: null };
  return outcome.done;
}

/**
 * The responses of each file, in batches to be written before the next is read: those a file's parse kept, or, for a
 * streamed file checked in a first pass, its responses read again through `secondPass` (app/formats/import-source.ts;
 * docs/reliability.md, "Memory bounded by the longest line"), which refuses a file changed since it was checked.
 */
function* responseBatches(
  input: ResponsesImportInput,
  plan: ResponsesImportPlan,
): Generator<[number, readonly ParsedResponse[]]> {
  for (const [i, file] of plan.files.entries()) {
    const f = input.files[i]!;
    if (!("stream" in f) || file.parse.keys.length === 0) {
      yield [i, file.parse.responses];
      continue;
    }
    const batches = secondPass({
      source: f.stream,
      records: () => responseRecords(f.stream, { format: file.parse.format ?? undefined, source: f.source }),
      keyOf: responseKey,
      first: file.parse.keys,
      firstSha256: fileSha(f),
    });
    try {
      for (const batch of batches) yield [i, batch];
    } catch (error) {
      if (error instanceof FileChangedError)
        throw new ServiceError(`${f.filename}: ${FILE_CHANGED_MESSAGE}`, undefined, 409);
      throw error;
    }
  }
}

/** What tells whether another import changed a set since it was planned: its visible files (every import adds one). */
function setStamp(tx: DbOrTx, setId: number): string {
  const files = tx
    .select({ n: count(), last: max(visibleJudgeResponseImports.id) })
    .from(visibleJudgeResponseImports)
    .where(eq(visibleJudgeResponseImports.setId, setId))
    .get();
  return `${files?.n}:${files?.last}`;
}

/**
 * Responses added to an existing set, in the import run's short transactions (docs/reliability.md, "Bulk imports"):
 * the file rows and the responses carry the run's id, so every reader hides them (the views of db/schema-visible.ts) until the last
 * transaction, which checks again that the set is still drafting and unchanged by another import, discards a drawn
 * sample, records the events and deletes the run's row — the whole import becomes visible at once. A refusal there or
 * a failure removes what was written; a killed import leaves a run that the next import or start removes with its
 * rows. Null when the set changed between the plan and the run's start: the caller then imports in one transaction,
 * which checks everything again.
 */
function importIntoExistingSet(
  db: Db,
  input: ResponsesImportInput & { actorId: string | null },
  plan: ResponsesImportPlan,
  now: number,
  opts: { chunkBudgetMs?: number; onChunk?: (done: number) => void },
): ResponsesImportResult | null {
  const planned = db.select().from(visibleJudgeSets).where(eq(visibleJudgeSets.name, plan.setName)).get();
  if (!planned) return null;
  const stamp = setStamp(db, planned.id);
  const refused = (refusal: string): ResponsesImportResult => ({
    ...plan,
    ok: false,
    files: [],
    refusal,
    written: 0,
    setId: null,
  });
  let begun;
  try {
    begun = beginImportRun(
      db,
      `judge-set:${plan.setName}`,
      (tx, runId) => {
        const set = tx.select().from(visibleJudgeSets).where(eq(visibleJudgeSets.name, plan.setName)).get();
        if (!set || set.id !== planned.id || setStamp(tx, set.id) !== stamp) return null;
        const importIds = plan.files.map((file, i) =>
          insertFileRow(tx, set.id, file, fileSha(input.files[i]!), input, now, runId),
        );
        // After every row of the set, hidden or not: positions stay unique.
        const last =
          tx
            .select({ p: max(judgeResponses.position) })
            // eslint-disable-next-line concord/visible-rows -- positions stay unique among hidden rows too
            .from(judgeResponses)
            .where(eq(judgeResponses.setId, set.id))
            .get()?.p ?? 0;
        return { importIds, last };
      },
      { waitMs: 0, chunkBudgetMs: opts.chunkBudgetMs },
    );
  } catch (error) {
    if (error instanceof ServiceError) return refused(error.message);
    throw error;
  }
  const { run, prepared } = begun;
  if (!prepared) {
    run.abandon();
    return null;
  }
  try {
    let position = prepared.last;
    let before = 0;
    for (const [i, batch] of responseBatches(input, plan)) {
      const rows = batch.map((r) => ({
        ...responseRow(planned.id, prepared.importIds[i]!, ++position, r, firstParse(r.record)),
        importRun: run.id,
      }));
      run.writeInChunks(
        rows,
        (tx, row) => tx.insert(judgeResponses).values(row).run(),
        opts.onChunk && ((done) => opts.onChunk!(before + done)),
      );
      before += rows.length;
    }
    return run.finish((tx) => {
      // The guard, again in the transaction that makes the responses visible.
      const set = tx.select().from(visibleJudgeSets).where(eq(visibleJudgeSets.id, planned.id)).get();
      if (!set || set.name !== plan.setName)
        return {
          result: refused("The validation set changed during the import: nothing was imported."),
          commit: false,
        };
      if (set.status !== "drafting")
        return {
          result: refused(
            `Rating has started on "${set.name}": responses can no longer be added (the sample is frozen).`,
          ),
          commit: false,
        };
      if (setStamp(tx, set.id) !== stamp)
        return { result: refused("Another import changed the set meanwhile: nothing was imported."), commit: false };
      const drawn = Boolean(
        tx.select({ id: judgeItems.id }).from(judgeItems).where(eq(judgeItems.setId, set.id)).get(),
      );
      if (drawn) discardDraw(tx, set.id, input.actorId, now, "responses imported");
      for (const [i, file] of plan.files.entries())
        recordImportEvent(tx, input.actorId, set.id, file, fileSha(input.files[i]!), now);
      return {
        result: { ...plan, discardsDraw: drawn, setExists: true, written: plan.total, setId: set.id },
        commit: true,
      };
    });
  } catch (error) {
    run.abandon();
    throw error;
  }
}

/** A new set's row, as both ways of importing create it. */
const newSet = (name: string, createdBy: string | null, now: number) => ({
  name,
  seed: DEFAULT_VALIDATION_SEED,
  status: "drafting" as const,
  targets: DEFAULT_BUCKET_TARGETS,
  createdBy,
  createdAt: now,
});

/** A new set hidden by its import, and what the import writes under it (removed when the import fails or dies). */
export const JUDGE_SET_PARENT: HiddenParent = {
  table: "judge_sets",
  children: [
    "delete from judge_responses where id in (select id from judge_responses where set_id = ? limit 2000)",
    "delete from judge_response_imports where set_id = ?",
  ],
};

/** A file's row of the set's imports: its name, hash, format and row count (with the run's id while it is hidden). */
function insertFileRow(
  tx: Tx,
  setId: number,
  file: ResponsesImportPlan["files"][number],
  sha256: string,
  input: { actorId: string | null },
  now: number,
  importRun: string | null = null,
): number {
  return tx
    .insert(judgeResponseImports)
    .values({
      setId,
      filename: file.filename,
      sha256,
      format: file.parse.format!,
      rows: file.parse.count,
      importedBy: input.actorId,
      importedAt: now,
      importRun,
    })
    .returning({ id: judgeResponseImports.id })
    .get().id;
}

function responseRow(
  setId: number,
  importId: number,
  position: number,
  r: ParsedResponses["responses"][number],
  parsed: ReturnType<typeof firstParse>,
): InferInsertModel<typeof judgeResponses> {
  return {
    setId,
    importId,
    position,
    sourceRun: r.sourceRun,
    sampleId: r.sampleId,
    model: r.model,
    strategy: r.strategy,
    stepIndex: r.stepIndex,
    isLastSection: r.isLastSection,
    modelOutputRaw: r.modelOutputRaw,
    newJudgeOutput: r.newJudgeOutput || null,
    record: r.record,
    bucket: parsed.bucket,
    derivedAction: parsed.derivedAction,
  };
}

function recordImportEvent(
  tx: DbOrTx,
  actorId: string | null,
  setId: number,
  file: ResponsesImportPlan["files"][number],
  sha256: string,
  at: number,
): void {
  recordEvent(tx, {
    actorId,
    entity: "judge_set",
    entityId: setId,
    action: "import_responses",
    changes: { filename: file.filename, format: file.parse.format, rows: file.parse.count, sha256 },
    at,
  });
}

/** One IMMEDIATE transaction: the plan is made again inside it, so every check runs with the write. */
function importInOneTransaction(
  db: Db,
  input: ResponsesImportInput & { actorId: string | null },
  now: number,
): ResponsesImportResult {
  return db.transaction(
    (tx) => {
      const plan = planWithin(tx, input, true);
      if (!plan.ok) return { ...plan, written: 0, setId: null };
      let set = tx.select().from(visibleJudgeSets).where(eq(visibleJudgeSets.name, plan.setName)).get();
      if (!set) {
        set = tx
          .insert(judgeSets)
          .values(newSet(plan.setName, input.actorId, now))
          .returning()
          .get();
        recordEvent(tx, {
          actorId: input.actorId,
          entity: "judge_set",
          entityId: set.id,
          action: "create",
          changes: { name: [null, set.name] },
          at: now,
        });
      }
      if (plan.discardsDraw) discardDraw(tx, set.id, input.actorId, now, "responses imported");
      let position =
        tx
          .select({ p: max(judgeResponses.position) })
          // eslint-disable-next-line concord/visible-rows -- positions stay unique among hidden rows too
          .from(judgeResponses)
          .where(eq(judgeResponses.setId, set.id))
          .get()?.p ?? 0;
      for (const [i, file] of plan.files.entries()) {
        const sha256 = fileSha(input.files[i]);
        const importId = insertFileRow(tx, set.id, file, sha256, input, now);
        for (const r of file.parse.responses)
          tx.insert(judgeResponses)
            .values(responseRow(set.id, importId, ++position, r, firstParse(r.record)))
            .run();
        recordImportEvent(tx, input.actorId, set.id, file, sha256, now);
      }
      return { ...plan, setExists: true, written: plan.total, setId: set.id };
    },
    { behavior: "immediate" },
  );
}

export interface ImportRow {
  id: number;
  filename: string;
  format: string;
  rows: number;
  importedBy: string | null;
  importedAt: number;
}

/** The files imported into a set, oldest first. */
export function listResponseImports(db: Db, setId: number): ImportRow[] {
  return db
    .select({
      id: visibleJudgeResponseImports.id,
      filename: visibleJudgeResponseImports.filename,
      format: visibleJudgeResponseImports.format,
      rows: visibleJudgeResponseImports.rows,
      importedBy: users.username,
      importedAt: visibleJudgeResponseImports.importedAt,
    })
    .from(visibleJudgeResponseImports)
    .leftJoin(users, eq(users.id, visibleJudgeResponseImports.importedBy))
    .where(eq(visibleJudgeResponseImports.setId, setId))
    .orderBy(asc(visibleJudgeResponseImports.id))
    .all();
}
