/**
 * The quality check of a translated project (docs/preparation.md, "Quality"): BLEU and chrF of every back-translated
 * section against its source text into `prep_translations`, each note's summary and verdict into
 * `prep_note_quality`, and the import of COMET scores computed elsewhere. Admins only: callers are behind the admin
 * guard (docs/security.md, "Source text"). Nothing here logs or records a note's text.
 */
import { and, eq, inArray } from "drizzle-orm";
import { prepNoteQuality, prepNotes, prepProjects, prepTranslations } from "../../db/schema";
import type { PrepQualitySettings } from "../../db/vocabulary";
import { recordEvent } from "../audit/audit.server";
import type { Db, DbOrTx } from "../platform/db.server";
import { ServiceError } from "../platform/service-error";
import { writeTransaction } from "../work-items/engine.server";
import { parseCometFile, type CometIssue } from "./domain/comet-file";
import { noteQuality, qualitySettingsOf, testNameProblem, type NoteQuality } from "./domain/quality";
import { corpusBleu, corpusChrf } from "../stats/mt-metrics";
import { projectFinalSections } from "./final-review.server";

export interface QualityRunResult {
  /** Notes whose every translated section has a back-translation: scored. */
  scored: number;
  /** Notes with a translated section still waiting for its back-translation: left as they were. */
  waiting: number;
  /**
   * Notes whose translation is not of their current final text — excluded or not final since, or a section's
   * `source_text` no longer its final text: not scored, and their earlier verdict removed (they leave the queue).
   */
  stale: number;
  needsCorrection: number;
  /** Corpus-level over every scored section of the project; null when none is. */
  bleu: number | null;
  chrf: number | null;
  settings: PrepQualitySettings;
}

/** Checks quality settings; a list of problems (empty when they can be used). */
export function qualitySettingsProblems(s: PrepQualitySettings): string[] {
  const out: string[] = [];
  const range = (name: string, v: number | null, lo: number, hi: number) => {
    if (v !== null && !(Number.isFinite(v) && v >= lo && v <= hi))
      out.push(`${name} must be a number from ${lo} to ${hi}`);
  };
  range("--min-bleu", s.minBleu, 0, 100);
  range("--min-chrf", s.minChrf, 0, 100);
  range("--min-comet", s.minComet, -10, 10);
  for (const t of s.tests) {
    const p = testNameProblem(t);
    if (p) out.push(p);
  }
  return out;
}

type TranslationRow = typeof prepTranslations.$inferSelect;

/**
 * The project's translated sections by note, each marked current when every row is a translation of the note's
 * final text as it stands (`projectFinalSections`): a note excluded or no longer final after its translation, or
 * one whose final text changed since, is not current (docs/preparation.md, "Quality").
 */
function translationsByNote(
  db: DbOrTx,
  projectId: number,
): Map<number, { current: boolean; sections: TranslationRow[] }> {
  const finals = projectFinalSections(db, projectId);
  const ids = finals.map((n) => n.noteId);
  const rows = ids.length ? db.select().from(prepTranslations).where(inArray(prepTranslations.noteId, ids)).all() : [];
  const byNote = new Map<number, TranslationRow[]>();
  for (const r of rows) byNote.set(r.noteId, [...(byNote.get(r.noteId) ?? []), r]);
  const out = new Map<number, { current: boolean; sections: TranslationRow[] }>();
  for (const { noteId, sections: final } of finals) {
    const sections = byNote.get(noteId);
    if (!sections) continue;
    const current =
      Array.isArray(final) && sections.every((s) => final[s.section] && final[s.section]!.content === s.sourceText);
    out.set(noteId, { current, sections });
  }
  return out;
}

/** Every section with text has a reviewer's corrected English: the correction was submitted for this translation. */
const corrected = (sections: readonly TranslationRow[]) =>
  sections.some((s) => s.correctedText !== null) &&
  sections.every((s) => s.correctedText !== null || s.sourceText.trim() === "");

/** What a note's verdict depends on: its sections' texts and COMET scores. */
function fingerprint(sections: readonly TranslationRow[]): string {
  return JSON.stringify(
    [...sections]
      .sort((a, b) => a.section - b.section)
      .map((s) => [s.section, s.sourceText, s.backTranslation, s.comet]),
  );
}

function scoreNote(sections: readonly TranslationRow[], settings: PrepQualitySettings): NoteQuality {
  return noteQuality(
    sections.map((s) => ({
      section: s.section,
      source: s.sourceText,
      backTranslation: s.backTranslation!,
      comet: s.comet,
    })),
    settings,
  );
}

