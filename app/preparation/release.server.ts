/**
 * Release and export of a preparation project (docs/preparation.md, "Release" and "Export"), admins only.
 *
 * - **Release**: the project's final, non-excluded notes in English — per section the corrected text when a reviewer
 *   corrected it, else the translation — become a Safe-Psych study through the case import (annotation's
 *   `importCases`, the same path as `import`), or the released CSV's layout in a file. Refused as a whole, with the
 *   list of what is missing, while any note is unreviewed, waits for a settlement or a correction, or has a section
 *   not translated from its final text.
 * - **Export**: the final minimised notes in the source language, in the case import's layout (CSV or JSONL).
 *
 * The plan is read in one transaction, so the notes released are exactly the notes checked.
 */
import { and, asc, eq } from "drizzle-orm";
import { prepNoteQuality, prepNotes, prepTranslations } from "../../db/schema";
import { CASE_COLUMNS, MIN_SECTIONS, SECTION_KINDS, type SectionKind } from "../annotation/public";
import { getStudyByName, importCases, StudyNameSchema } from "../annotation/public.server";
import { recordEvent } from "../audit/audit.server";
import { formatCsv } from "../formats/csv-text";
import type { Db, DbOrTx } from "../platform/db.server";
import { ServiceError } from "../platform/service-error";
import { finalReviewOf } from "./final-review.server";
import { minimisedSections } from "./domain/review";

/** One note as released or exported: its id, metadata and each section's text by kind. */
export interface OutNote {
  externalId: string;
  ageGroup: string;
  sex: string;
  sections: Partial<Record<SectionKind, string>>;
}

export type MissingKind =
  | "not reviewed"
  | "waiting for a settlement"
  | "not quality-checked"
  | "waiting for correction"
  | "untranslated"
  | "too few sections";

export interface MissingItem {
  externalId: string;
  kind: MissingKind;
  /** What exactly, in words ("sections 2, 3"). */
  detail: string;
}

export interface Plan {
  notes: OutNote[];
  excluded: number;
  missing: MissingItem[];
}

const present = (text: string) => text.trim().length > 0;

/** The final review's state of a note as a missing item, or null when it is final. */
function reviewMissing(db: DbOrTx, note: { id: number; externalId: string }): MissingItem | null {
  const final = finalReviewOf(db, note.id);
  if (final.state === "pending")
    return {
      externalId: note.externalId,
      kind: "not reviewed",
      detail: "no submitted review, or a reviewer holds a draft",
    };
  if (final.state === "differ")
    return { externalId: note.externalId, kind: "waiting for a settlement", detail: `${final.reviews} reviews differ` };
  return null;
}

function projectNotes(db: DbOrTx, projectId: number) {
  return db
    .select({
      id: prepNotes.id,
      externalId: prepNotes.externalId,
      ageGroup: prepNotes.ageGroup,
      sex: prepNotes.sex,
      sections: prepNotes.sections,
      proposals: prepNotes.proposals,
    })
    .from(prepNotes)
    .where(eq(prepNotes.projectId, projectId))
    .orderBy(asc(prepNotes.position))
    .all();
}

/** What a release of the project would hold, and what stops it (admin). */
export function releasePlan(db: DbOrTx, projectId: number): Plan {
  const plan: Plan = { notes: [], excluded: 0, missing: [] };
  for (const note of projectNotes(db, projectId)) {
    const blocked = reviewMissing(db, note);
    if (blocked) {
      plan.missing.push(blocked);
      continue;
    }
    const final = finalReviewOf(db, note.id);
    if (final.state !== "final") continue;
    const sections = minimisedSections(note, final.values);
    if (!sections) {
      plan.excluded++;
      continue;
    }
    const translations = new Map(
      db
        .select()
        .from(prepTranslations)
        .where(eq(prepTranslations.noteId, note.id))
        .all()
        .map((t) => [t.section, t]),
    );
    const untranslated: number[] = [];
    const uncorrected: number[] = [];
    const english: OutNote["sections"] = {};
    sections.forEach((s, i) => {
      if (!present(s.content)) return;
      const t = translations.get(i);
      // A translation of another text (the final review changed after it was made) is no translation of this one.
      if (!t || t.translation === null || t.sourceText !== s.content) untranslated.push(i + 1);
      else {
        if (t.correctedText === null) uncorrected.push(i + 1);
        english[s.kind as SectionKind] = t.correctedText ?? t.translation;
      }
    });
    if (untranslated.length) {
      plan.missing.push({
        externalId: note.externalId,
        kind: "untranslated",
        detail: `section${untranslated.length === 1 ? "" : "s"} ${untranslated.join(", ")}`,
      });
      continue;
    }
    const quality = db
      .select({ needs: prepNoteQuality.needsCorrection })
      .from(prepNoteQuality)
      .where(and(eq(prepNoteQuality.noteId, note.id)))
      .get();
    // A translation never checked (or translated again since its check, which deleted the verdict) is not released
    // unread: the check decides whether a person corrects it first (docs/preparation.md, "Release").
    if (!quality) {
      plan.missing.push({
        externalId: note.externalId,
        kind: "not quality-checked",
        detail: "run the quality check (prep-quality)",
      });
      continue;
    }
    if (quality.needs && uncorrected.length) {
      plan.missing.push({
        externalId: note.externalId,
        kind: "waiting for correction",
        detail: `section${uncorrected.length === 1 ? "" : "s"} ${uncorrected.join(", ")} not corrected`,
      });
      continue;
    }
    if (Object.values(english).filter((t) => present(t ?? "")).length < MIN_SECTIONS) {
      plan.missing.push({
        externalId: note.externalId,
        kind: "too few sections",
        detail: `a case needs ${MIN_SECTIONS} sections with text`,
      });
      continue;
    }
    plan.notes.push({ externalId: note.externalId, ageGroup: note.ageGroup, sex: note.sex, sections: english });
  }
  return plan;
}

