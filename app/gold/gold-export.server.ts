/**
 * Gold labels out (docs/safe-psych.md#gold-labels-and-expert-action-labels, docs/formats.md#released-csv-datacsv, docs/formats.md#data_gtjson): data_gt.json, samples.json and the released data.csv in the reference
 * implementation's formats, with a manifest. Deterministic: records in import order, byte-identical repeats (only the
 * manifest's export time differs). And back in: import-gold reads a data_gt.json as a study with reference labels.
 */
import { settleDueLocks } from "../annotation/public.server";
import { jsonDumps, jsonDumpsIndent2Element } from "../python-compat/json";
import { getRaterAgreement } from "../study-report/public.server";
import { withPseudonyms } from "../study-report/public";
import { createHash } from "node:crypto";
import { closeSync, createReadStream, fstatSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { runDbWorker } from "../platform/db-worker.server";
import { writeFileStreaming } from "../platform/output-files.server";
import { and, asc, count, eq, inArray } from "drizzle-orm";
import { annotations, assignments, caseOutcomes, referenceLabels } from "../../db/schema";
import { visibleCases, visibleStudies } from "../../db/schema-visible";
import { CASE_STATES, FINAL_STATES, type CaseProgressState } from "../annotation/public";
import {
  type CaseLabel,
  fromReferenceAgreement,
  fromReferenceLabel,
  type MissingInfoKey,
  REFERENCE_LABEL_COLUMNS,
  type ReferenceAgreement,
  type ReferenceLabel,
  storedReferenceCells,
} from "../labels/labels";
import type { DisputeReason } from "./domain/gold";
import { buildDataGtRecord, buildSamplesRecord, type DataGtRecord, type GoldCase } from "./domain/safe-psych-format";
import { dataGtRecords, readGoldCase, formatDataGtError } from "./domain/safe-psych-read";
import {
  FILE_CHANGED_MESSAGE,
  FileChangedError,
  secondPass,
  textSource,
  type ImportSource,
  type PassKey,
} from "../formats/import-source";
import { DATA_CSV_COLUMNS, releasedCsvRow } from "./domain/safe-psych-serialize";
import { formatReferenceCsvRecord } from "../formats/csv-text";
import type { SectionKind } from "../annotation/public";
import type { Db } from "../platform/db.server";
import { icd10Index } from "../icd10/icd10.server";
import { softwareVersion } from "../platform/paths.server";
import { labelOfAnnotation } from "./outcomes.server";
import { guidelinesManifest } from "../guidelines/guidelines.server";
import { importCases, type ImportPlan, SAFE_PSYCH_GUIDELINES } from "../annotation/public.server";
import { readManifestSeed } from "./domain/gold-manifest";

export { CASE_STATES, FINAL_STATES, type CaseProgressState };

export interface CaseProgress {
  caseId: number;
  externalId: string;
  position: number;
  state: CaseProgressState;
  submitted: number;
  assigned: number;
}

/** Where every case of a study stands; Concord's own outcome takes precedence over imported reference labels. */
export function listCaseProgress(db: Db, studyId: number): CaseProgress[] {
  settleDueLocks(db);
  const rows = db
    .select({
      caseId: visibleCases.id,
      externalId: visibleCases.externalId,
      position: visibleCases.position,
      outcome: caseOutcomes.status,
      reference: referenceLabels.diagnosisSufficiency,
    })
    .from(visibleCases)
    .leftJoin(caseOutcomes, eq(caseOutcomes.caseId, visibleCases.id))
    .leftJoin(referenceLabels, eq(referenceLabels.caseId, visibleCases.id))
    .where(eq(visibleCases.studyId, studyId))
    .orderBy(asc(visibleCases.position))
    .all();
  const assigned = new Map<number, number>();
  for (const r of db
    .select({ caseId: assignments.caseId, n: count() })
    .from(assignments)
    .innerJoin(visibleCases, eq(visibleCases.id, assignments.caseId))
    .where(eq(visibleCases.studyId, studyId))
    .groupBy(assignments.caseId)
    .all())
    assigned.set(r.caseId, r.n);
  const submitted = new Map<number, number>();
  for (const r of db
    .select({ caseId: annotations.caseId, n: count() })
    .from(annotations)
    .innerJoin(visibleCases, eq(visibleCases.id, annotations.caseId))
    .where(and(eq(visibleCases.studyId, studyId), inArray(annotations.status, ["submitted", "locked"])))
    .groupBy(annotations.caseId)
    .all())
    submitted.set(r.caseId, r.n);
  return rows.map((r) => {
    const a = assigned.get(r.caseId) ?? 0;
    let state: CaseProgressState;
    if (r.outcome) state = r.outcome;
    else if (r.reference !== null && r.reference !== undefined) state = "reference";
    else if (a < 2) state = "unassigned";
    else state = "in_annotation";
    return {
      caseId: r.caseId,
      externalId: r.externalId,
      position: r.position,
      state,
      assigned: a,
      submitted: submitted.get(r.caseId) ?? 0,
    };
  });
}

export function countByState(rows: CaseProgress[]): Record<CaseProgressState, number> {
  const out = Object.fromEntries(CASE_STATES.map((s) => [s, 0])) as Record<CaseProgressState, number>;
  for (const r of rows) out[r.state]++;
  return out;
}

interface Extras {
  adjudicated: boolean;
  adjudicationReason: DisputeReason | null;
  missingInfo: string[];
  missingInfoOther: string | null;
  annotators: GoldCase["annotators"];
}

function referenceGold(row: typeof referenceLabels.$inferSelect): { gold: CaseLabel; extras: Extras | null } {
  const extras = row.extras ? (row.extras as Extras) : null;
  const gold = fromReferenceLabel(storedReferenceCells(row) as ReferenceLabel, {
    missingInfo: (extras?.missingInfo ?? []) as MissingInfoKey[],
    missingInfoOther: extras?.missingInfoOther ?? null,
  });
  return { gold, extras };
}

export interface ExportOptions {
  studyId: number;
  /** Leave out presenting_symptoms_label: the reference's stage-1 script then behaves as released (docs/evaluation.md#stage-1-clarification-script). */
  asReleased?: boolean;
  /** Export the final cases even when others are not final; recorded in the manifest. */
  allowPartial?: boolean;
  /** The export time written into the manifest (the only thing that differs between repeated exports). */
  now?: Date;
}

export type ExportResult =
  | {
      ok: true;
      files: Record<"data_gt.json" | "samples.json" | "data.csv" | "manifest.json", string>;
      counts: Record<CaseProgressState, number>;
      exported: number;
    }
  | { ok: false; message: string; counts: Record<CaseProgressState, number> };

/** How the command line names the way round a refusal; the web page names its checkbox instead. */
const CLI_PARTIAL_HINT = "export with --allow-partial";

/**
 * Why a full export is refused now (some cases not final), or null when it is not. `partialHint` says how to export
 * the final cases only, in the words of the caller (the command's flag, the progress page's checkbox).
 */
export function goldExportRefusal(db: Db, studyId: number, partialHint = CLI_PARTIAL_HINT): string | null {
  settleDueLocks(db);
  return refusalOfCounts(countCaseStates(db, studyId), partialHint);
}

function refusalOfCounts(counts: Record<CaseProgressState, number>, partialHint: string): string | null {
  const notFinal = CASE_STATES.filter((s) => !FINAL_STATES.includes(s)).reduce((n, s) => n + counts[s], 0);
  if (!notFinal) return null;
  const total = CASE_STATES.reduce((n, s) => n + counts[s], 0);
  const parts = CASE_STATES.filter((s) => !FINAL_STATES.includes(s) && counts[s]).map(
    (s) => `${counts[s]} ${s.replace("_", " ")}`,
  );
  return `${notFinal} of ${total} cases are not final (${parts.join(", ")}). Finish them, or ${partialHint}.`;
}

/**
 * A case's state in SQL, as listCaseProgress decides it: Concord's outcome, else imported reference labels, else
 * whether two annotators are assigned. `c`, `o` and `r` are the case, its outcome and its reference labels.
 */
const STATE_SQL = `case
  when o.status is not null then o.status
  when r.diagnosis_sufficiency is not null then 'reference'
  when (select count(*) from assignments a where a.case_id = c.id) < 2 then 'unassigned'
  else 'in_annotation' end`;

const CASES_SQL = `from visible_cases c
  left join case_outcomes o on o.case_id = c.id
  left join reference_labels r on r.case_id = c.id
  where c.study_id = ?`;

/** How many of the study's cases are in each state, counted by the database (on `db`'s connection, in its transaction). */
function countCaseStates(db: Db, studyId: number): Record<CaseProgressState, number> {
  const out = Object.fromEntries(CASE_STATES.map((s) => [s, 0])) as Record<CaseProgressState, number>;
  const rows = db.$client
    .prepare(`select ${STATE_SQL} as state, count(*) as n ${CASES_SQL} group by 1`)
    .all(studyId) as { state: CaseProgressState; n: number }[];
  for (const r of rows) out[r.state] += r.n;
  return out;
}

/**
 * The study's final cases in import order, EXPORT_BATCH at a time: keyset pages (a row value, which the planner
 * reads as a range of the study's position index; the same test spelt with `or` scans the study from its start).
 */
function* finalCaseBatches(db: Db, studyId: number): Generator<Pick<CaseProgress, "caseId" | "state">[]> {
  const page = db.$client.prepare(
    `select c.id as caseId, c.position as position, ${STATE_SQL} as state ${CASES_SQL}
       and ${STATE_SQL} in (${FINAL_STATES.map((s) => `'${s}'`).join(", ")})
       and (c.position, c.id) > (?, ?)
     order by c.position, c.id limit ${EXPORT_BATCH}`,
  );
  let after = { position: Number.MIN_SAFE_INTEGER, caseId: 0 };
  for (;;) {
    const rows = page.all(studyId, after.position, after.caseId) as {
      caseId: number;
      position: number;
      state: CaseProgressState;
    }[];
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1]!;
  }
}

