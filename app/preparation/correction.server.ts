/**
 * The correction queue (docs/preparation.md, "Correction"), on the work-item engine: the notes whose quality summary
 * says they need correction (`prep_note_quality.needs_correction`), addressed by their correction's opaque key, for
 * the reviewers their project names. A reviewer edits the English text per section beside the minimised source, the
 * back-translation and the reason; a submission writes `prep_translations.corrected_text`, `corrected_by` and
 * `corrected_at` in the save's transaction, after the check. Every query carries the reviewer's membership of the
 * note's project, so anyone else finds nothing (404; docs/security.md, "Source text").
 */
import { and, asc, eq } from "drizzle-orm";
import {
  prepCorrections,
  prepNoteQuality,
  prepNotes,
  prepProjects,
  prepReviewers,
  prepTranslations,
  type PrepMismatch,
} from "../../db/schema";
import { SECTION_TITLES, type SectionKind } from "../annotation/public";
import type { Db, DbOrTx } from "../platform/db.server";
import {
  nextOpenItem,
  previousItem,
  progressOf,
  type SaveResult,
  type WorkState,
} from "../work-items/domain/work-item";
import { saveWorkItem, updateAtVersion, type WorkItemAdapter } from "../work-items/engine.server";
import {
  checkCorrection,
  CorrectionValuesSchema,
  normaliseCorrection,
  type CorrectionSection,
  type CorrectionValues,
} from "./domain/correction";

export { CorrectionValuesSchema };

export interface CorrectionSectionView extends CorrectionSection {
  title: string;
  translation: string;
  backTranslation: string;
  bleu: number | null;
  chrf: number | null;
  comet: number | null;
}

export interface CorrectionItem {
  id: number;
  key: string;
  noteId: number;
  projectId: number;
  projectName: string;
  sourceLanguage: string;
  externalId: string;
  sections: CorrectionSectionView[];
  quality: {
    bleu: number | null;
    chrf: number | null;
    comet: number | null;
    mismatches: PrepMismatch[];
    reason: string;
  };
}

const ownedCorrection = (db: DbOrTx, userId: string) =>
  db
    .select({
      id: prepCorrections.id,
      key: prepCorrections.key,
      noteId: prepNotes.id,
      projectId: prepNotes.projectId,
      projectName: prepProjects.name,
      sourceLanguage: prepProjects.sourceLanguage,
      externalId: prepNotes.externalId,
      sections: prepNotes.sections,
      bleu: prepNoteQuality.bleu,
      chrf: prepNoteQuality.chrf,
      comet: prepNoteQuality.comet,
      mismatches: prepNoteQuality.mismatches,
      reason: prepNoteQuality.reason,
    })
    .from(prepCorrections)
    .innerJoin(prepNotes, eq(prepNotes.id, prepCorrections.noteId))
    .innerJoin(prepProjects, eq(prepProjects.id, prepNotes.projectId))
    .innerJoin(prepReviewers, and(eq(prepReviewers.projectId, prepNotes.projectId), eq(prepReviewers.userId, userId)))
    .innerJoin(
      prepNoteQuality,
      and(eq(prepNoteQuality.noteId, prepNotes.id), eq(prepNoteQuality.needsCorrection, true)),
    );

type OwnedRow = Awaited<ReturnType<ReturnType<typeof ownedCorrection>["get"]>>;

function itemOf(db: DbOrTx, r: NonNullable<OwnedRow>): CorrectionItem {
  const translations = db
    .select()
    .from(prepTranslations)
    .where(eq(prepTranslations.noteId, r.noteId))
    .orderBy(asc(prepTranslations.section))
    .all();
  return {
    id: r.id,
    key: r.key,
    noteId: r.noteId,
    projectId: r.projectId,
    projectName: r.projectName,
    sourceLanguage: r.sourceLanguage,
    externalId: r.externalId,
    sections: translations.map((t) => {
      const kind = r.sections[t.section]?.kind ?? "";
      return {
        section: t.section,
        title: SECTION_TITLES[kind as SectionKind] ?? kind,
        source: t.sourceText,
        translation: t.correctedText ?? t.translation ?? "",
        backTranslation: t.backTranslation ?? "",
        bleu: t.bleu,
        chrf: t.chrf,
        comet: t.comet,
      };
    }),
    quality: { bleu: r.bleu, chrf: r.chrf, comet: r.comet, mismatches: r.mismatches, reason: r.reason },
  };
}

/** The correction by its id, if the user is a reviewer of its project and the note needs correction. */
function findCorrection(db: DbOrTx, userId: string, id: number): CorrectionItem | null {
  const r = ownedCorrection(db, userId).where(eq(prepCorrections.id, id)).get();
  return r ? itemOf(db, r) : null;
}

/** The correction's id behind an opaque key, for the user (a reviewer of its project); null for anything else. */
export function resolveCorrectionKey(db: DbOrTx, userId: string, key: string | undefined): number | null {
  if (!key || !/^[0-9a-f]{12}$/.test(key)) return null;
  return ownedCorrection(db, userId).where(eq(prepCorrections.key, key)).get()?.id ?? null;
}

type CorrectionRow = typeof prepCorrections.$inferSelect;

const rowOf = (db: DbOrTx, id: number) => db.select().from(prepCorrections).where(eq(prepCorrections.id, id)).get();

