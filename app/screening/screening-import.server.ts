/**
 * Importing a screening study's files (docs/screening.md): the corpus, the automatic screen's labels and a recall
 * screen's tiers. All files given together are validated first, against the database and each other; then written
 * all or not at all, in short transactions: into an existing study behind the import run's ids on the new rows
 * (`importScreeningFiles`), a new study's behind the hidden study (`importIntoNewScreeningStudy`).
 * Re-importing the same files changes nothing. The corpus and the screen labels are fixed once round 1 has opened
 * (the control-inclusion rate estimates that screen's misses); recall tiers are taken only after a round that calls
 * for a recall round, for items no round has used.
 */
import { createHash } from "node:crypto";
import { beginImportRun } from "../platform/import-runs.server";
import { and, asc, eq, max } from "drizzle-orm";
import {
  screeningItems,
  screeningLabels,
  screeningRecallTiers,
  screeningRoundItems,
  screeningRounds,
} from "../../db/schema";
import { visibleScreeningItems, visibleScreeningLabels, visibleScreeningRecallTiers } from "../../db/schema-visible";
import {
  itemsOfFile,
  labelsOfFile,
  tiersOfFile,
  type FileFormat,
  type ImportIssue,
  type Message,
  type ParsedItem,
  type ParsedLabel,
  type ParsedTier,
  type StreamedParse,
} from "./domain/screening-import";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import {
  getScreeningStudy,
  insertScreeningStudy,
  recordStudyCreated,
  studyState,
  updateScreeningSettings,
  type ScreeningSettings,
  type ScreeningStudy,
} from "./screening.server";
import { importBehindHiddenParent, type HiddenParent } from "../platform/hidden-parents.server";
import { ServiceError } from "../platform/service-error";
import {
  FILE_CHANGED_MESSAGE,
  FileChangedError,
  secondPass,
  textSource,
  type ImportSource,
  type PassKey,
} from "../formats/import-source";

/**
 * A file of a screening import: its bytes (a page's upload), or the command line's file streamed through the import
 * contract (an ImportSource: read line by line, never whole; docs/reliability.md, "Bulk imports").
 */
export type ScreeningFile = { filename: string; format?: FileFormat } & (
  { bytes: Uint8Array } | { source: ImportSource }
);

const fileInput = (f: ScreeningFile): Uint8Array | ImportSource => ("source" in f ? f.source : f.bytes);

/** The sha256 of a file's bytes (a streamed file's as its last pass read them). */
const fileSha256 = (f: ScreeningFile): string =>
  "source" in f ? (f.source.sha256() ?? "") : createHash("sha256").update(f.bytes).digest("hex");

export type ScreeningFileKind = "items" | "labels" | "tiers";

export interface FileReport {
  kind: ScreeningFileKind;
  filename: string;
  errors: ImportIssue[];
  warnings: ImportIssue[];
  records: number;
  created: number;
  changed: number;
  unchanged: number;
}

export interface ScreeningImportReport {
  ok: boolean;
  files: FileReport[];
  /** The round the tiers were imported for (only with a tiers file). */
  tiersForRound: number | null;
  written: boolean;
}

/** sha256 of what a reviewer sees of an item. */
export function itemContentHash(kind: string, messages: readonly Message[]): string {
  return createHash("sha256")
    .update(JSON.stringify([kind, messages.map((m) => [m.role, m.content])]))
    .digest("hex");
}

function contentOf(item: ParsedItem): string {
  return item.kind === "text" ? item.messages[0]!.content : JSON.stringify(item.messages);
}

function report(
  kind: ScreeningFileKind,
  file: ScreeningFile,
  errors: ImportIssue[],
  warnings: ImportIssue[],
  records: number,
): FileReport {
  return { kind, filename: file.filename, errors, warnings, records, created: 0, changed: 0, unchanged: 0 };
}

/**
 * Validates and (unless `dryRun`) imports any of the three files into an existing study, without holding the write
 * lock for long (docs/reliability.md, "Imports that add rows to an existing parent"). Labels may name items of the
 * corpus file given with them. Nothing is written when any file has an error. The files are checked before any lock;
 * the new items, labels and tiers are written in the import run's short transactions, each row carrying the run's id
 * (hidden from every reader); the last transaction checks again that the study is as the check read it, applies
 * `settings` (the command line's options), writes the changed rows and makes everything visible at once. A study
 * changed meanwhile (a round opened, another writer) refuses the import (ServiceError) and nothing of it is kept.
 */