/** The members of the manifest's `rater_agreement` that hold coefficients (`ci95` their intervals). */
const MANIFEST_FLOAT_KEYS = new Set(["value", "se", "ci95"]);

/** Agreement per pair and over time, the annotators pseudonymised: the export carries no identities. */
function raterAgreementOf(db: Db, studyId: number) {
  return withPseudonyms(getRaterAgreement(db, studyId)!.agreement);
}

export type GoldFile = "data_gt.json" | "samples.json" | "data.csv" | "manifest.json";

export type StreamResult =
  | { ok: true; counts: Record<CaseProgressState, number>; exported: number }
  | { ok: false; message: string; counts: Record<CaseProgressState, number> };

/** Cases read and written per step of the export: memory holds one batch of records, not the study. */
export const EXPORT_BATCH = 500;

/**
 * One file written as `json.dumps(records, indent=2)` one record at a time: the same bytes as jsonDumpsIndent2 of
 * the whole array (each record's own lines indented by two more spaces; a JSON string holds no raw line break).
 */
class JsonArrayWriter {
  private first = true;
  private readonly out: PieceWriter;
  records = 0;
  constructor(file: GoldFile, write: (file: GoldFile, text: string) => void) {
    this.out = new PieceWriter(file, write);
  }
  add(record: object) {
    this.out.update((this.first ? "[\n" : ",\n") + jsonDumpsIndent2Element(record));
    this.first = false;
    this.records++;
  }
  end(): string {
    this.out.update(this.first ? "[]" : "\n]");
    return this.out.end();
  }
}