/** The values as stored, or the English text as it stands (corrected or translated) before the first save. */
function valuesOf(row: CorrectionRow | undefined, item: CorrectionItem): CorrectionValues {
  if (row && row.status !== "not_started") return normaliseCorrection({ texts: row.texts }, item.sections);
  return { texts: Object.fromEntries(item.sections.map((s) => [String(s.section), s.translation])) };
}

export interface CorrectionQueueRow {
  key: string;
  projectName: string;
  externalId: string;
  state: WorkState;
  reason: string;
  updatedAt: number | null;
}

/** The notes waiting for correction in every project naming the user, in project and file order. */
export function listCorrectionQueue(db: DbOrTx, userId: string): CorrectionQueueRow[] {
  return db
    .select({
      key: prepCorrections.key,
      projectName: prepProjects.name,
      externalId: prepNotes.externalId,
      status: prepCorrections.status,
      reason: prepNoteQuality.reason,
      updatedAt: prepCorrections.updatedAt,
    })
    .from(prepCorrections)
    .innerJoin(prepNotes, eq(prepNotes.id, prepCorrections.noteId))
    .innerJoin(prepProjects, eq(prepProjects.id, prepNotes.projectId))
    .innerJoin(prepReviewers, and(eq(prepReviewers.projectId, prepNotes.projectId), eq(prepReviewers.userId, userId)))
    .innerJoin(
      prepNoteQuality,
      and(eq(prepNoteQuality.noteId, prepNotes.id), eq(prepNoteQuality.needsCorrection, true)),
    )
    .orderBy(asc(prepProjects.name), asc(prepNotes.position))
    .all()
    .map((r) => ({
      key: r.key,
      projectName: r.projectName,
      externalId: r.externalId,
      state: r.status as WorkState,
      reason: r.reason,
      updatedAt: r.updatedAt,
    }));
}

export interface CorrectionView {
  item: CorrectionItem;
  state: WorkState;
  values: CorrectionValues;
  version: number;
  updatedAt: number | null;
  nextKey: string | null;
  previousKey: string | null;
  progress: { done: number; total: number };
}

/** One correction with its values, for a reviewer of its project; null otherwise (404). */
export function getCorrection(db: Db, input: { userId: string; id: number }): CorrectionView | null {
  const item = findCorrection(db, input.userId, input.id);
  if (!item) return null;
  const row = rowOf(db, item.id);
  const queue = listCorrectionQueue(db, input.userId);
  const at = queue.findIndex((r) => r.key === item.key);
  return {
    item,
    state: (row?.status ?? "not_started") as WorkState,
    values: valuesOf(row, item),
    version: row?.version ?? 0,
    updatedAt: row?.updatedAt ?? null,
    nextKey: nextOpenItem(queue, at)?.key ?? null,
    previousKey: previousItem(queue, at)?.key ?? null,
    progress: progressOf(queue),
  };
}

/** The correction's adapter of the work-item engine (docs/architecture.md, "The work-item engine"). */
const correctionWork: WorkItemAdapter<CorrectionItem, CorrectionRow, CorrectionValues> = {
  entity: "prep_correction",
  noun: "correction",
  find: (tx, userId, id) => findCorrection(tx, userId, id),
  row: (tx, _userId, item) => rowOf(tx, item.id),
  meta: (r) => ({ id: r.id, state: r.status as WorkState, version: r.version, savedAt: r.updatedAt }),
  valuesOf: (row, item) => valuesOf(row, item),
  normalise: (v, item) => normaliseCorrection(v, item.sections),
  check(_tx, item, values) {
    if (item.sections.length === 0)
      return { ok: false, message: "This note has no translation to correct yet.", errors: {} };
    const errors = checkCorrection(values, item.sections);
    if (!Object.keys(errors).length) return { ok: true, values };
    return { ok: false, message: "Write the English text of every section before submitting.", errors };
  },
  // Which sections changed, never their words (docs/security.md, "Source text").
  audited: (v) => ({ texts: v.texts, sections: Object.keys(v.texts).length }),
  freeText: ["texts"],
  auditContext: (item) => ({ entityId: item.id, detail: { projectId: item.projectId, noteId: item.noteId } }),
  write(tx, { item, row, userId, values, status, version, now }) {
    if (!row) return null;
    const stored = updateAtVersion(tx, prepCorrections, row.id, row.version, {
      texts: values.texts,
      status,
      version,
      updatedBy: userId,
      updatedAt: now,
      submittedAt: status === "submitted" ? now : row.submittedAt,
    });
    if (!stored) return null;
    // The corrected text is the note's English from now on, written with the check in this transaction.
    if (status === "submitted")
      for (const s of item.sections)
        tx.update(prepTranslations)
          .set({ correctedText: values.texts[String(s.section)] ?? "", correctedBy: userId, correctedAt: now })
          .where(and(eq(prepTranslations.noteId, item.noteId), eq(prepTranslations.section, s.section)))
          .run();
    return row.id;
  },
};

/**
 * Saves a reviewer's correction of a note: a draft, or a submission (every translated section has its English text),
 * which writes the corrected text and may be revised later. Stale versions are refused (409); every change is
 * audited in the same IMMEDIATE transaction.
 */
export function saveCorrection(
  db: Db,
  input: {
    userId: string;
    id: number;
    values: CorrectionValues;
    version: number;
    intent: "draft" | "submit";
    now?: number;
    activeMs?: number;
  },
): SaveResult {
  const { id, ...rest } = input;
  return saveWorkItem(db, correctionWork, { ...rest, itemId: id });
}
