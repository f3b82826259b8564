/**
 * The correction of a note's English text (docs/preparation.md, "Correction"): one text per translated section,
 * written by a reviewer of the project while they see the minimised source, the back-translation and why the note
 * needs correction. Pure: the values' one schema (page and route) and what a submission must hold.
 */
import { z } from "zod";
import { tooLongMessage } from "../../work-items/domain/text-limits";

/** The longest corrected section, the case import's own limit of a section (docs/formats.md). */
export const MAX_CORRECTED_CHARS = 100_000;

export interface CorrectionValues {
  /** Section index (as text) → the English text. */
  texts: Record<string, string>;
}

export const CorrectionValuesSchema = z
  .object({
    texts: z.record(
      z.string().regex(/^\d{1,2}$/),
      z.string().max(MAX_CORRECTED_CHARS, tooLongMessage("A section's English text", MAX_CORRECTED_CHARS)),
    ),
  })
  .strict();

/** A translated section as the correction sees it. */
export interface CorrectionSection {
  section: number;
  /** The minimised source text that was translated. */
  source: string;
}

/** Field errors of a submission: every section whose source has text needs its English text. */
export function checkCorrection(
  values: CorrectionValues,
  sections: readonly CorrectionSection[],
): Record<string, string> {
  const e: Record<string, string> = {};
  for (const s of sections)
    if (s.source.trim() && !(values.texts[String(s.section)] ?? "").trim())
      e[`section:${s.section}`] = "Write this section's English text.";
  return e;
}

/** The values kept for a note: its sections' texts only. */
export function normaliseCorrection(
  values: CorrectionValues,
  sections: readonly CorrectionSection[],
): CorrectionValues {
  const texts: Record<string, string> = {};
  for (const s of sections) texts[String(s.section)] = values.texts[String(s.section)] ?? "";
  return { texts };
}