/**
 * A file's text given in many small pieces (a record each), hashed and handed to `write` about 64 KiB at a time,
 * joined once for both: one hash update and one write per record cost more in calls and conversions than the
 * hashing itself, and joining the pieces once for the hash and again for the file cost a second copy of the export.
 */
class PieceWriter {
  private readonly hash = createHash("sha256");
  private pending: string[] = [];
  private size = 0;
  constructor(
    private readonly file: GoldFile,
    private readonly write: (file: GoldFile, text: string) => void,
  ) {}
  update(text: string) {
    this.pending.push(text);
    this.size += text.length;
    if (this.size >= 1 << 16) this.flush();
  }
  private flush() {
    if (this.size) {
      const text = this.pending.length === 1 ? this.pending[0]! : this.pending.join("");
      this.hash.update(text, "utf8");
      this.write(this.file, text);
    }
    this.pending = [];
    this.size = 0;
  }
  /** Hands out what is left; the file's SHA-256. */
  end(): string {
    this.flush();
    return this.hash.digest("hex");
  }
}

class CsvWriter {
  private readonly out: PieceWriter;
  records = 0;
  constructor(file: GoldFile, write: (file: GoldFile, text: string) => void) {
    this.out = new PieceWriter(file, write);
    this.out.update(formatReferenceCsvRecord("data.csv", [...DATA_CSV_COLUMNS]));
  }
  add(record: DataGtRecord) {
    this.out.update(formatReferenceCsvRecord("data.csv", releasedCsvRow(record)));
    this.records++;
  }
  end(): string {
    return this.out.end();
  }
}

