import { and, asc, count, eq, max, sql } from "drizzle-orm";
import { createHash } from "node:crypto";
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
import {
  parseCaseFile,
  type CaseColumn,
  type ImportIssue,
  type ParsedCase,
  type ParseResult,
  type ReferenceLabels,
} from "./domain/case-import";
import type { Section } from "./domain/sections";
import { preparedOn, type Db, type DbOrTx, type Tx } from "../platform/db.server";
import { beginImportRun, notPending } from "../platform/import-runs.server";
import { writeTransaction } from "../work-items/engine.server";
import { canonicalChapterVCode } from "../icd10/icd10.server";
import { recordEvent } from "../audit/audit.server";
import { ServiceError } from "../platform/service-error";
import { safePsychDefaultGuidelines, seedGuidelines } from "../guidelines/guidelines.server";

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

export function listStudies(db: Db): StudySummary[] {
  return db
    .select({
      id: studies.id,
      name: studies.name,
      description: studies.description,
      adjudicationMode: studies.adjudicationMode,
      createdAt: studies.createdAt,
      numCases: count(cases.id),
    })
    .from(studies)
    .leftJoin(cases, and(eq(cases.studyId, studies.id), notPending(cases.importRun)))
    .where(notPending(studies.importRun))
    .groupBy(studies.id)
    .orderBy(asc(studies.name))
    .all();
}

export function getStudy(db: Db, id: number): StudySummary | null {
  return listStudies(db).find((s) => s.id === id) ?? null;
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
  return createHash("sha256").update(canonical).digest("hex");
}

