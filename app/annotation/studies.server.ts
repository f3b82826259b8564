import { DiskIdLines } from "../platform/disk-id-lines.server";
import { and, asc, count, eq, max, sql } from "drizzle-orm";
import * as nodeCrypto from "node:crypto";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fromRoot } from "../platform/paths.server";
import { z } from "zod";
import {
  adjudications,
  annotations,
  caseSections,
  cases,
  imports,
  referenceLabels,
  studies,
  type AdjudicationMode,
} from "../../db/schema";
import { visibleCases, visibleStudies } from "../../db/schema-visible";
import {
  CaseFileReader,
  type CaseColumn,
  type CaseFileSummary,
  type ImportIssue,
  type ParsedCase,
  type ReferenceLabels,
} from "./domain/case-import";
import type { Section } from "./domain/sections";
import { storedReferenceCells, storedReferenceColumns } from "../labels/labels";
import { preparedOn, type Db, type DbOrTx, type Tx } from "../platform/db.server";
import { beginImportRun, notPending, type ImportRun } from "../platform/import-runs.server";
import { finishWindow, prefixRange, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import { studyCaseCount } from "./study-counts.server";
import { canonicalChapterVCode } from "../icd10/icd10.server";
import { recordEvent } from "../audit/audit.server";
import { ServiceError } from "../platform/service-error";
import { seedGuidelines } from "../guidelines/guidelines.server";

export const StudyNameSchema = z
  .string()
  .trim()
  .min(1, "Give the study a name.")
  .max(80, "A study name has at most 80 characters.")
  .regex(/^[\p{L}\p{N} ._-]+$/u, "A study name may contain letters, digits, spaces, dot, underscore and hyphen.");

export interface StudySummary {
  id: number;
  name: string;
  description: string;
  adjudicationMode: AdjudicationMode;
  numCases: number;
  createdAt: number;
}

const studyColumns = {
  id: visibleStudies.id,
  name: visibleStudies.name,
  description: visibleStudies.description,
  adjudicationMode: visibleStudies.adjudicationMode,
  createdAt: visibleStudies.createdAt,
};

/**
 * Every study by name, each with its number of cases from the counts the database keeps (`studyCaseCount`,
 * docs/architecture.md, "Pages are windows"): no study's cases are counted one by one.
 */
export function listStudies(db: Db): StudySummary[] {
  return db
    .select(studyColumns)
    .from(visibleStudies)
    .orderBy(asc(visibleStudies.name))
    .all()
    .map((s) => ({ ...s, numCases: studyCaseCount(db, s.id) }));
}

export const STUDIES_WINDOW = {
  prefix: "",
  sorts: ["name"],
  defaultSort: "name",
  filters: ["q"],
} as const satisfies WindowSpec<string, string>;

/**
 * A window of the studies (docs/architecture.md, "Pages are windows"): by name (its unique index, whose range is
 * also the prefix filter), each study's case count from the counts the database keeps (`studyCaseCount`), so the
 * page never counts the cases themselves.
 */
export function studiesWindow(db: Db, params: URLSearchParams): ListWindow<StudySummary, "name", "q"> {
  const w = readWindow(params, STUDIES_WINDOW, 2);
  const [lo, hi] = prefixRange(w.filters.q);
  const filter = w.filters.q ? sql`${visibleStudies.name} >= ${lo} and ${visibleStudies.name} < ${hi}` : undefined;
  const k = keyset(w, [visibleStudies.name, visibleStudies.id]);
  const rows = db
    .select({
      id: visibleStudies.id,
      name: visibleStudies.name,
      description: visibleStudies.description,
      adjudicationMode: visibleStudies.adjudicationMode,
      createdAt: visibleStudies.createdAt,
    })
    .from(visibleStudies)
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all()
    .map((r) => ({ ...r, numCases: studyCaseCount(db, r.id) }));
  const total = db.select({ n: count() }).from(visibleStudies).where(filter).get()!.n;
  return finishWindow(w, rows, total, (r) => [r.name, r.id]);
}

/** One study (every study page reads it): one row and its kept counts. */
export function getStudy(db: Db, id: number): StudySummary | null {
  const s = db.select(studyColumns).from(visibleStudies).where(eq(visibleStudies.id, id)).get();
  return s ? { ...s, numCases: studyCaseCount(db, s.id) } : null;
}

export function getStudyByName(db: Db, name: string): StudySummary | null {
  return listStudies(db).find((s) => s.name === name.trim()) ?? null;
}

export function requireStudyByName(db: Db, name: string): StudySummary {
  const study = getStudyByName(db, name);
  if (!study) {
    const known = listStudies(db).map((s) => `"${s.name}"`);
    throw new ServiceError(
      `No study named "${name}".${
        known.length ? ` Known studies: ${known.join(", ")}.` : " There are no studies yet."
      }`,
      "study",
      404,
    );
  }
  return study;
}

/** Stable hash of what an annotator sees of a case: metadata and sections in order. */
export function caseContentHash(c: { ageGroup: string; sex: string; sections: Section[] }): string {
  const canonical = JSON.stringify([c.ageGroup, c.sex, c.sections.map((s) => [s.order, s.kind, s.content])]);
  return sha256Hex(canonical);
}

/** SHA-256 in hex: the one-shot `crypto.hash` where the runtime has it (Node 20.12+), a hash object before. */
const sha256Hex: (text: string) => string =
  typeof nodeCrypto.hash === "function"
    ? (text) => nodeCrypto.hash("sha256", text, "hex")
    : (text) => createHash("sha256").update(text).digest("hex");

/**
 * A case file read in chunks as the import goes (the command line reads its file so): its size, checked against
 * the limit before anything is read, and its bytes, read once from the start each time `chunks` is called.
 */
export interface CaseFileSource {
  byteLength: number;
  chunks(): Iterable<Uint8Array>;
}

export interface ImportInput {
  studyName: string;
  /** The file: its bytes (an upload, a test), or a source that reads them in chunks. */
  bytes: Uint8Array | CaseFileSource;
  filename: string;
  format?: "csv" | "jsonl";
  columnMap?: Partial<Record<CaseColumn, string>>;
  /** Concord's extra label fields by case id (import-gold), stored with the reference labels in the same transaction. */
  referenceExtras?: Map<string, object | null>;
  /**
   * The A/B order seed of the study the file was exported from (import-gold, read from the export's manifest.json),
   * stored on the study in the same transaction (docs/safe-psych.md, "Annotator A and B"). Refused when the study
   * already has a different seed.
   */
  annotatorOrderSeed?: number | null;
}

export interface ImportPlan {
  studyName: string;
  studyExists: boolean;
  parse: CaseFileSummary;
  /** Errors that come from the database: a changed case that already has annotations. */
  conflicts: ImportIssue[];
  /** Why the given A/B order seed cannot be stored (the study already has another), else null. */
  seedConflict: string | null;
  /** The given A/B order seed is new to the study and will be (or was) stored. */
  seedToRecord: boolean;
  create: number;
  update: number;
  unchanged: number;
  labelChanges: number;
  total: number;
  /** A few new or changed cases for the preview (ids and section counts only). */
  sample: {
    externalId: string;
    numSections: number;
    hasReferenceLabels: boolean;
    status: "new" | "changed" | "unchanged";
  }[];
  ok: boolean;
  sha256: string;
}

interface Classified {
  parsed: ParsedCase;
  hash: string;
  existing: { id: number; contentHash: string; version: number } | null;
  labelsChanged: boolean;
}

/** What classifying a file's cases needs of the study: its cases, which have annotations, their reference labels. */
interface StudyState {
  existing: Map<string, { id: number; contentHash: string; version: number }>;
  annotated: Set<number>;
  labels: Map<number, ReferenceLabels>;
  sources: Map<number, string>;
  storedExtras: Map<number, object>;
}

function loadStudyState(db: DbOrTx, studyId: number | null): StudyState {
  const state: StudyState = {
    existing: new Map(),
    annotated: new Set(),
    labels: new Map(),
    sources: new Map(),
    storedExtras: new Map(),
  };
  if (studyId === null) return state;
  for (const row of db
    .select({
      id: visibleCases.id,
      externalId: visibleCases.externalId,
      contentHash: visibleCases.contentHash,
      version: visibleCases.version,
    })
    .from(visibleCases)
    .where(eq(visibleCases.studyId, studyId))
    .all())
    state.existing.set(row.externalId, row);
  for (const row of db
    .selectDistinct({ caseId: annotations.caseId })
    .from(annotations)
    .innerJoin(visibleCases, eq(visibleCases.id, annotations.caseId))
    .where(eq(visibleCases.studyId, studyId))
    .all())
    state.annotated.add(row.caseId);
  for (const row of db
    .select()
    .from(referenceLabels)
    .innerJoin(visibleCases, eq(visibleCases.id, referenceLabels.caseId))
    .where(eq(visibleCases.studyId, studyId))
    .all()) {
    const l = labelsOf(row.reference_labels);
    if (l) state.labels.set(row.reference_labels.caseId, l);
    if (row.reference_labels.sourceDiagnosis)
      state.sources.set(row.reference_labels.caseId, row.reference_labels.sourceDiagnosis);
    if (row.reference_labels.extras) state.storedExtras.set(row.reference_labels.caseId, row.reference_labels.extras);
  }
  return state;
}

const conflictMessage = (externalId: string) =>
  `(id ${externalId}) the case already has annotations and its text or metadata differs from the stored one; an annotated case cannot be changed. Import the new text under a new id.`;

/** One case of the file against the study: new, changed or unchanged, and whether its reference labels change. */
function classify(
  state: StudyState,
  parsed: ParsedCase,
  extras: Map<string, object | null> | undefined,
  conflicts: ImportIssue[],
): Classified {
  const hash = caseContentHash(parsed);
  const found = state.existing.get(parsed.externalId) ?? null;
  if (found && found.contentHash !== hash && state.annotated.has(found.id))
    conflicts.push({ line: parsed.line, message: conflictMessage(parsed.externalId) });
  const before = found ? (state.labels.get(found.id) ?? null) : null;
  const labelsChanged =
    JSON.stringify(before) !== JSON.stringify(parsed.referenceLabels) ||
    (found ? (state.sources.get(found.id) ?? null) : null) !== parsed.sourceDiagnosis ||
    (extras !== undefined &&
      JSON.stringify(found ? (state.storedExtras.get(found.id) ?? null) : null) !==
        JSON.stringify(extras.get(parsed.externalId) ?? null));
  return { parsed, hash, existing: found, labelsChanged };
}

let safePsychDefault: string | undefined;

/** The text a new Safe-Psych study starts with (app/data/guidelines/safe-psych-default.md). */
export function safePsychDefaultGuidelines(): string {
  return (safePsychDefault ??= readFileSync(fromRoot("app", "data", "guidelines", "safe-psych-default.md"), "utf8"));
}

function labelsOf(row: typeof referenceLabels.$inferSelect): ReferenceLabels | null {
  if (row.diagnosisSufficiency === null) return null;
  return storedReferenceCells(row);
}

/** An upload's bytes are read in pieces of this size, as the command line reads a file (`fileChunks`). */
const READ_CHUNK_BYTES = 64 * 1024;
/** What is read before the import run starts: a file refused in its first bytes never starts one. */
const READ_AHEAD_BYTES = 256 * 1024;
/**
 * At most this many new cases, or this many characters of their text, are held read and checked but not yet written
 * (docs/reliability.md, "Bulk imports"): the import reads while the pause after a chunk lasts, then writes.
 */
export const BATCH_CASES = 500;
/**
 * The case import's chunks hold the write lock at most this long (the import runs' default is longer): with the
 * pause after each, a save waiting on its busy timeout gets the lock within its first retries (p99 under 10 ms,
 * `npm run bench -- --only bulk-import`), and the import spends the pause reading the next cases.
 */
const CASE_CHUNK_BUDGET_MS = 5;
/**
 * At least this many cases are read before a chunk is written, even when the pause is over: what delays the reading
 * (a slow machine, an `onChunk` hook) must not turn the import into one transaction per case.
 */
const MIN_CHUNK_CASES = 100;
const BATCH_CHARS = 1_000_000;

/** A case file given whole (an upload, a test) or read in chunks as the import goes (the command line). */
function sourceOf(bytes: ImportInput["bytes"]): CaseFileSource {
  if (!(bytes instanceof Uint8Array)) return bytes;
  return {
    byteLength: bytes.byteLength,
    *chunks() {
      for (let at = 0; at < bytes.byteLength; at += READ_CHUNK_BYTES)
        yield bytes.subarray(at, Math.min(at + READ_CHUNK_BYTES, bytes.byteLength));
    },
  };
}

/** The study the file goes into, and the A/B order seed the file brings (docs/safe-psych.md, "Annotator A and B"). */
function studyOf(db: Db, name: string, given: number | null) {
  const study = getStudyByName(db, name);
  const stored = study
    ? (db
        .select({ seed: visibleStudies.annotatorOrderSeed })
        .from(visibleStudies)
        .where(eq(visibleStudies.id, study.id))
        .get()?.seed ?? null)
    : null;
  const seedConflict =
    given !== null && stored !== null && stored !== given
      ? `study "${name}" already draws its A/B order from seed ${stored}; this export's manifest records ${given}. Import it into a new study (--study NAME).`
      : null;
  return { study, seedConflict, seedToRecord: given !== null && stored === null };
}

/** Validates a file against the study without writing anything: the preview of the admin page. */
export function planImport(db: Db, input: ImportInput): ImportPlan {
  const { written: _written, ...plan } = readCases(db, { ...input, actorId: null }, null);
  return plan;
}

/** Options of a bulk write (tests use a small chunk budget to drive an import through many transactions). */
export interface BulkOptions {
  chunkBudgetMs?: number;
  /** How long to wait for another import into the same study to finish (default 10 minutes). */
  waitMs?: number;
  /** Called after each chunk's commit with the number of new cases written so far (tests drive races with it). */
  onChunk?: (written: number) => void;
}

/**
 * Imports a case file as a whole or not at all. Unchanged cases are left alone, so re-importing the same file
 * writes nothing; a changed case without annotations gets a new version (audited); a changed annotated case is a
 * conflict and stops the import.
 *
 * The file is read as a stream: each chunk's cases are validated and classified, and the new ones written in short
 * IMMEDIATE transactions, hidden from every reader while the import runs. The first error stops the writing (the
 * rest of the file is still read, so that every bad row is reported) and what was written is removed. The last
 * transaction re-checks what guards the write (which changed cases have annotations now), applies the changes to
 * existing cases and makes the whole import visible at once (docs/reliability.md, "Bulk imports").
 */
export function importCases(
  db: Db,
  input: ImportInput & { actorId: string | null },
  opts: BulkOptions = {},
): ImportPlan & { written: boolean } {
  return readCases(db, input, opts);
}

/**
 * Reads the file chunk by chunk and classifies its cases against the study; with `opts` (an import, not a preview)
 * writes the new ones as they are read, batch by batch behind an import run, and finishes the import. Nothing holds
 * more of the file than one batch of cases and one 64 KiB piece (docs/reliability.md, "Bulk imports").
 */
function readCases(
  db: Db,
  input: ImportInput & { actorId: string | null },
  opts: BulkOptions | null,
): ImportPlan & { written: boolean } {
  // The ids read so far, for the duplicate check, on disk: what the import holds does not grow with the file.
  const ids = new DiskIdLines();
  try {
    return readCasesInto(db, input, opts, ids);
  } finally {
    ids.close();
  }
}

function readCasesInto(
  db: Db,
  input: ImportInput & { actorId: string | null },
  opts: BulkOptions | null,
  ids: DiskIdLines,
): ImportPlan & { written: boolean } {
  const name = StudyNameSchema.parse(input.studyName);
  const now = Date.now();
  const given = input.annotatorOrderSeed ?? null;
  const source = sourceOf(input.bytes);
  const hash = createHash("sha256");
  const queue: (ParsedCase | undefined)[] = [];
  let taken = 0;
  const reader = new CaseFileReader(
    {
      filename: input.filename,
      format: input.format,
      columnMap: input.columnMap,
      canonicalCode: canonicalChapterVCode,
      ids,
    },
    // Once the file is refused its cases are of no use: the rest of it is read only for its errors.
    (c) => void (reader.refused || queue.push(c)),
    // The whole-bytes limit is an upload's (the admin's page); a file read as a stream has passed its own limit
    // (IMPORT_LIMITS.cases, docs/formats.md, "Limits") before its first byte was read.
    input.bytes instanceof Uint8Array ? source.byteLength : undefined,
  );
  const chunks = source.chunks()[Symbol.iterator]();
  let bytesRead = 0;
  let summary: CaseFileSummary | null = null;
  /** Reads the next chunk of the file (or finishes the reader at its end). */
  const readChunk = () => {
    const next = chunks.next();
    if (next.done) summary = reader.finish();
    else {
      hash.update(next.value);
      bytesRead += next.value.byteLength;
      reader.write(next.value);
    }
  };
  const refused = () => reader.refused || (summary !== null && summary.errors.length > 0);

  const counts = { create: 0, update: 0, unchanged: 0, labelChanges: 0, total: 0 };
  const sample: ImportPlan["sample"] = [];
  const conflicts: ImportIssue[] = [];
  const updates: Classified[] = [];
  let state: StudyState | null = null;

  /** The next case of the file, classified and counted; null at the end of the file. */
  const take = (): Classified | null => {
    while (taken === queue.length) {
      if (summary) return null;
      queue.length = 0;
      taken = 0;
      readChunk();
    }
    const c = queue[taken]!;
    queue[taken++] = undefined;
    const item = classify(state!, c, input.referenceExtras, conflicts);
    const status = !item.existing ? "new" : item.existing.contentHash !== item.hash ? "changed" : "unchanged";
    counts.total++;
    if (status === "new") counts.create++;
    else {
      if (status === "changed") counts.update++;
      else counts.unchanged++;
      if (item.labelsChanged) counts.labelChanges++;
      if (status === "changed" || item.labelsChanged) updates.push(item);
    }
    if (sample.length < 10)
      sample.push({
        externalId: c.externalId,
        numSections: c.sections.length,
        hasReferenceLabels: c.referenceLabels !== null,
        status,
      });
    return item;
  };

  let run: ImportRun | null = null;
  let existingStudyId: number | null = null;
  let studyId: number | null = null;
  try {
    // A file refused in its first chunks (every small one) never starts a run: it neither waits for another import
    // of the study nor writes anything.
    while (!summary && bytesRead < READ_AHEAD_BYTES && !reader.refused) readChunk();
    let target = studyOf(db, name, given);
    if (!refused()) {
      if (opts) {
        const begun = beginImportRun(
          db,
          `cases:${name}`,
          (tx) => getStudyByName(tx as unknown as Db, name)?.id ?? null,
          { ...opts, chunkBudgetMs: opts.chunkBudgetMs ?? CASE_CHUNK_BUDGET_MS },
        );
        run = begun.run;
        existingStudyId = begun.prepared;
        // This import is the only writer of this study's cases now; what an annotator may change meanwhile (a first
        // draft on a case) is checked again in the last transaction.
        target = studyOf(db, name, given);
      }
      state = loadStudyState(db, target.study?.id ?? null);
      if (run && target.seedConflict === null) {
        const activeRun = run;
        let write: ((item: Classified) => void) | null = null;
        const writeCase = (tx: Tx, item: Classified) => {
          if (!write) {
            // A new study is created hidden (it carries the run's id), in the chunk that writes its first case.
            studyId =
              existingStudyId ??
              tx
                .insert(studies)
                .values({ name, createdAt: now, importRun: activeRun.id })
                .returning({ id: studies.id })
                .get().id;
            let position =
              tx
                .select({ p: max(cases.position) })
                // eslint-disable-next-line concord/visible-rows -- positions stay unique among hidden rows too
                .from(cases)
                .where(eq(cases.studyId, studyId))
                .get()?.p ?? 0;
            const insert = caseWriter(db, {
              studyId,
              runId: activeRun.id,
              actorId: input.actorId,
              now,
              extras: input.referenceExtras,
            });
            write = (i) => insert(i, ++position);
          }
          write(item);
        };
        // The new cases, read and checked outside the lock while the pause after the last chunk lasts (at most a
        // batch of them), then written in the next chunk; what a chunk leaves waits for the one after. The first
        // error or conflict stops the writing.
        let written = 0;
        const pending: Classified[] = [];
        let chars = 0;
        const charsOf = (item: Classified) => item.parsed.sections.reduce((n, s) => n + s.content.length, 0);
        for (let atEnd = false; ;) {
          while (
            !atEnd &&
            pending.length < BATCH_CASES &&
            chars < BATCH_CHARS &&
            (pending.length < MIN_CHUNK_CASES || activeRun.pauseLeft() > 0)
          ) {
            const item = take();
            if (!item) {
              atEnd = true;
              break;
            }
            if (refused() || conflicts.length) break;
            if (item.existing) continue;
            pending.push(item);
            chars += charsOf(item);
          }
          if (refused() || conflicts.length) break;
          if (pending.length === 0) {
            if (atEnd) break;
            continue;
          }
          const n = activeRun.writeChunk(pending, writeCase);
          for (const item of pending.splice(0, n)) chars -= charsOf(item);
          written += n;
          opts?.onChunk?.(written);
        }
      }
      // The rest of the file: classified and counted (every conflict is reported), nothing written.
      while (!refused() && take());
    }
    // A refused file is still read to its end, so that every bad row is reported.
    while (!summary) readChunk();
    const parse = summary as CaseFileSummary;
    const sha256 = hash.digest("hex");
    const failed = parse.errors.length > 0;
    const plan: ImportPlan = {
      studyName: name,
      studyExists: Boolean(target.study),
      parse,
      conflicts: failed ? [] : conflicts,
      seedConflict: target.seedConflict,
      seedToRecord: target.seedToRecord,
      ...(failed ? { create: 0, update: 0, unchanged: 0, labelChanges: 0, total: 0 } : counts),
      sample: failed ? [] : sample,
      ok: !failed && conflicts.length === 0 && target.seedConflict === null,
      sha256,
    };
    if (!run) return { ...plan, written: false };
    if (!plan.ok || (counts.create === 0 && updates.length === 0 && !plan.seedToRecord)) {
      // Nothing of a refused file is kept: what its first chunks wrote goes with the run.
      run.abandon();
      return { ...plan, written: false };
    }
    const finalStudyId = (studyId ?? existingStudyId)!;
    const newStudy = existingStudyId === null;
    return run.finish<ImportPlan & { written: boolean }>((tx) => {
      const rechecked = recheckUpdates(db, updates);
      if (rechecked.length)
        return { result: { ...plan, conflicts: rechecked, ok: false, written: false }, commit: false };
      if (newStudy) {
        tx.update(studies).set({ importRun: null }).where(eq(studies.id, finalStudyId)).run();
        recordEvent(tx, {
          actorId: input.actorId,
          entity: "study",
          entityId: finalStudyId,
          studyId: finalStudyId,
          action: "create",
          changes: { name: plan.studyName },
        });
        // A new study starts with the template's guidelines as version 1 (docs/guidelines.md).
        seedGuidelines(tx, { scope: "safe_psych", scopeId: finalStudyId }, safePsychDefaultGuidelines(), now);
      }
      if (plan.seedToRecord) {
        // The A/B order seed read back from an export's manifest (docs/safe-psych.md, "Annotator A and B").
        tx.update(studies)
          .set({ annotatorOrderSeed: input.annotatorOrderSeed })
          .where(eq(studies.id, finalStudyId))
          .run();
        recordEvent(tx, {
          actorId: input.actorId,
          entity: "study",
          entityId: finalStudyId,
          studyId: finalStudyId,
          action: "update",
          changes: { annotatorOrderSeed: [null, input.annotatorOrderSeed] },
        });
      }
      for (const item of updates)
        applyUpdate(tx, item, { studyId: finalStudyId, actorId: input.actorId, extras: input.referenceExtras });
      tx.insert(imports)
        .values({
          studyId: finalStudyId,
          filename: input.filename,
          sha256: plan.sha256,
          format: plan.parse.format,
          created: plan.create,
          updated: plan.update,
          unchanged: plan.unchanged,
          importedBy: input.actorId,
          importedAt: now,
        })
        .run();
      return { result: { ...plan, written: true }, commit: true };
    });
  } catch (error) {
    // Whatever was written is hidden; remove it now if the database lets us, else the next import or start does.
    try {
      (run as ImportRun | null)?.abandon();
    } catch {
      // left for cleanAbandonedRuns
    }
    throw error;
  }
}

/**
 * The guard of the write, run inside the last transaction (on its connection): a case whose text the import replaces must still be as the
 * import read it and must have no annotations — a first draft saved while the import was writing stops it.
 */
function recheckUpdates(db: Db, updates: Classified[]): ImportIssue[] {
  const conflicts: ImportIssue[] = [];
  const current = db.$client.prepare("select content_hash as h, version as v from visible_cases where id = ?");
  const annotated = db.$client.prepare("select 1 from annotations where case_id = ? limit 1");
  for (const item of updates) {
    const existing = item.existing!;
    const row = current.get(existing.id) as { h: string; v: number } | undefined;
    if (!row || row.h !== existing.contentHash || row.v !== existing.version) {
      conflicts.push({
        line: item.parsed.line,
        message: `(id ${item.parsed.externalId}) the case was changed while the file was being imported. Run the import again.`,
      });
    } else if (existing.contentHash !== item.hash && annotated.get(existing.id)) {
      conflicts.push({
        line: item.parsed.line,
        message: `(id ${item.parsed.externalId}) the case already has annotations and its text or metadata differs from the stored one; an annotated case cannot be changed. Import the new text under a new id.`,
      });
    }
  }
  return conflicts;
}

function referenceValues(c: ParsedCase, extras: Map<string, object | null> | undefined) {
  return {
    ...storedReferenceColumns(c.referenceLabels),
    sourceDiagnosis: c.sourceDiagnosis,
    extras: extras?.get(c.externalId) ?? null,
  };
}

/**
 * Writes one new case (its row, sections, reference labels and "import" event) with statements prepared once and
 * reused for every row; every row carries the run's id and stays hidden until the run finishes.
 */
function caseWriter(
  db: Db,
  ctx: {
    studyId: number;
    runId: string;
    actorId: string | null;
    now: number;
    extras: Map<string, object | null> | undefined;
  },
): (item: Classified, position: number) => void {
  const $ = db.$client;
  const insertCase = $.prepare(
    "insert into cases (study_id, external_id, position, age_group, sex, num_sections, content_hash, created_at, import_run, progress_state) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertSection = $.prepare("insert into case_sections (case_id, ord, kind, content) values (?, ?, ?, ?)");
  const insertLabels = $.prepare(
    "insert into reference_labels (case_id, diagnosis_sufficiency, diagnosis_sufficiency_agreement, diagnosis, diagnosis_agreement, earliest_sufficient_section, source_diagnosis, extras) values (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertEvent = $.prepare(
    "insert into events (at, actor_id, study_id, case_id, entity, entity_id, action, changes, import_run) values (?, ?, ?, ?, 'case', ?, 'import', ?, ?)",
  );
  return (item, position) => {
    const c = item.parsed;
    const labelled = item.labelsChanged || c.referenceLabels !== null || c.sourceDiagnosis !== null;
    const v = labelled ? referenceValues(c, ctx.extras) : null;
    // A new case has no outcome and no assignments: its state is "reference" when it has a reference sufficiency
    // label. Set here, since the trigger that derives it from the labels leaves a hidden case alone (migration
    // import_counts_in_bulk; the counters get the import's cases when it finishes).
    const state = v !== null && v.diagnosisSufficiency !== null ? "reference" : "unassigned";
    const caseId = Number(
      insertCase.run(
        ctx.studyId,
        c.externalId,
        position,
        c.ageGroup,
        c.sex,
        c.sections.length,
        item.hash,
        ctx.now,
        ctx.runId,
        state,
      ).lastInsertRowid,
    );
    for (const s of c.sections) insertSection.run(caseId, s.order, s.kind, s.content);
    if (v !== null) {
      insertLabels.run(
        caseId,
        v.diagnosisSufficiency,
        v.diagnosisSufficiencyAgreement,
        v.diagnosis,
        v.diagnosisAgreement,
        v.earliestSufficientSection,
        v.sourceDiagnosis,
        v.extras === null ? null : JSON.stringify(v.extras),
      );
    }
    insertEvent.run(
      Date.now(),
      ctx.actorId,
      ctx.studyId,
      caseId,
      String(caseId),
      JSON.stringify({ externalId: c.externalId, numSections: c.sections.length }),
      ctx.runId,
    );
  };
}

/** A changed existing case: new text (audited, version + 1) and/or new reference labels. */
function applyUpdate(
  tx: Tx,
  item: Classified,
  ctx: { studyId: number; actorId: string | null; extras: Map<string, object | null> | undefined },
): void {
  const c = item.parsed;
  const existing = item.existing!;
  const caseId = existing.id;
  if (existing.contentHash !== item.hash) {
    tx.delete(caseSections).where(eq(caseSections.caseId, caseId)).run();
    tx.insert(caseSections)
      .values(c.sections.map((s) => ({ caseId, ord: s.order, kind: s.kind, content: s.content })))
      .run();
    tx.update(cases)
      .set({
        ageGroup: c.ageGroup,
        sex: c.sex,
        numSections: c.sections.length,
        contentHash: item.hash,
        version: existing.version + 1,
      })
      .where(eq(cases.id, caseId))
      .run();
    recordEvent(tx, {
      actorId: ctx.actorId,
      entity: "case",
      entityId: caseId,
      studyId: ctx.studyId,
      caseId,
      action: "replace_text",
      changes: {
        version: [existing.version, existing.version + 1],
        contentHash: [existing.contentHash, item.hash],
      },
    });
  }
  if (item.labelsChanged) {
    const values = referenceValues(c, ctx.extras);
    tx.insert(referenceLabels)
      .values({ caseId, ...values })
      .onConflictDoUpdate({ target: referenceLabels.caseId, set: values })
      .run();
    recordEvent(tx, {
      actorId: ctx.actorId,
      entity: "reference_labels",
      entityId: caseId,
      studyId: ctx.studyId,
      caseId,
      action: "update",
      changes: { labels: "replaced from import" },
    });
  }
}

export interface CaseRow {
  id: number;
  externalId: string;
  position: number;
  ageGroup: string;
  sex: string;
  numSections: number;
  version: number;
  hasReferenceLabels: boolean;
}

/** Admin view of a study's cases (no text). */
export function listStudyCases(db: Db, studyId: number): CaseRow[] {
  return db
    .select({
      id: visibleCases.id,
      externalId: visibleCases.externalId,
      position: visibleCases.position,
      ageGroup: visibleCases.ageGroup,
      sex: visibleCases.sex,
      numSections: visibleCases.numSections,
      version: visibleCases.version,
      hasReferenceLabels: sql<boolean>`${referenceLabels.diagnosisSufficiency} is not null`,
    })
    .from(visibleCases)
    .leftJoin(referenceLabels, eq(referenceLabels.caseId, visibleCases.id))
    .where(eq(visibleCases.studyId, studyId))
    .orderBy(asc(visibleCases.position))
    .all()
    .map((r) => ({ ...r, hasReferenceLabels: Boolean(r.hasReferenceLabels) }));
}

export const STUDY_CASES_WINDOW = {
  prefix: "",
  sorts: ["position", "externalId"],
  defaultSort: "position",
  filters: ["q"],
} as const satisfies WindowSpec<string, string>;

/**
 * Admin view of a study's cases (no text), one window of them (docs/architecture.md, "Pages are windows"): by
 * position or case id, filtered by a case id prefix, each read from its index (cases_study_pos_idx,
 * cases_study_external_idx).
 */
export function studyCasesWindow(
  db: Db,
  studyId: number,
  params: URLSearchParams,
): ListWindow<CaseRow, (typeof STUDY_CASES_WINDOW.sorts)[number], "q"> {
  const w = readWindow(params, STUDY_CASES_WINDOW, 2);
  const keys = w.sort === "externalId" ? [cases.externalId, cases.id] : [cases.position, cases.id];
  const k = keyset(w, keys);
  const [lo, hi] = prefixRange(w.filters.q);
  const filter = and(
    eq(cases.studyId, studyId),
    notPending(cases.importRun),
    w.filters.q ? sql`${cases.externalId} >= ${lo} and ${cases.externalId} < ${hi}` : undefined,
  );
  const rows = db
    .select({
      id: cases.id,
      externalId: cases.externalId,
      position: cases.position,
      ageGroup: cases.ageGroup,
      sex: cases.sex,
      numSections: cases.numSections,
      version: cases.version,
      hasReferenceLabels: sql<boolean>`${referenceLabels.diagnosisSufficiency} is not null`,
    })
    // eslint-disable-next-line concord/visible-rows -- the window's keyset and index need the table's own columns; `filter` hides an unfinished import's rows (notPending)
    .from(cases)
    .leftJoin(referenceLabels, eq(referenceLabels.caseId, cases.id))
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all()
    .map((r) => ({ ...r, hasReferenceLabels: Boolean(r.hasReferenceLabels) }));
  // The whole study's count is kept by the database; a prefix's is an index range.
  const total = w.filters.q
    ? // eslint-disable-next-line concord/visible-rows -- the window's keyset and index need the table's own columns; `filter` hides an unfinished import's rows (notPending)
      db.select({ n: count() }).from(cases).where(filter).get()!.n
    : studyCaseCount(db, studyId);
  return finishWindow(w, rows, total, (r) => (w.sort === "externalId" ? [r.externalId, r.id] : [r.position, r.id]));
}

const sectionsOf = preparedOn((db) =>
  db
    .select({ order: caseSections.ord, kind: caseSections.kind, content: caseSections.content })
    .from(caseSections)
    .where(eq(caseSections.caseId, sql.placeholder("caseId")))
    .orderBy(asc(caseSections.ord))
    .prepare(),
);

export function getCaseSections(db: Db, caseId: number): Section[] {
  return sectionsOf(db).all({ caseId }) as Section[];
}

/**
 * Sets how disputes are adjudicated (docs/safe-psych.md#disagreement-and-adjudication): two-phase (independent judgement, then A/B revealed), reveal-only or
 * independent-only. Refused while an adjudicator is between the two phases, whose work would change meaning.
 */
export function setAdjudicationMode(db: Db, input: { studyId: number; mode: AdjudicationMode; actorId: string }): void {
  db.transaction(
    (tx) => {
      const study = tx.select().from(visibleStudies).where(eq(visibleStudies.id, input.studyId)).get();
      if (!study) throw new ServiceError("No such study.", undefined, 404);
      if (study.adjudicationMode === input.mode) return;
      const inProgress = tx
        .select({ n: count() })
        .from(adjudications)
        .innerJoin(visibleCases, eq(visibleCases.id, adjudications.caseId))
        .where(and(eq(visibleCases.studyId, input.studyId), eq(adjudications.status, "in_progress")))
        .get()!.n;
      if (inProgress > 0)
        throw new ServiceError(
          `${inProgress} adjudication(s) are between their independent and final phase; finish them before changing the mode.`,
          "mode",
        );
      tx.update(studies).set({ adjudicationMode: input.mode }).where(eq(studies.id, input.studyId)).run();
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "study",
        entityId: input.studyId,
        studyId: input.studyId,
        action: "set_adjudication_mode",
        changes: { adjudicationMode: [study.adjudicationMode, input.mode] },
      });
    },
    { behavior: "immediate" },
  );
}