/** Statements of the export, prepared once and reused for every batch (ids passed as one JSON array). */
function exportStatements(db: Db) {
  const $ = db.$client;
  const inIds = "(select value from json_each(?))";
  return {
    cases: $.prepare(
      `select id, external_id as externalId, age_group as ageGroup, sex from visible_cases where id in ${inIds}`,
    ),
    sections: $.prepare(
      `select case_id as caseId, kind, content from case_sections where case_id in ${inIds} order by case_id, ord`,
    ),
    references: $.prepare(
      `select case_id as caseId, diagnosis_sufficiency as diagnosisSufficiency,
              diagnosis_sufficiency_agreement as diagnosisSufficiencyAgreement, diagnosis,
              diagnosis_agreement as diagnosisAgreement, earliest_sufficient_section as earliestSufficientSection,
              source_diagnosis as sourceDiagnosis, extras
         from reference_labels where case_id in ${inIds}`,
    ),
  };
}

/** The gold records of `batch` (final cases, in export order), read with one query per table. */
function* goldRecords(
  db: Db,
  statements: ReturnType<typeof exportStatements>,
  batch: Pick<CaseProgress, "caseId" | "state">[],
  asReleased: boolean,
): Generator<DataGtRecord> {
  const ids = batch.map((p) => p.caseId);
  const idList = JSON.stringify(ids);
  type CaseRow = { id: number; externalId: string; ageGroup: string; sex: string };
  const caseRows = new Map((statements.cases.all(idList) as CaseRow[]).map((c) => [c.id, c]));
  const sectionsOf = new Map<number, GoldCase["sections"]>(ids.map((id) => [id, {}]));
  for (const s of statements.sections.all(idList) as { caseId: number; kind: string; content: string }[])
    sectionsOf.get(s.caseId)![s.kind as SectionKind] = s.content;
  type RefRow = Omit<typeof referenceLabels.$inferSelect, "extras"> & { extras: string | null };
  const refs = new Map(
    (statements.references.all(idList) as RefRow[]).map((r) => [
      r.caseId,
      { ...r, extras: r.extras === null ? null : (JSON.parse(r.extras) as object) },
    ]),
  );
  const decided = batch.filter((p) => p.state !== "reference").map((p) => p.caseId);
  const outcomes = new Map(
    (decided.length ? db.select().from(caseOutcomes).where(inArray(caseOutcomes.caseId, decided)).all() : []).map(
      (o) => [o.caseId, o],
    ),
  );
  const annotationIds = [...outcomes.values()].flatMap((o) => (o.annotatorOrder as number[] | null) ?? []);
  const annotationRows = new Map(
    (annotationIds.length ? db.select().from(annotations).where(inArray(annotations.id, annotationIds)).all() : []).map(
      (a) => [a.id, a],
    ),
  );
  for (const p of batch) {
    const c = caseRows.get(p.caseId)!;
    const sections = sectionsOf.get(c.id)!;
    let goldCase: GoldCase;
    if (p.state === "reference") {
      const ref = refs.get(c.id)!;
      const { gold, extras } = referenceGold(ref);
      goldCase = {
        id: c.externalId,
        ageGroup: c.ageGroup,
        sex: c.sex,
        sections,
        gold,
        agreement: fromReferenceAgreement(storedReferenceCells(ref) as ReferenceAgreement),
        adjudicated: extras?.adjudicated ?? false,
        adjudicationReason: extras?.adjudicationReason ?? null,
        annotators: extras?.annotators ?? null,
      };
    } else {
      const o = outcomes.get(c.id)!;
      const [a, b] = o.annotatorOrder as [number, number];
      const label = (id: number) => labelOfAnnotation(annotationRows.get(id)!);
      goldCase = {
        id: c.externalId,
        ageGroup: c.ageGroup,
        sex: c.sex,
        sections,
        gold: o.gold! as CaseLabel,
        agreement: { sufficiency: o.sufficiencyAgreement, diagnosis: o.diagnosisAgreement },
        adjudicated: o.status === "adjudicated",
        adjudicationReason: (o.disputeReason as DisputeReason | null) ?? null,
        annotators: { A: label(a), B: label(b) },
      };
    }
    yield buildDataGtRecord(goldCase, { asReleased });
  }
}

