/**
 * Importing a screening study's files (docs/screening.md): the corpus, the automatic screen's labels and a recall screen's
 * tiers. All files given together are validated first, against the database and each other; then written in one
 * transaction or not at all. Re-importing the same files changes nothing. The corpus and the screen labels are fixed
 * once round 1 has opened (the control-inclusion rate estimates that screen's misses); recall tiers are taken only
 * after a round that calls for a recall round, for items no round has used.
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
import type { Db } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { getScreeningStudy, studyState } from "./screening.server";
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
export function importScreeningFiles(
  db: Db,
  input: {
    studyId: number;
    items?: ScreeningFile;
    labels?: ScreeningFile;
    tiers?: ScreeningFile;
    actorId: string | null;
    dryRun?: boolean;
    now?: number;
  },
): ScreeningImportReport {
  const now = input.now ?? Date.now();
  return db.transaction(
    (tx): ScreeningImportReport => {
      const study = getScreeningStudy(tx, input.studyId);
      if (!study) throw new ServiceError("No such screening study.", undefined, 404);
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
              .where(
                and(eq(screeningRecallTiers.studyId, study.id), eq(screeningRecallTiers.roundNumber, tiersForRound)),
              )
              .all()
              .map((r) => [r.externalId, r]),
          );
          tiers = parse.tiers;
          for (const t of tiers) {
            const s = stored.get(t.id);
            tierStatus.set(
              t.id,
              !s ? "new" : s.tier !== t.tier || s.rationale !== t.rationale ? "changed" : "unchanged",
            );
          }
          const r = report("tiers", input.tiers, parse.errors, parse.warnings, tiers.length);
          r.created = [...tierStatus.values()].filter((s) => s === "new").length;
          r.changed = [...tierStatus.values()].filter((s) => s === "changed").length;
          r.unchanged = [...tierStatus.values()].filter((s) => s === "unchanged").length;
          files.push(r);
        }
      }

      const ok = files.every((f) => f.errors.length === 0);
      const anyChange = files.some((f) => f.created + f.changed > 0);
      if (!ok || input.dryRun || !anyChange) return { ok, files, tiersForRound, written: false };

      const ids = new Map([...existing].map(([k, v]) => [k, v.id]));
      let position =
        tx
          .select({ p: max(screeningItems.position) })
          .from(screeningItems)
          .where(eq(screeningItems.studyId, study.id))
          .get()?.p ?? 0;
      for (const { parsed, hash, status } of items) {
        const values = {
          kind: parsed.kind,
          content: contentOf(parsed),
          tags: parsed.tags,
          source: parsed.source,
          contentHash: hash,
        };
        if (status === "new") {
          const id = tx
            .insert(screeningItems)
            .values({ studyId: study.id, externalId: parsed.id, position: ++position, ...values, createdAt: now })
            .returning({ id: screeningItems.id })
            .get().id;
          ids.set(parsed.id, id);
        } else if (status === "changed") {
          const found = existing.get(parsed.id)!;
          tx.update(screeningItems).set(values).where(eq(screeningItems.id, found.id)).run();
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
      for (const l of labels) {
        if (labelStatus.get(l.id) === "unchanged") continue;
        const values = {
          label: l.label,
          category: l.category,
          confidence: l.confidence,
          rationale: l.rationale,
          updatedAt: now,
        };
        tx.insert(screeningLabels)
          .values({ itemId: ids.get(l.id)!, ...values })
          .onConflictDoUpdate({ target: screeningLabels.itemId, set: values })
          .run();
      }
      for (const t of tiers) {
        if (tierStatus.get(t.id) === "unchanged") continue;
        const values = { tier: t.tier, rationale: t.rationale, updatedAt: now };
        tx.insert(screeningRecallTiers)
          .values({ studyId: study.id, roundNumber: tiersForRound!, itemId: ids.get(t.id)!, ...values })
          .onConflictDoUpdate({
            target: [screeningRecallTiers.studyId, screeningRecallTiers.roundNumber, screeningRecallTiers.itemId],
            set: values,
          })
          .run();
      }
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "screening_study",
        entityId: study.id,
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
      return { ok, files, tiersForRound, written: true };
    },
    { behavior: "immediate" },
  );
}
