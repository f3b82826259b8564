/**
 * Recall and precision of the detectors on a labelled set (docs/preparation.md, "How well the detectors do"): notes
 * with their gold spans, each a category and the exact text it covers. A detected span matches a gold span of the
 * same category when they overlap (one to one, in text order); `exact` counts the matches with the same bounds too.
 */
import { CATEGORIES, detectAll, type Category, type DetectorConfig } from "./detectors";

export interface GoldSpan {
  section: number;
  category: Category;
  /** The text the span covers, as it is in the section. */
  text: string;
  /** Which occurrence of `text` in the section (1 = the first, the default). */
  nth?: number;
}

export interface LabelledNote {
  id: string;
  language: string;
  sections: string[];
  gold: GoldSpan[];
}

export interface CategoryScore {
  category: Category;
  gold: number;
  detected: number;
  /** Detections overlapping a gold span of their category (one to one). */
  matched: number;
  /** Of those, the ones with exactly the gold span's bounds. */
  exact: number;
  /** matched / detected, null when nothing was detected. */
  precision: number | null;
  /** matched / gold, null when there is no gold span. */
  recall: number | null;
}

/** Where a gold span is, or an error naming the note when its text is not in the section. */
export function locateGold(note: LabelledNote, g: GoldSpan): { start: number; end: number } {
  const text = note.sections[g.section];
  if (text === undefined) throw new Error(`note ${note.id}: no section ${g.section}`);
  let at = -1;
  for (let i = 0; i < (g.nth ?? 1); i++) {
    at = text.indexOf(g.text, at + 1);
    if (at < 0)
      throw new Error(`note ${note.id}: "${g.text}" (occurrence ${g.nth ?? 1}) is not in section ${g.section}`);
  }
  return { start: at, end: at + g.text.length };
}

const round = (x: number) => Math.round(x * 1000) / 1000;

export function evaluateDetectors(notes: readonly LabelledNote[], config: DetectorConfig): CategoryScore[] {
  const counts = new Map<Category, { gold: number; detected: number; matched: number; exact: number }>(
    CATEGORIES.map((c) => [c, { gold: 0, detected: 0, matched: 0, exact: 0 }]),
  );
  for (const note of notes) {
    note.sections.forEach((text, section) => {
      const gold = note.gold
        .filter((g) => g.section === section)
        .map((g) => ({ ...locateGold(note, g), category: g.category, used: false }));
      const found = detectAll(text, config, note.language);
      for (const g of gold) counts.get(g.category)!.gold++;
      for (const d of found) {
        const c = counts.get(d.category)!;
        c.detected++;
        const hit = gold.find((g) => !g.used && g.category === d.category && g.start < d.end && d.start < g.end);
        if (!hit) continue;
        hit.used = true;
        c.matched++;
        if (hit.start === d.start && hit.end === d.end) c.exact++;
      }
    });
  }
  return CATEGORIES.map((category) => {
    const c = counts.get(category)!;
    return {
      category,
      ...c,
      precision: c.detected ? round(c.matched / c.detected) : null,
      recall: c.gold ? round(c.matched / c.gold) : null,
    };
  });
}