/**
 * The export, written piece by piece through `write` in bounded memory (a batch of records at a time): data_gt.json,
 * samples.json and data.csv as the records come, manifest.json last. Everything is read in one read transaction, so
 * the files are one consistent state of the study even while annotators keep saving. Nothing is written when the
 * study has cases that are not final and `allowPartial` is not set.
 */
export function streamGold(
  db: Db,
  options: ExportOptions,
  write: (file: GoldFile, text: string) => void,
): StreamResult {
  // A pair whose grace period is over is locked (its outcome derived) first; a pair still in it is not final and is
  // left out (docs/safe-psych.md, "Second chances").
  settleDueLocks(db);
  return db.transaction((tx): StreamResult => {
    const rdb = tx as unknown as Db;
    const study = rdb.select().from(visibleStudies).where(eq(visibleStudies.id, options.studyId)).get();
    if (!study) throw new Error(`no study ${options.studyId}`);
    // Counted by the database and read a batch at a time: the export holds one batch, not the study's every case.
    const counts = countCaseStates(db, study.id);
    const refusal = options.allowPartial ? null : refusalOfCounts(counts, CLI_PARTIAL_HINT);
    if (refusal) return { ok: false, counts, message: refusal };
    const finalCount = FINAL_STATES.reduce((n, s) => n + counts[s], 0);
    const casesInStudy = CASE_STATES.reduce((n, s) => n + counts[s], 0);
    const dataGt = new JsonArrayWriter("data_gt.json", write);
    const samples = new JsonArrayWriter("samples.json", write);
    const csv = new CsvWriter("data.csv", write);
    const tally = { sufficient: 0, insufficient: 0, agreement: 0, adjudicated: 0 };
    const statements = exportStatements(db);
    for (const batch of finalCaseBatches(db, study.id)) {
      for (const r of goldRecords(rdb, statements, batch, Boolean(options.asReleased))) {
        dataGt.add(r);
        samples.add(buildSamplesRecord(r));
        csv.add(r);
        const agreement = fromReferenceAgreement(r);
        if (r.diagnosis_sufficiency === "1") tally.sufficient++;
        if (r.diagnosis_sufficiency === "0") tally.insufficient++;
        if (agreement.sufficiency && agreement.diagnosis) tally.agreement++;
        if (r.adjudicated) tally.adjudicated++;
      }
    }
    const shas = { dataGt: dataGt.end(), samples: samples.end(), csv: csv.end() };
    const manifest = {
      software: "concord",
      software_version: softwareVersion(),
      study: study.name,
      adjudication_mode: study.adjudicationMode,
      // Replays each record's `annotators` {A, B} order (docs/safe-psych.md, "Annotator A and B").
      annotator_order_seed: study.annotatorOrderSeed,
      exported_at: (options.now ?? new Date()).toISOString(),
      as_released: Boolean(options.asReleased),
      // The guidelines in force and the version each submission was made under (docs/guidelines.md).
      guidelines: guidelinesManifest(
        rdb,
        { scope: "safe_psych", scopeId: study.id },
        SAFE_PSYCH_GUIDELINES.submissionsByVersion,
      ),
      allow_partial: Boolean(options.allowPartial),
      counts: {
        cases_in_study: casesInStudy,
        exported: finalCount,
        by_state: counts,
        sufficient: tally.sufficient,
        insufficient: tally.insufficient,
        agreement_cases: tally.agreement,
        adjudicated: tally.adjudicated,
      },
      // Agreement per pair and over time of the study's primary annotations, before adjudication, over every case
      // with both in (not only the exported ones); docs/statistics.md, "Agreement per pair and over time".
      rater_agreement: raterAgreementOf(rdb, study.id),
      files: {
        "data_gt.json": { sha256: shas.dataGt, records: dataGt.records },
        "samples.json": { sha256: shas.samples, records: samples.records },
        "data.csv": { sha256: shas.csv, records: csv.records },
      },
    };
    // Python's json.dumps(indent=2) with the coefficients as floats; every other member is an integer or text,
    // written as jsonDumpsIndent2 would.
    write("manifest.json", jsonDumps(manifest, { indent: 2, floatKeys: MANIFEST_FLOAT_KEYS }) + "\n");
    return { ok: true, counts, exported: finalCount };
  });
}

