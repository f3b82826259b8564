/**
 * The preparation report (docs/preparation.md, "The report"): the cases reviewed and excluded, the reviewers'
 * decisions by category, the back-translation scores' distributions and the mismatches found and corrected; as a
 * page, a CSV through the one formula-safe writer, and a chart. Admins only: callers are behind the admin guard.
 * Counts, scores and the reasons given; never a note's text.
 */
import { asc, eq, inArray } from "drizzle-orm";
import { prepNoteQuality, prepNotes, prepProjects, prepTranslations } from "../../db/schema";
import { PREP_CATEGORIES } from "../../db/vocabulary";
import { formatCsv } from "../formats/csv-text";
import type { Db } from "../platform/db.server";
import { corpusBleu, corpusChrf } from "../stats/mt-metrics";
import { finalReviewOf } from "./final-review.server";
import { qualitySettingsOf } from "./domain/quality";
import { distribution, reportChartSpec, reportCsvRows, type ReportData } from "./domain/report";

export function preparationReport(db: Db, projectId: number): ReportData | null {
  const project = db.select().from(prepProjects).where(eq(prepProjects.id, projectId)).get();
  if (!project) return null;
  const notes = db
    .select({ id: prepNotes.id, externalId: prepNotes.externalId, proposals: prepNotes.proposals })
    .from(prepNotes)
    .where(eq(prepNotes.projectId, projectId))
    .orderBy(asc(prepNotes.position))
    .all();
  const ids = notes.map((n) => n.id);
  const cases = { total: notes.length, reviewed: 0, excluded: 0, pending: 0, differ: 0 };
  const tally = new Map(
    PREP_CATEGORIES.map((c) => [c, { category: c, accepted: 0, edited: 0, rejected: 0, missed: 0 }]),
  );
  const exclusions: ReportData["exclusions"] = [];
  for (const n of notes) {
    const final = finalReviewOf(db, n.id);
    if (final.state === "pending") cases.pending++;
    else if (final.state === "differ") cases.differ++;
    else if (final.values.excluded) {
      cases.excluded++;
      exclusions.push({ note: n.externalId, reason: final.values.exclusionReason });
    } else {
      cases.reviewed++;
      for (const p of n.proposals) {
        const d = final.values.decisions[p.id];
        if (!d) continue;
        const t = tally.get(p.category)!;
        if (d.action === "accept") t.accepted++;
        else if (d.action === "edit") t.edited++;
        else t.rejected++;
      }
      for (const m of final.values.missed) tally.get(m.category)!.missed++;
    }
  }
  const quality = ids.length ? db.select().from(prepNoteQuality).where(inArray(prepNoteQuality.noteId, ids)).all() : [];
  const translations = ids.length
    ? db
        .select({
          noteId: prepTranslations.noteId,
          section: prepTranslations.section,
          sourceText: prepTranslations.sourceText,
          backTranslation: prepTranslations.backTranslation,
          correctedText: prepTranslations.correctedText,
        })
        .from(prepTranslations)
        .where(inArray(prepTranslations.noteId, ids))
        .all()
    : [];
  const scoredIds = new Set(quality.map((q) => q.noteId));
  const pairs = translations
    .filter((t) => scoredIds.has(t.noteId) && t.backTranslation !== null)
    .map((t) => ({ hypothesis: t.backTranslation!, reference: t.sourceText }));
  const corrected = new Set(
    translations.filter((t) => t.correctedText !== null).map((t) => `${t.noteId}:${t.section}`),
  );
  const noteCorrected = (noteId: number) => translations.some((t) => t.noteId === noteId && t.correctedText !== null);
  const comets = quality.flatMap((q) => (q.comet === null ? [] : [q.comet]));
  const byId = new Map(quality.map((q) => [q.noteId, q]));
  let mismatches = 0;
  let mismatchesCorrected = 0;
  for (const q of quality)
    for (const m of q.mismatches) {
      mismatches++;
      if (corrected.has(`${q.noteId}:${m.section}`)) mismatchesCorrected++;
    }
  const settings = qualitySettingsOf(project.settings);
  return {
    project: { id: project.id, name: project.name, sourceLanguage: project.sourceLanguage },
    cases,
    proposals: [...tally.values()],
    exclusions,
    scores: [
      distribution(
        "BLEU",
        quality.flatMap((q) => (q.bleu === null ? [] : [q.bleu])),
        pairs.length ? corpusBleu(pairs) : null,
      ),
      distribution(
        "chrF",
        quality.flatMap((q) => (q.chrf === null ? [] : [q.chrf])),
        pairs.length ? corpusChrf(pairs) : null,
      ),
      distribution("COMET", comets, comets.length ? comets.reduce((a, b) => a + b, 0) / comets.length : null),
    ],
    quality: {
      scored: quality.length,
      needsCorrection: quality.filter((q) => q.needsCorrection).length,
      corrected: quality.filter((q) => q.needsCorrection && noteCorrected(q.noteId)).length,
      notesWithMismatches: quality.filter((q) => q.mismatches.length > 0).length,
      mismatches,
      mismatchesCorrected,
    },
    thresholds: settings,
    notes: notes.flatMap((n) => {
      const q = byId.get(n.id);
      return q
        ? [
            {
              note: n.externalId,
              bleu: q.bleu,
              chrf: q.chrf,
              comet: q.comet,
              needsCorrection: q.needsCorrection,
              reason: q.reason,
              corrected: noteCorrected(n.id),
            },
          ]
        : [];
    }),
  };
}

/** preparation-report.csv: the report in long form, every cell through the formula-safe writer. */
export function preparationReportCsv(db: Db, projectId: number): string | null {
  const r = preparationReport(db, projectId);
  return r ? formatCsv(reportCsvRows(r)) : null;
}

/** The report's chart as SVG, rendered on the server (app/charts). */
export async function preparationReportSvg(db: Db, projectId: number): Promise<string | null> {
  const r = preparationReport(db, projectId);
  if (!r) return null;
  const { renderSvg } = await import("../charts/charts.server");
  return renderSvg(reportChartSpec(r));
}