export function importScreeningFiles(
  db: Db,
  input: ScreeningFilesInput & {
    studyId: number;
    /** New settings of the study, applied in the import's last transaction (checked against the files first). */
    settings?: ScreeningSettings;
    /** For tests: the chunks' lock budget, and a call after each committed chunk. */
    chunkBudgetMs?: number;
    onChunk?: (done: number) => void;
  },
): ScreeningImportReport {
  const now = input.now ?? Date.now();
  const study = getScreeningStudy(db, input.studyId);
  if (!study) throw new ServiceError("No such screening study.", undefined, 404);
  const checked = checkFiles(db, { id: study.id, categories: input.settings?.categories ?? study.categories }, input);
  const { ok, files, tiersForRound } = checked;
  const anyChange = files.some((f) => f.created + f.changed > 0);
  if (!ok || input.dryRun || (!anyChange && !input.settings)) return { ok, files, tiersForRound, written: false };
  const before0 = studySnapshot(db, study.id, tiersForRound);
  const { run, prepared: position } = beginImportRun(
    db,
    `screening-study:${study.name}`,
    (tx) =>
      getScreeningStudy(tx, study.id)
        ? (tx
            .select({ p: max(visibleScreeningItems.position) })
            .from(visibleScreeningItems)
            .where(eq(visibleScreeningItems.studyId, study.id))
            .get()?.p ?? 0)
        : null,
    { waitMs: 0, chunkBudgetMs: input.chunkBudgetMs },
  );
  const changedMeanwhile = () =>
    new ServiceError(
      `The screening study "${study.name}" changed while the files were being imported: nothing was imported. Import the files again.`,
      undefined,
      409,
    );
  if (position === null) {
    run.abandon();
    throw changedMeanwhile();
  }
  const ids = new Map([...checked.existing].map(([k, v]) => [k, v.id]));
  // The changed rows of existing items are written in the last transaction, with the guard: the second pass keeps
  // them until then (docs/reliability.md, "Memory bounded by the longest line").
  const changed: ChangedRows = { items: [], labels: [], tiers: [] };
  let written: boolean;
  try {
    let next = position;
    let before = 0;
    for (const batch of secondPasses(checked, input, changed)) {
      run.writeInChunks(
        batch,
        (tx, row) => {
          if ("item" in row) {
            const { parsed, hash } = row.item;
            ids.set(parsed.id, insertItem(tx, study.id, parsed, hash, ++next, now, run.id));
          } else if ("label" in row) writeLabel(tx, ids.get(row.label.id)!, row.label, now, run.id);
          else writeTier(tx, study.id, tiersForRound!, ids.get(row.tier.id)!, row.tier, now, run.id);
        },
        input.onChunk && ((done) => input.onChunk!(before + done)),
      );
      before += batch.length;
    }
    written = run.finish((tx) => {
      // The guard, again in the transaction that writes the changed rows and makes the new ones visible.
      if (studySnapshot(tx, study.id, tiersForRound) !== before0) return { result: false, commit: false };
      if (input.settings)
        updateScreeningSettings(db, { studyId: study.id, settings: input.settings, actorId: input.actorId });
      if (anyChange) writeChanged(tx, study.id, checked, changed, ids, input, now);
      return { result: true, commit: true };
    });
  } catch (error) {
    run.abandon();
    throw error;
  }
  if (!written) throw changedMeanwhile();
  return { ok, files, tiersForRound, written: anyChange };
}

type AddedRow = { item: { parsed: ParsedItem; hash: string } } | { label: ParsedLabel } | { tier: ParsedTier };

/** The changed rows of existing items, kept by the second pass for the import's last transaction. */
interface ChangedRows {
  items: { parsed: ParsedItem; hash: string }[];
  labels: ParsedLabel[];
  tiers: ParsedTier[];
}