/**
 * Scores the project's back-translated notes and sets each one's verdict. `settings` (thresholds, test names), when
 * given, are first stored as the project's and then used; the stored ones otherwise. The scores are computed before
 * the write, so the write lock is held only for the writes (docs/reliability.md, "Bulk imports": about 1,000 notes
 * take seconds to score); the write's transaction reads the sections again and scores anew any note whose texts or
 * COMET changed meanwhile, so every verdict written is that of the rows it is written beside. One transaction: the
 * settings, the scores, the summaries and the audit event (which records the counts and thresholds, never a text).
 */
export function computeProjectQuality(
  db: Db,
  input: { projectId: number; settings?: Partial<PrepQualitySettings>; actorId: string | null; now?: number },
): QualityRunResult {
  const now = input.now ?? Date.now();
  const read = db.select().from(prepProjects).where(eq(prepProjects.id, input.projectId)).get();
  if (!read) throw new ServiceError("No such preparation project.", undefined, 404);
  const settings: PrepQualitySettings = { ...qualitySettingsOf(read.settings), ...(input.settings ?? {}) };
  const problems = qualitySettingsProblems(settings);
  if (problems.length) throw new ServiceError(problems.join("; ") + ".");
  const complete = (sections: readonly TranslationRow[]) => sections.every((s) => s.backTranslation !== null);
  const computed = new Map<number, { fingerprint: string; quality: NoteQuality }>();
  for (const [noteId, { current, sections }] of translationsByNote(db, read.id))
    if (current && complete(sections))
      computed.set(noteId, { fingerprint: fingerprint(sections), quality: scoreNote(sections, settings) });

  const written = writeTransaction(db, (tx) => {
    const project = tx.select().from(prepProjects).where(eq(prepProjects.id, input.projectId)).get();
    if (!project) throw new ServiceError("No such preparation project.", undefined, 404);
    if (JSON.stringify(qualitySettingsOf(project.settings)) !== JSON.stringify(qualitySettingsOf(read.settings)))
      throw new ServiceError("The project's quality settings changed meanwhile; check quality again.", undefined, 409);
    if (input.settings)
      tx.update(prepProjects)
        .set({ settings: { ...project.settings, quality: settings } })
        .where(eq(prepProjects.id, project.id))
        .run();
    let scored = 0;
    let waiting = 0;
    let stale = 0;
    let flagged = 0;
    const allPairs: { hypothesis: string; reference: string }[] = [];
    for (const [noteId, { current, sections }] of translationsByNote(tx, project.id)) {
      if (!current) {
        // Its verdict was of a text that is no longer the note's: out of the queue, the release and the report.
        tx.delete(prepNoteQuality).where(eq(prepNoteQuality.noteId, noteId)).run();
        stale++;
        continue;
      }
      if (!complete(sections)) {
        waiting++;
        continue;
      }
      const before = computed.get(noteId);
      const q = before && before.fingerprint === fingerprint(sections) ? before.quality : scoreNote(sections, settings);
      for (const s of q.sections)
        tx.update(prepTranslations)
          .set({ bleu: s.bleu, chrf: s.chrf })
          .where(and(eq(prepTranslations.noteId, noteId), eq(prepTranslations.section, s.section)))
          .run();
      // A note corrected for this translation keeps the verdict that sent it to correction: the back-translation
      // is of the machine's English, which the correction replaced, so it cannot send the note back or take it out.
      const kept = corrected(sections)
        ? tx.select().from(prepNoteQuality).where(eq(prepNoteQuality.noteId, noteId)).get()
        : undefined;
      const verdict = kept?.needsCorrection
        ? { mismatches: kept.mismatches, needsCorrection: true, reason: kept.reason }
        : { mismatches: q.mismatches, needsCorrection: q.needsCorrection, reason: q.reason };
      const summary = { bleu: q.bleu, chrf: q.chrf, comet: q.comet, ...verdict, computedAt: now };
      // An update or an insert, never an upsert: under an upsert SQLite applies the statement's conflict policy to
      // the correction trigger's INSERT OR IGNORE (migration 0034), so a second run failed on the kept correction row.
      const updated = tx.update(prepNoteQuality).set(summary).where(eq(prepNoteQuality.noteId, noteId)).run();
      if (updated.changes === 0)
        tx.insert(prepNoteQuality)
          .values({ noteId, ...summary })
          .run();
      scored++;
      if (summary.needsCorrection) flagged++;
      for (const s of sections) allPairs.push({ hypothesis: s.backTranslation!, reference: s.sourceText });
    }
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "prep_project",
      entityId: project.id,
      action: "quality",
      changes: {
        scored,
        waiting,
        stale,
        needsCorrection: flagged,
        minBleu: settings.minBleu,
        minChrf: settings.minChrf,
        minComet: settings.minComet,
        tests: settings.tests.length,
      },
      at: now,
    });
    return { scored, waiting, stale, needsCorrection: flagged, allPairs };
  });
  // The project's corpus-level figures, after the write (they are reported, not stored).
  const { allPairs, ...counts } = written;
  return {
    ...counts,
    bleu: allPairs.length ? corpusBleu(allPairs) : null,
    chrf: allPairs.length ? corpusChrf(allPairs) : null,
    settings,
  };
}