/** The project's final minimised notes in the source language (export), and the notes not final yet. */
export function exportPlan(db: DbOrTx, projectId: number): Plan {
  const plan: Plan = { notes: [], excluded: 0, missing: [] };
  for (const note of projectNotes(db, projectId)) {
    const blocked = reviewMissing(db, note);
    if (blocked) {
      plan.missing.push(blocked);
      continue;
    }
    const final = finalReviewOf(db, note.id);
    if (final.state !== "final") continue;
    const sections = minimisedSections(note, final.values);
    if (!sections) {
      plan.excluded++;
      continue;
    }
    plan.notes.push({
      externalId: note.externalId,
      ageGroup: note.ageGroup,
      sex: note.sex,
      sections: Object.fromEntries(sections.map((s) => [s.kind, s.content])),
    });
  }
  return plan;
}

/** The refusal's lines: one per note, "NOTE: what is missing (detail)". */
export function missingLines(missing: readonly MissingItem[]): string[] {
  return missing.map((m) => `${m.externalId}: ${m.kind} (${m.detail})`);
}

/** The case import's JSONL layout: one object per note, its id, metadata and the five sections (docs/formats.md). */
export function notesJsonl(notes: readonly OutNote[]): string {
  return notes
    .map(
      (n) =>
        JSON.stringify({
          id: n.externalId,
          age_group: n.ageGroup,
          sex: n.sex,
          ...Object.fromEntries(SECTION_KINDS.map((k) => [k, n.sections[k] ?? ""])),
        }) + "\n",
    )
    .join("");
}

/**
 * The case import's CSV layout (id, age_group, sex, the five sections), or with `released` the released CSV's
 * thirteen columns (the label columns empty: nobody has labelled the notes yet). Through the one CSV writer, every
 * cell formula-safe (docs/formats.md, "CSV").
 */
export function notesCsv(notes: readonly OutNote[], opts: { released?: boolean } = {}): string {
  const header = CASE_COLUMNS.filter((c) => c !== "source_diagnosis" && (opts.released || !isLabel(c)));
  return formatCsv([
    header,
    ...notes.map((n) =>
      header.map((c) =>
        c === "id"
          ? n.externalId
          : c === "age_group"
            ? n.ageGroup
            : c === "sex"
              ? n.sex
              : (n.sections[c as SectionKind] ?? ""),
      ),
    ),
  ]);
}

const isLabel = (c: string) => !["id", "age_group", "sex", ...SECTION_KINDS].includes(c);

/** Reads a plan in one transaction: what is checked is what is written. */
export function readPlan(db: Db, projectId: number, kind: "release" | "export"): Plan {
  return db.transaction((tx) => (kind === "release" ? releasePlan(tx, projectId) : exportPlan(tx, projectId)));
}

export type ReleaseResult =
  | { ok: true; study: string; notes: number; excluded: number }
  | { ok: false; message: string; missing: MissingItem[]; lines: string[] };

/**
 * Releases the project into a new Safe-Psych study through the case import (all or nothing: the import removes what
 * it wrote when it fails). Refused, with every missing item, while any note is not ready; refused when the study
 * exists (a release makes a study, it never changes one). Audited with the counts, never a note's text.
 */
export function releaseToStudy(
  db: Db,
  input: { projectId: number; projectName: string; studyName: string; actorId: string | null; now?: number },
): ReleaseResult {
  const name = StudyNameSchema.safeParse(input.studyName);
  if (!name.success) throw new ServiceError(name.error.issues[0]!.message, "study");
  if (getStudyByName(db, name.data))
    throw new ServiceError(`A study named "${name.data}" exists already: release into a new study.`, "study", 409);
  const plan = readPlan(db, input.projectId, "release");
  if (plan.missing.length)
    return {
      ok: false,
      message: `Not released: ${plan.missing.length} note${plan.missing.length === 1 ? " is" : "s are"} not ready.`,
      missing: plan.missing,
      lines: missingLines(plan.missing),
    };
  if (plan.notes.length === 0)
    return { ok: false, message: "Not released: the project has no note to release.", missing: [], lines: [] };
  const bytes = new TextEncoder().encode(notesJsonl(plan.notes));
  const result = importCases(db, {
    studyName: name.data,
    bytes,
    filename: `${input.projectName}.jsonl`,
    format: "jsonl",
    actorId: input.actorId,
  });
  if (!result.ok || !result.written) {
    const lines = [...result.parse.errors, ...result.conflicts].map((e) => `line ${e.line}: ${e.message}`);
    return {
      ok: false,
      message: "Not released: the case import refused the notes; nothing was written.",
      missing: [],
      lines,
    };
  }
  recordEvent(db, {
    actorId: input.actorId,
    entity: "prep_project",
    entityId: input.projectId,
    action: "release",
    changes: { study: name.data, notes: plan.notes.length, excluded: plan.excluded },
    at: input.now ?? Date.now(),
  });
  return { ok: true, study: name.data, notes: plan.notes.length, excluded: plan.excluded };
}