/**
 * The second pass over an import's files (docs/reliability.md, "Memory bounded by the longest line"): each file read
 * again through `secondPass` (app/formats/import-source.ts), every row checked to be the one the first pass checked
 * (same id and hash, in the same place, the file's bytes hashing the same), and the rows the import adds handed on
 * in batches of at most 500, in the order new items, new labels, new tiers, each written before the next is read.
 * Rows that change existing ones go to `changed`; unchanged rows are dropped. A file changed between the passes
 * throws a ServiceError naming it; the caller's import run then removes what it wrote.
 */
function* secondPasses(
  checked: CheckedFiles,
  input: ScreeningFilesInput,
  changed: ChangedRows | null,
): Generator<AddedRow[]> {
  const keep = (status: Status) => status === "new" || changed === null;
  if (input.items)
    for (const batch of passOver(input.items, checked.items, (f) => itemsOfFile(fileInput(f), f), itemKey)) {
      const added: AddedRow[] = [];
      for (const parsed of batch) {
        const item = { parsed, hash: itemContentHash(parsed.kind, parsed.messages) };
        if (keep(checked.itemStatus.get(parsed.id)!)) added.push({ item });
        else if (checked.itemStatus.get(parsed.id) === "changed") changed!.items.push(item);
      }
      if (added.length) yield added;
    }
  if (input.labels)
    for (const batch of passOver(
      input.labels,
      checked.labels,
      (f) => labelsOfFile(fileInput(f), checked.labelOptions(f)),
      labelKey,
    )) {
      const added: AddedRow[] = [];
      for (const label of batch) {
        if (keep(checked.labelStatus.get(label.id)!)) added.push({ label });
        else if (checked.labelStatus.get(label.id) === "changed") changed!.labels.push(label);
      }
      if (added.length) yield added;
    }
  if (input.tiers && checked.tiersForRound !== null)
    for (const batch of passOver(
      input.tiers,
      checked.tiers,
      (f) => tiersOfFile(fileInput(f), checked.tierOptions(f)),
      tierKey,
    )) {
      const added: AddedRow[] = [];
      for (const tier of batch) {
        if (keep(checked.tierStatus.get(tier.id)!)) added.push({ tier });
        else if (checked.tierStatus.get(tier.id) === "changed") changed!.tiers.push(tier);
      }
      if (added.length) yield added;
    }
}

/** One file's second pass through `secondPass`: its rows in batches, a row that no longer checks a changed file. */
function passOver<T>(
  file: ScreeningFile,
  { first, firstSha256 }: FirstPass,
  parse: (file: ScreeningFile) => StreamedParse<T>,
  keyOf: (row: T) => PassKey,
): Generator<T[]> {
  function* rows(): Generator<T> {
    const pass = parse(file);
    yield* pass.rows;
    if (pass.result().errors.length) throw new FileChangedError();
  }
  // A page's upload is in memory and cannot change; its bytes' hash stands for the source's.
  const source: ImportSource =
    "source" in file ? file.source : { ...textSource("", file.filename), sha256: () => fileSha256(file) };
  const passes = secondPass({ source, records: rows, keyOf, first, firstSha256 });
  return (function* () {
    try {
      yield* passes;
    } catch (error) {
      if (error instanceof FileChangedError)
        throw new ServiceError(`${file.filename}: ${FILE_CHANGED_MESSAGE}`, undefined, 409);
      throw error;
    }
  })();
}

const hashOf = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("hex");
/** What the first pass keeps of each row: its id and the hash of everything the import writes of it. */
const itemKey = (p: ParsedItem): PassKey => ({
  key: p.id,
  hash: hashOf([itemContentHash(p.kind, p.messages), p.tags, p.source]),
});
const labelKey = (l: ParsedLabel): PassKey => ({
  key: l.id,
  hash: hashOf([l.label, l.category, l.confidence, l.rationale]),
});
const tierKey = (t: ParsedTier): PassKey => ({ key: t.id, hash: hashOf([t.tier, t.rationale]) });

/** The study's items every reader sees (not those of an import still running), in the order they were added. */
function visibleItems(tx: DbOrTx, studyId: number) {
  return tx
    .select({
      id: visibleScreeningItems.id,
      externalId: visibleScreeningItems.externalId,
      contentHash: visibleScreeningItems.contentHash,
      source: visibleScreeningItems.source,
    })
    .from(visibleScreeningItems)
    .where(eq(visibleScreeningItems.studyId, studyId))
    .orderBy(asc(visibleScreeningItems.id))
    .all();
}

