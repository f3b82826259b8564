/**
 * Importing a screening study's files (docs/screening.md): the corpus, the automatic screen's labels and a recall
 * screen's tiers. All files given together are validated first, against the database and each other; then written in
 * one transaction or not at all (a new study's behind the hidden study, in short ones: `importIntoNewScreeningStudy`).
 * Re-importing the same files changes nothing. The corpus and the screen labels are fixed once round 1 has opened
 * (the control-inclusion rate estimates that screen's misses); recall tiers are taken only after a round that calls
 * for a recall round, for items no round has used.
 */
import { createHash } from "node:crypto";
import { and, eq, max } from "drizzle-orm";
import {
  screeningItems,
  screeningLabels,
  screeningRecallTiers,
  screeningRoundItems,
  screeningRounds,
} from "../../db/schema";
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
  type ScreeningSettings,
  type ScreeningStudy,
} from "./screening.server";
import { importBehindHiddenParent, type HiddenParent } from "../platform/hidden-parents.server";
import { ServiceError } from "../platform/service-error";

export interface ScreeningFile {
  bytes: Uint8Array;
  filename: string;
  format?: FileFormat;
}

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
 * Validates and (unless `dryRun`) imports any of the three files of a study. Labels may name items of the corpus
 * file given with them. Nothing is written when any file has an error.
 */
export function importScreeningFiles(db: Db, input: ScreeningFilesInput & { studyId: number }): ScreeningImportReport {
  const now = input.now ?? Date.now();
  return db.transaction(
    (tx): ScreeningImportReport => {
      const study = getScreeningStudy(tx, input.studyId);
      if (!study) throw new ServiceError("No such screening study.", undefined, 404);
      const checked = checkFiles(tx, study, input);
      const { ok, files, tiersForRound } = checked;
      const anyChange = files.some((f) => f.created + f.changed > 0);
      if (!ok || input.dryRun || !anyChange) return { ok, files, tiersForRound, written: false };
      writeChecked(tx, study.id, checked, input, now);
      return { ok, files, tiersForRound, written: true };
    },
    { behavior: "immediate" },
  );
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
  const existing = new Map(
    tx
      .select({
        id: screeningItems.id,
        externalId: screeningItems.externalId,
        contentHash: screeningItems.contentHash,
        source: screeningItems.source,
      })
      .from(screeningItems)
      .where(eq(screeningItems.studyId, study.id))
      .all()
      .map((r) => [r.externalId, r]),
  );
  const files: FileReport[] = [];

  // The corpus.
  let items: { parsed: ParsedItem; hash: string; status: "new" | "changed" | "unchanged" }[] = [];
  if (input.items) {
    const parse = parseItemsFile(input.items.bytes, input.items);
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
    const parse = parseLabelsFile(input.labels.bytes, { ...input.labels, knownIds, vocabulary: study.categories });
    const errors = [...parse.errors];
    const stored = new Map(
      tx
        .select({
          externalId: screeningItems.externalId,
          label: screeningLabels.label,
          category: screeningLabels.category,
          confidence: screeningLabels.confidence,
          rationale: screeningLabels.rationale,
        })
        .from(screeningLabels)
        .innerJoin(screeningItems, eq(screeningItems.id, screeningLabels.itemId))
        .where(eq(screeningItems.studyId, study.id))
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
            externalId: screeningItems.externalId,
            number: screeningRounds.number,
            isControl: screeningRoundItems.isControl,
          })
          .from(screeningRoundItems)
          .innerJoin(screeningItems, eq(screeningItems.id, screeningRoundItems.itemId))
          .innerJoin(screeningRounds, eq(screeningRounds.id, screeningRoundItems.roundId))
          .where(eq(screeningRounds.studyId, study.id))
          .all()
          .map((r) => [r.externalId, r]),
      );
      const parse = parseTiersFile(input.tiers.bytes, {
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
            externalId: screeningItems.externalId,
            tier: screeningRecallTiers.tier,
            rationale: screeningRecallTiers.rationale,
          })
          .from(screeningRecallTiers)
          .innerJoin(screeningItems, eq(screeningItems.id, screeningRecallTiers.itemId))
          .where(and(eq(screeningRecallTiers.studyId, study.id), eq(screeningRecallTiers.roundNumber, tiersForRound)))
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

function insertItem(tx: DbOrTx, studyId: number, parsed: ParsedItem, hash: string, position: number, now: number) {
  return tx
    .insert(screeningItems)
    .values({ studyId, externalId: parsed.id, position, ...itemValues(parsed, hash), createdAt: now })
    .returning({ id: screeningItems.id })
    .get().id;
}

function writeLabel(tx: DbOrTx, itemId: number, l: ParsedLabel, now: number) {
  const values = {
    label: l.label,
    category: l.category,
    confidence: l.confidence,
    rationale: l.rationale,
    updatedAt: now,
  };
  tx.insert(screeningLabels)
    .values({ itemId, ...values })
    .onConflictDoUpdate({ target: screeningLabels.itemId, set: values })
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
        sha256: createHash("sha256")
          .update((f.kind === "items" ? input.items : f.kind === "labels" ? input.labels : input.tiers)!.bytes)
          .digest("hex"),
        created: f.created,
        changed: f.changed,
        unchanged: f.unchanged,
      })),
      ...(tiersForRound !== null ? { tiersForRound } : {}),
    },
    at: now,
  });
}

/** Writes checked files into an existing study, inside the caller's transaction. */
function writeChecked(tx: DbOrTx, studyId: number, checked: CheckedFiles, input: ScreeningFilesInput, now: number) {
  const { existing, items, labels, labelStatus, tiers, tierStatus, tiersForRound } = checked;
  const ids = new Map([...existing].map(([k, v]) => [k, v.id]));
  let position =
    tx
      .select({ p: max(screeningItems.position) })
      .from(screeningItems)
      .where(eq(screeningItems.studyId, studyId))
      .get()?.p ?? 0;
  for (const { parsed, hash, status } of items) {
    if (status === "new") ids.set(parsed.id, insertItem(tx, studyId, parsed, hash, ++position, now));
    else if (status === "changed") {
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
  }
  for (const l of labels) if (labelStatus.get(l.id) !== "unchanged") writeLabel(tx, ids.get(l.id)!, l, now);
  for (const t of tiers) {
    if (tierStatus.get(t.id) === "unchanged") continue;
    const values = { tier: t.tier, rationale: t.rationale, updatedAt: now };
    tx.insert(screeningRecallTiers)
      .values({ studyId, roundNumber: tiersForRound!, itemId: ids.get(t.id)!, ...values })
      .onConflictDoUpdate({
        target: [screeningRecallTiers.studyId, screeningRecallTiers.roundNumber, screeningRecallTiers.itemId],
        set: values,
      })
      .run();
  }
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