/** The export as four strings (the admin page's download and the tests); `streamGold` writes the same bytes. */
export function exportGold(db: Db, options: ExportOptions): ExportResult {
  const parts: Record<GoldFile, string[]> = {
    "data_gt.json": [],
    "samples.json": [],
    "data.csv": [],
    "manifest.json": [],
  };
  const result = streamGold(db, options, (file, text) => parts[file].push(text));
  if (!result.ok) return result;
  return {
    ...result,
    files: {
      "data_gt.json": parts["data_gt.json"].join(""),
      "samples.json": parts["samples.json"].join(""),
      "data.csv": parts["data.csv"].join(""),
      "manifest.json": parts["manifest.json"].join(""),
    },
  };
}

/** One file of the gold export, written to `path` (a new file, readable by this user only). */
export interface GoldFileWork extends ExportOptions {
  file: GoldFile;
  path: string;
}

/**
 * Writes one file of the export to `work.path` (`streamGold`'s bytes of that file) through the output layer: complete
 * or absent, and a full disk is an error naming it (docs/reliability.md, "Atomic files"), never a short file.
 */
export function writeGoldFile(db: Db, work: GoldFileWork): StreamResult {
  return writeFileStreaming(
    work.path,
    (write) =>
      streamGold(db, work, (file, text) => {
        if (file === work.file) write(text);
      }),
    (result) => result.ok,
    { mode: 0o600 },
  );
}

/**
 * One file of the export for the progress page's download, made on a worker thread (docs/architecture.md,
 * "Background jobs"): a big study's export takes seconds, which this server's thread spends answering other
 * requests instead. The file is written into a private temporary folder, opened, and its folder removed at once, so
 * nothing of it is left on disk however the download ends; the answer streams from the open file. A refusal (cases
 * not final) writes nothing. A database in memory (tests) exports on this thread.
 */
export async function goldFileOffThread(
  db: Db,
  options: ExportOptions & { file: GoldFile },
): Promise<
  ({ ok: true; body: ReadableStream<Uint8Array>; length: number } | { ok: false; message: string }) & StreamResultCounts