/**
 * What the check of an import read of a study, as one string: its settings, its rounds, its visible items, labels
 * and (for a tiers file) tiers. Read again in the last transaction: any difference refuses the import.
 */
function studySnapshot(tx: DbOrTx, studyId: number, tiersForRound: number | null): string {
  const items = visibleItems(tx, studyId);
  const labels = tx
    .select({
      itemId: visibleScreeningLabels.itemId,
      label: visibleScreeningLabels.label,
      category: visibleScreeningLabels.category,
      confidence: visibleScreeningLabels.confidence,
      rationale: visibleScreeningLabels.rationale,
    })
    .from(visibleScreeningLabels)
    .innerJoin(visibleScreeningItems, eq(visibleScreeningItems.id, visibleScreeningLabels.itemId))
    .where(eq(visibleScreeningItems.studyId, studyId))
    .orderBy(asc(visibleScreeningLabels.itemId))
    .all();
  const rounds = tx
    .select({ id: screeningRounds.id, number: screeningRounds.number, status: screeningRounds.status })
    .from(screeningRounds)
    .where(eq(screeningRounds.studyId, studyId))
    .orderBy(asc(screeningRounds.id))
    .all();
  const tiers =
    tiersForRound === null
      ? []
      : tx
          .select({
            itemId: visibleScreeningRecallTiers.itemId,
            tier: visibleScreeningRecallTiers.tier,
            rationale: visibleScreeningRecallTiers.rationale,
          })
          .from(visibleScreeningRecallTiers)
          .where(
            and(
              eq(visibleScreeningRecallTiers.studyId, studyId),
              eq(visibleScreeningRecallTiers.roundNumber, tiersForRound),
            ),
          )
          .orderBy(asc(visibleScreeningRecallTiers.itemId))
          .all();
  return JSON.stringify([getScreeningStudy(tx, studyId), rounds, items, labels, tiers]);
}

interface ScreeningFilesInput {
  items?: ScreeningFile;
  labels?: ScreeningFile;
  tiers?: ScreeningFile;
  actorId: string | null;
  dryRun?: boolean;
  now?: number;
}

type Status = "new" | "changed" | "unchanged";

interface CheckedFiles {
  ok: boolean;
  files: FileReport[];
  tiersForRound: number | null;
  existing: Map<string, { id: number; contentHash: string; source: unknown }>;
  /** What the first pass kept of each file: each row's id and hash (never the rows), and the file's sha256. */
  items: FirstPass;
  itemStatus: Map<string, Status>;
  labels: FirstPass;
  labelStatus: Map<string, Status>;
  labelOptions(file: ScreeningFile): Parameters<typeof labelsOfFile>[1];
  tiers: FirstPass;
  tierStatus: Map<string, Status>;
  tierOptions(file: ScreeningFile): Parameters<typeof tiersOfFile>[1];
}

interface FirstPass {
  first: PassKey[];
  firstSha256: string | null;
}

/** Counts the statuses of a file's rows into its report. */
function count(r: FileReport, status: Map<string, Status>): FileReport {
  for (const s of status.values()) {
    if (s === "new") r.created++;
    else if (s === "changed") r.changed++;
    else r.unchanged++;
  }
  return r;
}