export type CometImportResult = { ok: true; scores: number; notes: number } | { ok: false; errors: CometIssue[] };

/**
 * Imports COMET scores (docs/preparation.md, "Quality"; the import contract, docs/reliability.md): the whole file is
 * checked — its rows by comet-file.ts, then each note and section against the project's translated sections, in the
 * write's transaction — and every problem is reported by its line; on any problem nothing is written. The scores go
 * into `prep_translations.comet`; `computeProjectQuality` then takes them into the notes' verdicts.
 */
export function importCometScores(
  db: Db,
  input: { projectId: number; text: string; format: "csv" | "jsonl"; actorId: string | null; now?: number },
): CometImportResult {
  const now = input.now ?? Date.now();
  const parsed = parseCometFile(input.text, input.format);
  if (parsed.errors.length) return { ok: false, errors: parsed.errors };
  return writeTransaction(db, (tx) => {
    const project = tx
      .select({ id: prepProjects.id })
      .from(prepProjects)
      .where(eq(prepProjects.id, input.projectId))
      .get();
    if (!project) throw new ServiceError("No such preparation project.", undefined, 404);
    const notes = tx
      .select({ id: prepNotes.id, externalId: prepNotes.externalId, sections: prepNotes.sections })
      .from(prepNotes)
      .where(eq(prepNotes.projectId, project.id))
      .all();
    const byExternal = new Map(notes.map((n) => [n.externalId, n]));
    const ids = notes.map((n) => n.id);
    const translated = new Set(
      (ids.length
        ? tx
            .select({ noteId: prepTranslations.noteId, section: prepTranslations.section })
            .from(prepTranslations)
            .where(inArray(prepTranslations.noteId, ids))
            .all()
        : []
      ).map((t) => `${t.noteId}:${t.section}`),
    );
    const errors: CometIssue[] = [];
    const updates: { noteId: number; section: number; score: number }[] = [];
    const firstLine = new Map<string, number>();
    for (const r of parsed.rows) {
      const note = byExternal.get(r.noteId);
      if (!note) {
        errors.push({ line: r.line, message: `no note ${JSON.stringify(r.noteId)} in this project` });
        continue;
      }
      const section = typeof r.section === "number" ? r.section : note.sections.findIndex((s) => s.kind === r.section);
      if (section < 0 || !translated.has(`${note.id}:${section}`)) {
        errors.push({
          line: r.line,
          message: `note ${JSON.stringify(r.noteId)} has no translated section ${JSON.stringify(r.section)}`,
        });
        continue;
      }
      const key = `${note.id}:${section}`;
      const first = firstLine.get(key);
      if (first !== undefined) {
        errors.push({
          line: r.line,
          message: `note ${JSON.stringify(r.noteId)} section ${section} is given twice: on line ${first} and on line ${r.line}`,
        });
        continue;
      }
      firstLine.set(key, r.line);
      updates.push({ noteId: note.id, section, score: r.score });
    }
    if (errors.length) return { ok: false as const, errors };
    for (const u of updates)
      tx.update(prepTranslations)
        .set({ comet: u.score })
        .where(and(eq(prepTranslations.noteId, u.noteId), eq(prepTranslations.section, u.section)))
        .run();
    const noteCount = new Set(updates.map((u) => u.noteId)).size;
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "prep_project",
      entityId: project.id,
      action: "comet_import",
      changes: { scores: updates.length, notes: noteCount },
      at: now,
    });
    return { ok: true as const, scores: updates.length, notes: noteCount };
  });
}

/** What the project's page shows of the quality check: the settings in force and the counts so far. */
export function projectQualityState(db: Db, projectId: number) {
  const project = db
    .select({ settings: prepProjects.settings })
    .from(prepProjects)
    .where(eq(prepProjects.id, projectId))
    .get();
  if (!project) return null;
  const ids = db
    .select({ id: prepNotes.id })
    .from(prepNotes)
    .where(eq(prepNotes.projectId, projectId))
    .all()
    .map((n) => n.id);
  const translated = ids.length
    ? new Set(
        db
          .select({ noteId: prepTranslations.noteId })
          .from(prepTranslations)
          .where(inArray(prepTranslations.noteId, ids))
          .all()
          .map((t) => t.noteId),
      ).size
    : 0;
  const quality = ids.length
    ? db
        .select({ needs: prepNoteQuality.needsCorrection })
        .from(prepNoteQuality)
        .where(inArray(prepNoteQuality.noteId, ids))
        .all()
    : [];
  return {
    settings: qualitySettingsOf(project.settings),
    translatedNotes: translated,
    scored: quality.length,
    needsCorrection: quality.filter((q) => q.needs).length,
  };
}