> {
  const dir = mkdtempSync(join(tmpdir(), "concord-gold-"));
  try {
    const path = join(dir, options.file);
    const work: GoldFileWork = { ...options, path };
    const result = await runDbWorker<GoldFileWork, StreamResult>("gold-export", db, work, (here) =>
      writeGoldFile(here, work),
    );
    if (!result.ok) return result;
    const fd = openSync(path, "r");
    let length: number;
    try {
      length = fstatSync(fd).size;
    } catch (e) {
      closeSync(fd);
      throw e;
    }
    rmSync(dir, { recursive: true, force: true });
    const body = Readable.toWeb(createReadStream("", { fd })) as ReadableStream<Uint8Array>;
    return { ok: true, counts: result.counts, body, length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type StreamResultCounts = { counts: Record<CaseProgressState, number> };

/**
 * Reads a data_gt.json (Concord's or the reference's) into a study: the cases with their labels as reference labels,
 * Concord's extra fields kept, so that exporting the study writes the same records again. With the export's
 * manifest.json, the study also gets the export's A/B order seed (docs/safe-psych.md, "Annotator A and B"), so that
 * it draws every case's order as the original study did; without one (the reference's files, older exports) a
 * notice says that a new seed will be drawn.
 */
/**
 * A data_gt.json to import: a text (a test), or the command line's file streamed through the import contract
 * (`importFileSource` in app/cli/io.ts), whose `textPieces` read it again from its start each time.
 */
export type DataGtSource = ImportSource & { textPieces(): Iterable<string> };

export function importGold(
  db: Db,
  input: {
    studyName: string;
    text: string | DataGtSource;
    filename: string;
    actorId: string | null;
    /** The export's manifest.json, when there is one. */
    manifest?: { text: string; filename: string } | null;
  },
):
  | { ok: false; errors: string[] }
  | ({ ok: true } & ImportPlan & { written: boolean; annotatorOrderSeed: number | null; notices: string[] }) {
  const notices: string[] = [];
  let annotatorOrderSeed: number | null = null;
  let seedLine = 1;
  let manifestSha256: string | null = null;
  if (input.manifest) {
    const m = readManifestSeed(input.manifest.text, input.manifest.filename);
    if (!m.ok) return { ok: false, errors: [m.error] };
    annotatorOrderSeed = m.seed;
    seedLine = m.line;
    if (m.notice) notices.push(m.notice);
    manifestSha256 = m.dataGtSha256;
  } else
    notices.push(
      `${input.filename}: no manifest.json beside it (the reference's files, or an export without its manifest): the study's A/B order will be drawn from a new seed.`,
    );
  const text = input.text;
  const gold: DataGtSource = typeof text === "string" ? { ...textSource(text), textPieces: () => [text] } : text;
  const readOptions = { isValidCode: (c: string) => icd10Index().isValidChapterVCode(c) };
  // Two passes over the file (docs/reliability.md, "Memory bounded by the longest line"): the first validates every
  // record and keeps of each its id and the hash of its JSONL line, with what the case import needs of it; the second
  // reads the file again as the case import reads its JSONL, and re-expresses it record by record.
  const first: PassKey[] = [];
  const referenceExtras = new Map<string, object | null>();
  let byteLength = 0;
  const read = dataGtRecords(gold.textPieces(), readOptions);
  for (const { record } of read.records) {
    const line = goldCaseLine(record);
    const o = JSON.parse(line) as { id: string; concord_extras: object | null };
    referenceExtras.set(o.id, o.concord_extras ?? null);
    byteLength += Buffer.byteLength(line) + 1;
    first.push({ key: record.id, hash: createHash("sha256").update(line).digest("hex") });
  }
  const readErrors = read.errors();
  if (readErrors.length) return { ok: false, errors: readErrors.map((e) => formatDataGtError(e, input.filename)) };
  const firstSha256 = gold.sha256();
  if (input.manifest && manifestSha256 !== null && manifestSha256 !== firstSha256)
    notices.push(
      `${input.manifest.filename}: its sha256 of data_gt.json is not that of ${input.filename} (the file was changed after the export); its annotator_order_seed is used all the same.`,
    );
  // The JSONL is handed to the case import 500 lines at a time as the second pass reads them, never held whole.
  const bytes = {
    byteLength,
    *chunks() {
      function* lines(): Generator<{ id: string; line: string }> {
        const again = dataGtRecords(gold.textPieces(), readOptions);
        for (const { record } of again.records) yield { id: record.id, line: goldCaseLine(record) };
        if (again.errors().length) throw new FileChangedError();
      }
      for (const batch of secondPass({
        source: gold,
        records: lines,
        keyOf: (r) => ({ key: r.id, hash: createHash("sha256").update(r.line).digest("hex") }),
        first,
        firstSha256,
      }))
        yield Buffer.from(batch.map((r) => r.line).join("\n") + "\n");
    },
  };
  let result;
  try {
    result = importCases(db, {
      studyName: input.studyName,
      bytes,
      filename: input.filename.replace(/\.json$/, "") + ".jsonl",
      format: "jsonl",
      actorId: input.actorId,
      referenceExtras,
      annotatorOrderSeed,
    });
  } catch (error) {
    // The second pass did not read what the first checked: what the import wrote is removed (importCases).
    if (error instanceof FileChangedError) return { ok: false, errors: [`${input.filename}: ${FILE_CHANGED_MESSAGE}`] };
    throw error;
  }
  if (!result.ok)
    return {
      ok: false,
      errors: [
        ...[...result.parse.errors, ...result.conflicts].map(
          (e) => `${input.filename}: element ${e.line}: ${e.message}`,
        ),
        ...(result.seedConflict ? [`${input.manifest!.filename}:${seedLine}: ${result.seedConflict}`] : []),
      ],
    };
  return { ...result, ok: true, annotatorOrderSeed, notices };
}

/** A data_gt.json record re-expressed as a line of Concord's JSONL case import, so one path validates and writes. */
function goldCaseLine(record: DataGtRecord): string {
  const { goldCase } = readGoldCase(record);
  const extras: Extras | null =
    record.action_labels === undefined
      ? null
      : {
          adjudicated: goldCase.adjudicated,
          adjudicationReason: goldCase.adjudicationReason,
          missingInfo: goldCase.gold.sufficiency === "insufficient" ? goldCase.gold.missingInfo : [],
          missingInfoOther: goldCase.gold.sufficiency === "insufficient" ? goldCase.gold.missingInfoOther : null,
          annotators: goldCase.annotators,
        };
  return JSON.stringify({
    id: record.id,
    age_group: record.age_group,
    sex: record.sex,
    ...Object.fromEntries(record.sections_metadata.map((m) => [m.section_name, m.content])),
    labels: Object.fromEntries(REFERENCE_LABEL_COLUMNS.map((c) => [c, record[c]])),
    concord_extras: extras,
  });
}