export interface ImportInput {
  studyName: string;
  bytes: Uint8Array;
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
  parse: Omit<ParseResult, "cases">;
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

function classify(
  db: DbOrTx,
  studyId: number | null,
  parsedCases: ParsedCase[],
  extras?: Map<string, object | null>,
): { items: Classified[]; conflicts: ImportIssue[] } {
  const existing = new Map<string, { id: number; contentHash: string; version: number }>();
  const annotated = new Set<number>();
  const labels = new Map<number, ReferenceLabels>();
  const sources = new Map<number, string>();
  const storedExtras = new Map<number, object>();
  if (studyId !== null) {
    for (const row of db
      .select({ id: cases.id, externalId: cases.externalId, contentHash: cases.contentHash, version: cases.version })
      .from(cases)
      .where(and(eq(cases.studyId, studyId), notPending(cases.importRun)))
      .all())
      existing.set(row.externalId, row);
    for (const row of db
      .selectDistinct({ caseId: annotations.caseId })
      .from(annotations)
      .innerJoin(cases, eq(cases.id, annotations.caseId))
      .where(eq(cases.studyId, studyId))
      .all())
      annotated.add(row.caseId);
    for (const row of db
      .select()
      .from(referenceLabels)
      .innerJoin(cases, eq(cases.id, referenceLabels.caseId))
      .where(eq(cases.studyId, studyId))
      .all()) {
      const l = labelsOf(row.reference_labels);
      if (l) labels.set(row.reference_labels.caseId, l);
      if (row.reference_labels.sourceDiagnosis)
        sources.set(row.reference_labels.caseId, row.reference_labels.sourceDiagnosis);
      if (row.reference_labels.extras) storedExtras.set(row.reference_labels.caseId, row.reference_labels.extras);
    }
  }
  const conflicts: ImportIssue[] = [];
  const items = parsedCases.map((parsed) => {
    const hash = caseContentHash(parsed);
    const found = existing.get(parsed.externalId) ?? null;
    if (found && found.contentHash !== hash && annotated.has(found.id)) {
      conflicts.push({
        line: parsed.line,
        message: `(id ${parsed.externalId}) the case already has annotations and its text or metadata differs from the stored one; an annotated case cannot be changed. Import the new text under a new id.`,
      });
    }
    const before = found ? (labels.get(found.id) ?? null) : null;
    const labelsChanged =
      JSON.stringify(before) !== JSON.stringify(parsed.referenceLabels) ||
      (found ? (sources.get(found.id) ?? null) : null) !== parsed.sourceDiagnosis ||
      (extras !== undefined &&
        JSON.stringify(found ? (storedExtras.get(found.id) ?? null) : null) !==
          JSON.stringify(extras.get(parsed.externalId) ?? null));
    return { parsed, hash, existing: found, labelsChanged };
  });
  return { items, conflicts };
}

function labelsOf(row: typeof referenceLabels.$inferSelect): ReferenceLabels | null {
  if (row.diagnosisSufficiency === null) return null;
  return {
    diagnosis_sufficiency: row.diagnosisSufficiency ?? "",
    diagnosis_sufficiency_agreement: row.diagnosisSufficiencyAgreement ?? "",
    diagnosis: row.diagnosis ?? "",
    diagnosis_agreement: row.diagnosisAgreement ?? "",
    earliest_sufficient_section: row.earliestSufficientSection ?? "",
  };
}

/** The part of an import that needs no database: the file parsed and validated, and its hash. */
function parseImport(input: ImportInput) {
  const name = StudyNameSchema.parse(input.studyName);
  const result = parseCaseFile(input.bytes, {
    filename: input.filename,
    format: input.format,
    columnMap: input.columnMap,
    canonicalCode: canonicalChapterVCode,
  });
  return { name, result, sha256: createHash("sha256").update(input.bytes).digest("hex") };
}

function analyse(db: DbOrTx, input: ImportInput, parsed: ReturnType<typeof parseImport> = parseImport(input)) {
  const { name, result } = parsed;
  const study = getStudyByName(db as Db, name);
  const { items, conflicts } = classify(db, study?.id ?? null, result.cases, input.referenceExtras);
  const { cases: _omit, ...parse } = result;
  const given = input.annotatorOrderSeed ?? null;
  const stored = study
    ? (db.select({ seed: studies.annotatorOrderSeed }).from(studies).where(eq(studies.id, study.id)).get()?.seed ??
      null)
    : null;
  const seedConflict =
    given !== null && stored !== null && stored !== given
      ? `study "${name}" already draws its A/B order from seed ${stored}; this export's manifest records ${given}. Import it into a new study (--study NAME).`
      : null;
  const status = (i: Classified) => (!i.existing ? "new" : i.existing.contentHash !== i.hash ? "changed" : "unchanged");
  const plan: ImportPlan = {
    studyName: name,
    studyExists: Boolean(study),
    parse,
    conflicts,
    seedConflict,
    seedToRecord: given !== null && stored === null,
    create: items.filter((i) => status(i) === "new").length,
    update: items.filter((i) => status(i) === "changed").length,
    unchanged: items.filter((i) => status(i) === "unchanged").length,
    labelChanges: items.filter((i) => i.existing && i.labelsChanged).length,
    total: items.length,
    sample: items.slice(0, 10).map((i) => ({
      externalId: i.parsed.externalId,
      numSections: i.parsed.sections.length,
      hasReferenceLabels: i.parsed.referenceLabels !== null,
      status: status(i),
    })),
    ok: result.errors.length === 0 && conflicts.length === 0 && seedConflict === null,
    sha256: parsed.sha256,
  };
  return { plan, items, study };
}

/** Validates a file against the study without writing anything: the preview of the admin page. */
export function planImport(db: Db, input: ImportInput): ImportPlan {
  return analyse(db, input).plan;
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
 * The file is parsed and validated before any lock is taken; new cases are then written in short IMMEDIATE
 * transactions, hidden from every reader while the import runs, and the last transaction re-checks what guards the
 * write (which changed cases have annotations now), applies the changes to existing cases and makes the whole
 * import visible at once (docs/reliability.md, "Bulk imports").
 */
export function importCases(
  db: Db,
  input: ImportInput & { actorId: string | null },
  opts: BulkOptions = {},
): ImportPlan & { written: boolean } {
  const parsed = parseImport(input);
  const now = Date.now();
  if (parsed.result.errors.length) return { ...analyse(db, input, parsed).plan, written: false };
  const { run, prepared: existingStudyId } = beginImportRun(
    db,
    `cases:${parsed.name}`,
    (tx) => getStudyByName(tx as unknown as Db, parsed.name)?.id ?? null,
    opts,
  );
  try {
    // Outside the lock: this import is the only writer of this study's cases now; what an annotator may change
    // meanwhile (a first draft on a case) is checked again in the last transaction.
    const { plan, items } = analyse(db, input, parsed);
    const changes = items.filter((i) => !i.existing || i.existing.contentHash !== i.hash || i.labelsChanged);
    if (!plan.ok || (changes.length === 0 && !plan.seedToRecord)) {
      run.abandon();
      return { ...plan, written: false };
    }
    let studyId = existingStudyId;
    if (studyId === null) {
      // Created hidden (it carries the run's id): nobody sees the new study before the import is complete.
      studyId = writeTransaction(db, (tx) =>
        tx
          .insert(studies)
          .values({ name: plan.studyName, createdAt: now, importRun: run.id })
          .returning({ id: studies.id })
          .get(),
      ).id;
    }
    const created = changes.filter((i) => !i.existing);
    let position =
      db
        .select({ p: max(cases.position) })
        .from(cases)
        .where(eq(cases.studyId, studyId))
        .get()?.p ?? 0;
    const write = caseWriter(db, {
      studyId,
      runId: run.id,
      actorId: input.actorId,
      now,
      extras: input.referenceExtras,
    });
    run.writeInChunks(created, (_tx, item) => write(item, ++position), opts.onChunk);
    const newStudy = existingStudyId === null;
    const updates = changes.filter((i) => i.existing);
    return run.finish<ImportPlan & { written: boolean }>((tx) => {
      const conflicts = recheckUpdates(db, updates);
      if (conflicts.length) return { result: { ...plan, conflicts, ok: false, written: false }, commit: false };
      if (newStudy) {
        tx.update(studies).set({ importRun: null }).where(eq(studies.id, studyId)).run();
        recordEvent(tx, {
          actorId: input.actorId,
          entity: "study",
          entityId: studyId,
          studyId,
          action: "create",
          changes: { name: plan.studyName },
        });
        // A new study starts with the template's guidelines as version 1 (docs/guidelines.md).
        seedGuidelines(tx, { scope: "safe_psych", scopeId: studyId }, safePsychDefaultGuidelines(), now);
      }
      if (plan.seedToRecord) {
        // The A/B order seed read back from an export's manifest (docs/safe-psych.md, "Annotator A and B").
        tx.update(studies).set({ annotatorOrderSeed: input.annotatorOrderSeed }).where(eq(studies.id, studyId)).run();
        recordEvent(tx, {
          actorId: input.actorId,
          entity: "study",
          entityId: studyId,
          studyId,
          action: "update",
          changes: { annotatorOrderSeed: [null, input.annotatorOrderSeed] },
        });
      }
      for (const item of updates)
        applyUpdate(tx, item, { studyId, actorId: input.actorId, extras: input.referenceExtras });
      tx.insert(imports)
        .values({
          studyId,
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
      run.abandon();
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
  const current = db.$client.prepare("select content_hash as h, version as v from cases where id = ?");
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
  const l = c.referenceLabels;
  return {
    diagnosisSufficiency: l?.diagnosis_sufficiency ?? null,
    diagnosisSufficiencyAgreement: l?.diagnosis_sufficiency_agreement ?? null,
    diagnosis: l?.diagnosis ?? null,
    diagnosisAgreement: l?.diagnosis_agreement ?? null,
    earliestSufficientSection: l?.earliest_sufficient_section ?? null,
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
    "insert into cases (study_id, external_id, position, age_group, sex, num_sections, content_hash, created_at, import_run) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
      ).lastInsertRowid,
    );
    for (const s of c.sections) insertSection.run(caseId, s.order, s.kind, s.content);
    if (item.labelsChanged || c.referenceLabels || c.sourceDiagnosis) {
      const v = referenceValues(c, ctx.extras);
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
      id: cases.id,
      externalId: cases.externalId,
      position: cases.position,
      ageGroup: cases.ageGroup,
      sex: cases.sex,
      numSections: cases.numSections,
      version: cases.version,
      hasReferenceLabels: sql<boolean>`${referenceLabels.diagnosisSufficiency} is not null`,
    })
    .from(cases)
    .leftJoin(referenceLabels, eq(referenceLabels.caseId, cases.id))
    .where(and(eq(cases.studyId, studyId), notPending(cases.importRun)))
    .orderBy(asc(cases.position))
    .all()
    .map((r) => ({ ...r, hasReferenceLabels: Boolean(r.hasReferenceLabels) }));
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
      const study = tx.select().from(studies).where(eq(studies.id, input.studyId)).get();
      if (!study) throw new ServiceError("No such study.", undefined, 404);
      if (study.adjudicationMode === input.mode) return;
      const inProgress = tx
        .select({ n: count() })
        .from(adjudications)
        .innerJoin(cases, eq(cases.id, adjudications.caseId))
        .where(and(eq(cases.studyId, input.studyId), eq(adjudications.status, "in_progress")))
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
