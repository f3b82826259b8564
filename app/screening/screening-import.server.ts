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
  parseItemsFile,
  parseLabelsFile,
  parseTiersFile,
  type FileFormat,
  type ImportIssue,
  type Message,
  type ParsedItem,
  type ParsedLabel,
  type ParsedTier,
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
import type { ImportSource } from "../formats/import-source";

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
  const before = studySnapshot(db, study.id, tiersForRound);
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
  let written: boolean;
  try {
    let next = position;
    run.writeInChunks(
      addedRows(checked),
      (tx, row) => {
        if ("item" in row) {
          const { parsed, hash } = row.item;
          ids.set(parsed.id, insertItem(tx, study.id, parsed, hash, ++next, now, run.id));
        } else if ("label" in row) writeLabel(tx, ids.get(row.label.id)!, row.label, now, run.id);
        else writeTier(tx, study.id, tiersForRound!, ids.get(row.tier.id)!, row.tier, now, run.id);
      },
      input.onChunk,
    );
    written = run.finish((tx) => {
      // The guard, again in the transaction that writes the changed rows and makes the new ones visible.
      if (studySnapshot(tx, study.id, tiersForRound) !== before) return { result: false, commit: false };
      if (input.settings)
        updateScreeningSettings(db, { studyId: study.id, settings: input.settings, actorId: input.actorId });
      if (anyChange) writeChanged(tx, study.id, checked, ids, input, now);
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

/** The rows an import adds (new items, then new labels and tiers), written hidden in the run's chunks. */
function addedRows(checked: CheckedFiles): AddedRow[] {
  return [
    ...checked.items.filter((i) => i.status === "new").map((item) => ({ item })),
    ...checked.labels.filter((l) => checked.labelStatus.get(l.id) === "new").map((label) => ({ label })),
    ...checked.tiers.filter((t) => checked.tierStatus.get(t.id) === "new").map((tier) => ({ tier })),
  ];
}

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
  items: { parsed: ParsedItem; hash: string; status: Status }[];
  labels: ParsedLabel[];
  labelStatus: Map<string, Status>;
  tiers: ParsedTier[];
  tierStatus: Map<string, Status>;
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

  // The corpus.
  let items: { parsed: ParsedItem; hash: string; status: "new" | "changed" | "unchanged" }[] = [];
  if (input.items) {
    const parse = parseItemsFile(fileInput(input.items), input.items);
    const errors = [...parse.errors];
    items = parse.items.map((parsed) => {
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
      return { parsed, hash, status };
    });
    const r = report("items", input.items, errors, parse.warnings, parse.items.length);
    r.created = items.filter((i) => i.status === "new").length;
    r.changed = items.filter((i) => i.status === "changed").length;
    r.unchanged = items.filter((i) => i.status === "unchanged").length;
    files.push(r);
  }

  // The screen's labels.
  let labels: ParsedLabel[] = [];
  const labelStatus = new Map<string, "new" | "changed" | "unchanged">();
  if (input.labels) {
    const knownIds = new Set([...existing.keys(), ...items.map((i) => i.parsed.id)]);
    const parse = parseLabelsFile(fileInput(input.labels), { ...input.labels, knownIds, vocabulary: study.categories });
    const errors = [...parse.errors];
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
    labels = parse.labels;
    for (const l of labels) {
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
      if (status !== "unchanged" && roundsOpened)
        errors.push({
          line: l.line,
          message: `the screen label of "${l.id}" would change, but the screen labels are fixed once round 1 opens.`,
        });
    }
    const r = report("labels", input.labels, errors, parse.warnings, labels.length);
    r.created = [...labelStatus.values()].filter((s) => s === "new").length;
    r.changed = [...labelStatus.values()].filter((s) => s === "changed").length;
    r.unchanged = [...labelStatus.values()].filter((s) => s === "unchanged").length;
    files.push(r);
  }

  // A recall screen's tiers, for the next round.
  let tiers: ParsedTier[] = [];
  let tiersForRound: number | null = null;
  const tierStatus = new Map<string, "new" | "changed" | "unchanged">();
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
      const parse = parseTiersFile(fileInput(input.tiers), {
        ...input.tiers,
        ineligible: (id) => {
          if (!existing.has(id)) return `no item "${id}" in the study.`;
          const u = used.get(id);
          return u
            ? `item "${id}" was reviewed in round ${u.number}${
                u.isControl ? " as a control" : ""
              }: a recall round takes only excluded items that no round has used.`
            : null;
        },
      });
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
      tiers = parse.tiers;
      for (const t of tiers) {
        const s = stored.get(t.id);
        tierStatus.set(t.id, !s ? "new" : s.tier !== t.tier || s.rationale !== t.rationale ? "changed" : "unchanged");
      }
      const r = report("tiers", input.tiers, parse.errors, parse.warnings, tiers.length);
      r.created = [...tierStatus.values()].filter((s) => s === "new").length;
      r.changed = [...tierStatus.values()].filter((s) => s === "changed").length;
      r.unchanged = [...tierStatus.values()].filter((s) => s === "unchanged").length;
      files.push(r);
    }
  }

  const ok = files.every((f) => f.errors.length === 0);
  return { ok, files, tiersForRound, existing, items, labels, labelStatus, tiers, tierStatus };
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
  ids: Map<string, number>,
  input: ScreeningFilesInput,
  now: number,
) {
  const { existing, items, labels, labelStatus, tiers, tierStatus, tiersForRound } = checked;
  for (const { parsed, hash, status } of items) {
    if (status !== "changed") continue;
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
  for (const l of labels) if (labelStatus.get(l.id) === "changed") writeLabel(tx, ids.get(l.id)!, l, now);
  for (const t of tiers)
    if (tierStatus.get(t.id) === "changed") writeTier(tx, studyId, tiersForRound!, ids.get(t.id)!, t, now);
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

type NewStudyRow = { item: { parsed: ParsedItem; hash: string } } | { label: ParsedLabel };

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
    rows: (): NewStudyRow[] => [
      ...checked.items.map((item) => ({ item })),
      ...checked.labels.map((label) => ({ label })),
    ],
    write: (tx, row, study) => {
      if ("item" in row) {
        const { parsed, hash } = row.item;
        ids.set(parsed.id, insertItem(tx, study.id, parsed, hash, ids.size + 1, now));
      } else writeLabel(tx, ids.get(row.label.id)!, row.label, now);
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