/** Validates the files against the study (and each other); writes nothing. */
function checkFiles(
  tx: DbOrTx,
  study: Pick<ScreeningStudy, "id" | "categories">,
  input: ScreeningFilesInput,
): CheckedFiles {
  const roundsOpened = Boolean(
    tx.select({ id: screeningRounds.id }).from(screeningRounds).where(eq(screeningRounds.studyId, study.id)).get(),
  );
  const existing = new Map(visibleItems(tx, study.id).map((r) => [r.externalId, r]));
  const files: FileReport[] = [];
  const none = (): FirstPass => ({ first: [], firstSha256: null });

  // The corpus, checked row by row: the first pass keeps each item's id, hash and status, not the item.
  const items = none();
  const itemStatus = new Map<string, Status>();
  if (input.items) {
    const parse = itemsOfFile(fileInput(input.items), input.items);
    const errors: ImportIssue[] = [];
    for (const parsed of parse.rows) {
      const hash = itemContentHash(parsed.kind, parsed.messages);
      const found = existing.get(parsed.id);
      const status = !found
        ? "new"
        : found.contentHash !== hash || found.source !== parsed.source
          ? "changed"
          : "unchanged";
      if (status !== "unchanged" && roundsOpened)
        errors.push({
          line: parsed.line,
          message: `item "${parsed.id}" is ${
            status === "new" ? "new" : "changed"
          }, but review has started: the corpus is fixed once round 1 opens.`,
        });
      items.first.push(itemKey(parsed));
      itemStatus.set(parsed.id, status);
    }
    const result = parse.result();
    if (result.errors.length) itemStatus.clear();
    items.firstSha256 = fileSha256(input.items);
    const all = result.errors.length ? result.errors : errors;
    files.push(count(report("items", input.items, all, result.warnings, itemStatus.size), itemStatus));
  }

  // The screen's labels.
  const labels = none();
  const labelStatus = new Map<string, Status>();
  const knownIds = new Set([...existing.keys(), ...itemStatus.keys()]);
  const labelOptions = (f: ScreeningFile) => ({ ...f, knownIds, vocabulary: study.categories });
  if (input.labels) {
    const parse = labelsOfFile(fileInput(input.labels), labelOptions(input.labels));
    const errors: ImportIssue[] = [];
    const stored = new Map(
      tx
        .select({
          externalId: visibleScreeningItems.externalId,
          label: visibleScreeningLabels.label,
          category: visibleScreeningLabels.category,
          confidence: visibleScreeningLabels.confidence,
          rationale: visibleScreeningLabels.rationale,
        })
        .from(visibleScreeningLabels)
        .innerJoin(visibleScreeningItems, eq(visibleScreeningItems.id, visibleScreeningLabels.itemId))
        .where(eq(visibleScreeningItems.studyId, study.id))
        .all()
        .map((r) => [r.externalId, r]),
    );
    for (const l of parse.rows) {
      const s = stored.get(l.id);
      const status = !s
        ? "new"
        : s.label !== l.label ||
            s.category !== l.category ||
            s.confidence !== l.confidence ||
            s.rationale !== l.rationale
          ? "changed"
          : "unchanged";
      labelStatus.set(l.id, status);
      labels.first.push(labelKey(l));
      if (status !== "unchanged" && roundsOpened)
        errors.push({
          line: l.line,
          message: `the screen label of "${l.id}" would change, but the screen labels are fixed once round 1 opens.`,
        });
    }
    const result = parse.result();
    if (result.errors.length) labelStatus.clear();
    labels.firstSha256 = fileSha256(input.labels);
    const all = result.errors.length ? result.errors : errors;
    files.push(count(report("labels", input.labels, all, result.warnings, labelStatus.size), labelStatus));
  }

  // A recall screen's tiers, for the next round.
  const tiers = none();
  let tiersForRound: number | null = null;
  const tierStatus = new Map<string, Status>();
  let tierOptions: CheckedFiles["tierOptions"] = () => {
    throw new Error("no tiers were checked");
  };
  if (input.tiers) {
    const state = studyState(tx, study.id);
    const next = state.next;
    if (next.kind !== "import_tiers" && !(next.kind === "open_round" && next.round > 1)) {
      const why =
        next.kind === "final"
          ? `round ${next.round}'s control-inclusion rate is at or below the threshold: the included set is final and no recall round is needed.`
          : next.kind === "in_review"
            ? `round ${next.round} is still in review; recall tiers are imported after a round whose control-inclusion rate is above the threshold.`
            : "recall tiers are imported after a round whose control-inclusion rate is above the threshold; no round has closed yet.";
      files.push(report("tiers", input.tiers, [{ line: 0, message: why }], [], 0));
    } else {
      tiersForRound = next.round;
      const used = new Map(
        tx
          .select({
            externalId: visibleScreeningItems.externalId,
            number: screeningRounds.number,
            isControl: screeningRoundItems.isControl,
          })
          .from(screeningRoundItems)
          .innerJoin(visibleScreeningItems, eq(visibleScreeningItems.id, screeningRoundItems.itemId))
          .innerJoin(screeningRounds, eq(screeningRounds.id, screeningRoundItems.roundId))
          .where(eq(screeningRounds.studyId, study.id))
          .all()
          .map((r) => [r.externalId, r]),
      );
      tierOptions = (f) => ({
        ...f,
        ineligible: (id: string) => {
          if (!existing.has(id)) return `no item "${id}" in the study.`;
          const u = used.get(id);
          return u
            ? `item "${id}" was reviewed in round ${u.number}${
                u.isControl ? " as a control" : ""
              }: a recall round takes only excluded items that no round has used.`
            : null;
        },
      });
      const parse = tiersOfFile(fileInput(input.tiers), tierOptions(input.tiers));
      const stored = new Map(
        tx
          .select({
            externalId: visibleScreeningItems.externalId,
            tier: visibleScreeningRecallTiers.tier,
            rationale: visibleScreeningRecallTiers.rationale,
          })
          .from(visibleScreeningRecallTiers)
          .innerJoin(visibleScreeningItems, eq(visibleScreeningItems.id, visibleScreeningRecallTiers.itemId))
          .where(
            and(
              eq(visibleScreeningRecallTiers.studyId, study.id),
              eq(visibleScreeningRecallTiers.roundNumber, tiersForRound),
            ),
          )
          .all()
          .map((r) => [r.externalId, r]),
      );
      for (const t of parse.rows) {
        const s = stored.get(t.id);
        tierStatus.set(t.id, !s ? "new" : s.tier !== t.tier || s.rationale !== t.rationale ? "changed" : "unchanged");
        tiers.first.push(tierKey(t));
      }
      const result = parse.result();
      if (result.errors.length) tierStatus.clear();
      tiers.firstSha256 = fileSha256(input.tiers);
      files.push(count(report("tiers", input.tiers, result.errors, result.warnings, tierStatus.size), tierStatus));
    }
  }

  const ok = files.every((f) => f.errors.length === 0);
  return {
    ok,
    files,
    tiersForRound,
    existing,
    items,
    itemStatus,
    labels,
    labelStatus,
    labelOptions,
    tiers,
    tierStatus,
    tierOptions,
  };
}

function itemValues(parsed: ParsedItem, hash: string) {
  return { kind: parsed.kind, content: contentOf(parsed), tags: parsed.tags, source: parsed.source, contentHash: hash };
}

function insertItem(
  tx: DbOrTx,
  studyId: number,
  parsed: ParsedItem,
  hash: string,
  position: number,
  now: number,
  importRun: string | null = null,
) {
  return tx
    .insert(screeningItems)
    .values({ studyId, externalId: parsed.id, position, ...itemValues(parsed, hash), createdAt: now, importRun })
    .returning({ id: screeningItems.id })
    .get().id;
}

/** A new label (hidden by `importRun` when added to an existing study) or a changed one. */
function writeLabel(tx: DbOrTx, itemId: number, l: ParsedLabel, now: number, importRun: string | null = null) {
  const values = {
    label: l.label,
    category: l.category,
    confidence: l.confidence,
    rationale: l.rationale,
    updatedAt: now,
  };
  tx.insert(screeningLabels)
    .values({ itemId, ...values, importRun })
    .onConflictDoUpdate({ target: screeningLabels.itemId, set: values })
    .run();
}

/** A recall tier for round `roundNumber`: new (hidden by `importRun`) or changed. */
function writeTier(
  tx: DbOrTx,
  studyId: number,
  roundNumber: number,
  itemId: number,
  t: ParsedTier,
  now: number,
  importRun: string | null = null,
) {
  const values = { tier: t.tier, rationale: t.rationale, updatedAt: now };
  tx.insert(screeningRecallTiers)
    .values({ studyId, roundNumber, itemId, ...values, importRun })
    .onConflictDoUpdate({
      target: [screeningRecallTiers.studyId, screeningRecallTiers.roundNumber, screeningRecallTiers.itemId],
      set: values,
    })
    .run();
}

/** The study's "import" event: each file's hash and counts. */
function recordImport(tx: DbOrTx, studyId: number, checked: CheckedFiles, input: ScreeningFilesInput, now: number) {
  const { files, tiersForRound } = checked;
  recordEvent(tx, {
    actorId: input.actorId,
    entity: "screening_study",
    entityId: studyId,
    action: "import",
    changes: {
      files: files.map((f) => ({
        kind: f.kind,
        filename: f.filename,
        sha256: fileSha256((f.kind === "items" ? input.items : f.kind === "labels" ? input.labels : input.tiers)!),
        created: f.created,
        changed: f.changed,
        unchanged: f.unchanged,
      })),
      ...(tiersForRound !== null ? { tiersForRound } : {}),
    },
    at: now,
  });
}

/** The import's changes to existing rows (items, labels, tiers) and its event, in its last transaction. */
function writeChanged(
  tx: DbOrTx,
  studyId: number,
  checked: CheckedFiles,
  changed: ChangedRows,
  ids: Map<string, number>,
  input: ScreeningFilesInput,
  now: number,
) {
  const { existing, tiersForRound } = checked;
  for (const { parsed, hash } of changed.items) {
    const found = existing.get(parsed.id)!;
    tx.update(screeningItems).set(itemValues(parsed, hash)).where(eq(screeningItems.id, found.id)).run();
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "screening_item",
      entityId: found.id,
      action: "replace",
      changes: { contentHash: [found.contentHash, hash] },
      at: now,
    });
  }
  for (const l of changed.labels) writeLabel(tx, ids.get(l.id)!, l, now);
  for (const t of changed.tiers) writeTier(tx, studyId, tiersForRound!, ids.get(t.id)!, t, now);
  recordImport(tx, studyId, checked, input, now);
}

/** A new study hidden by its import, and what the import writes under it (removed when the import fails or dies). */
export const SCREENING_STUDY_PARENT: HiddenParent = {
  table: "screening_studies",
  children: [
    "delete from screening_recall_tiers where rowid in (select rowid from screening_recall_tiers where study_id = ? limit 2000)",
    "delete from screening_labels where item_id in (select l.item_id from screening_labels l join screening_items i on i.id = l.item_id where i.study_id = ? limit 2000)",
    "delete from screening_items where id in (select id from screening_items where study_id = ? limit 2000)",
  ],
};

/**
 * Creates a study with its files (screening-import of a new study), all or nothing, without holding the write lock
 * for long (docs/reliability.md, "Bulk imports"): the files are checked before any lock, the study is created hidden,
 * its items and labels are written in short transactions, and the last one records the study's creation and import
 * and makes it visible. A study of that name created meanwhile, or still being written by another import, refuses
 * the import (ServiceError); a file with errors writes nothing, not even the study.
 */
export function importIntoNewScreeningStudy(
  db: Db,
  input: ScreeningFilesInput & {
    name: string;
    settings: ScreeningSettings;
    /** For tests: the chunks' lock budget, and a call after each committed chunk. */
    chunkBudgetMs?: number;
    onChunk?: (done: number) => void;
  },
): ScreeningImportReport {
  const now = input.now ?? Date.now();
  // A new study has no items, labels or rounds: the files are checked against nothing, before any lock.
  const checked = checkFiles(db, { id: 0, categories: input.settings.categories }, input);
  const { ok, files, tiersForRound } = checked;
  if (!ok) return { ok, files, tiersForRound, written: false };
  const anyChange = files.some((f) => f.created + f.changed > 0);
  const ids = new Map<string, number>();
  const outcome = importBehindHiddenParent(db, SCREENING_STUDY_PARENT, {
    target: `screening-study:${input.name}`,
    create: (tx, runId) => insertScreeningStudy(tx, input, now, runId),
    // The files read again, written batch by batch (a new study has no tiers: they were refused).
    rows: () => secondPasses(checked, input, null),
    write: (tx, row: AddedRow, study) => {
      if ("item" in row) {
        const { parsed, hash } = row.item;
        ids.set(parsed.id, insertItem(tx, study.id, parsed, hash, ids.size + 1, now));
      } else if ("label" in row) writeLabel(tx, ids.get(row.label.id)!, row.label, now);
    },
    finish: (tx, study) => {
      recordStudyCreated(tx, study.id, input, now);
      if (anyChange) recordImport(tx, study.id, checked, input, now);
      return { ok, files, tiersForRound, written: anyChange };
    },
    chunkBudgetMs: input.chunkBudgetMs,
    onChunk: input.onChunk,
  });
  if ("refused" in outcome) throw new ServiceError(outcome.refused, "name", 409);
  if ("exists" in outcome)
    throw new ServiceError(`A screening study named "${input.name}" already exists.`, "name", 409);
  return outcome.done;
}
