/**
 * The quality check of a translated note (docs/preparation.md, "Quality"): BLEU and chrF of each section's
 * back-translation against its minimised source text and of the note as a whole, its COMET when imported, and the
 * preservation check of test names and scores, which decide whether the note goes to correction and why.
 */
import type { PrepQualitySettings } from "../../../db/vocabulary";
import { bleuFromStats, bleuStats, chrfFromStats, chrfStats, sumBleuStats, sumChrfStats } from "../../stats/mt-metrics";

/** A test name or score of the source that the back-translation does not keep (prep_note_quality.mismatches). */
export interface PrepMismatch {
  section: number;
  test: string;
  /** The score as the source wrote it (decimal comma as a point), or "" when the test's name itself is missing. */
  score: string;
}

/** The tests the Safe-Psych translation prompt tells the model to keep (*Safe-Psych*, appendix 8.1). */
export const DEFAULT_PRESERVED_TESTS: readonly string[] = [
  "MMSE",
  "MADRS",
  "PANSS",
  "GAFS",
  "IQ",
  "SCL-90",
  "BDI",
  "HAM-D",
  "HAM-A",
  "HDRS",
  "HRSA",
  "SPMSQ",
  "GDS",
  "YMRS",
];

/**
 * The default thresholds (docs/preparation.md, "Quality", where the choice is explained): BLEU 25 and chrF 50 are
 * about sixty and seventy per cent of the round-trip means the paper reports over its whole corpus (41.9 and 71.3),
 * so a note well below the usual gets read; COMET is not checked by default, its scale being the COMET model's.
 */
export const DEFAULT_QUALITY: PrepQualitySettings = {
  minBleu: 25,
  minChrf: 50,
  minComet: null,
  tests: [...DEFAULT_PRESERVED_TESTS],
};

export function qualitySettingsOf(settings: { quality?: PrepQualitySettings }): PrepQualitySettings {
  return settings.quality ?? DEFAULT_QUALITY;
}

/** Why a test name cannot be used in the list, or null. */
export function testNameProblem(name: string): string | null {
  if (name.trim() !== name || name === "") return `the test name "${name}" is empty or has spaces around it`;
  if (name.length > 40) return `the test name "${name.slice(0, 40)}…" is longer than 40 characters`;
  if (/[\p{Cc}\p{Cf}]/u.test(name)) return "a test name may not contain control or format characters";
  return null;
}

/** A test named in a text, with the score written after it ("" when none is). */
export interface TestMention {
  test: string;
  score: string;
  start: number;
  end: number;
}

function escapeRegExp(s: string): string {
  // Unicode-mode patterns refuse an escaped "-" outside a class, so only the syntax characters are escaped.
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * What may stand between a test's name and its score: at most 20 characters with no digit and no end of clause
 * (`.`, `;`, `,`, `!`, `?`, a line end) — "MMSE 22", "MMSE: 22/30", "Scor MMSE de 25", "HAM-D score of 18",
 * "BDI-II 25". The score is the first number, its decimal comma read as a point ("3,5" is "3.5"); what follows
 * it (a maximum, "/30") is not compared.
 */
const SCORE_AFTER = /^([^\d.;,!?\n\r]{0,20}?)(\d+(?:[.,]\d+)?)/u;

/**
 * Every mention of the listed tests in a text, found by exact string matching (case as written in the list) where
 * the name is not part of a longer word or number; a mention inside a longer listed name's ("BDI" in "BDI-II" when
 * both are listed) is left out. Each with the score that follows it, unless another listed name comes between.
 */
export function testMentions(text: string, tests: readonly string[]): TestMention[] {
  const found: TestMention[] = [];
  for (const test of tests) {
    if (!test) continue;
    const re = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(test)}(?![\\p{L}\\p{N}])`, "gu");
    for (const m of text.matchAll(re)) found.push({ test, score: "", start: m.index, end: m.index + test.length });
  }
  const kept = found
    .filter(
      (a) => !found.some((b) => b !== a && b.start <= a.start && b.end >= a.end && b.end - b.start > a.end - a.start),
    )
    .sort((a, b) => a.start - b.start || b.end - a.end);
  return kept.map((m, i) => {
    const nextStart = kept[i + 1]?.start ?? text.length;
    const after = SCORE_AFTER.exec(text.slice(m.end, nextStart));
    return after ? { ...m, score: after[2]!.replace(",", ".") } : m;
  });
}

/**
 * The preservation check of one section: each test mention of the source (name and score) must be in the
 * back-translation. A mention with a score is matched by a mention of the same test with the same score; one without
 * a score by any mention of the test left over. What is not matched is a mismatch: the test with the source's score
 * ("MMSE 22 missing"), or with "" when the source gave none and the name itself is missing. Tests the
 * back-translation names that the source does not (a name the translation completed) are not mismatches.
 */
export function preservationMismatches(
  section: number,
  source: string,
  backTranslation: string,
  tests: readonly string[],
): PrepMismatch[] {
  const wanted = testMentions(source, tests);
  const left = testMentions(backTranslation, tests);
  const take = (pred: (m: TestMention) => boolean): boolean => {
    const i = left.findIndex(pred);
    if (i < 0) return false;
    left.splice(i, 1);
    return true;
  };
  const missing: { at: number; mismatch: PrepMismatch }[] = [];
  const withoutScore: TestMention[] = [];
  for (const m of wanted) {
    if (m.score === "") withoutScore.push(m);
    else if (!take((b) => b.test === m.test && b.score === m.score))
      missing.push({ at: m.start, mismatch: { section, test: m.test, score: m.score } });
  }
  for (const m of withoutScore)
    if (!take((b) => b.test === m.test && b.score === "") && !take((b) => b.test === m.test))
      missing.push({ at: m.start, mismatch: { section, test: m.test, score: "" } });
  return missing.sort((a, b) => a.at - b.at).map((m) => m.mismatch);
}

export interface SectionInput {
  section: number;
  source: string;
  backTranslation: string;
  comet: number | null;
}

export interface NoteQuality {
  sections: { section: number; bleu: number; chrf: number }[];
  /** Corpus-level over the note's sections. */
  bleu: number;
  chrf: number;
  /** The mean of the sections' COMET when every section has one, else null. */
  comet: number | null;
  mismatches: PrepMismatch[];
  needsCorrection: boolean;
  reason: string;
}

function fmt(x: number, digits: number): string {
  return Number(x.toFixed(digits)).toString();
}

/** A note's scores and whether it needs correction, with the reason in words ("BLEU 18.2 below 25; MMSE 22 missing"). */
export function noteQuality(sections: readonly SectionInput[], settings: PrepQualitySettings): NoteQuality {
  const ordered = [...sections].sort((a, b) => a.section - b.section);
  // Each section's counts once: its sentence-level scores, and summed, the note's corpus-level ones.
  const bleuCounts = ordered.map((s) => bleuStats(s.backTranslation, s.source));
  const chrfCounts = ordered.map((s) => chrfStats(s.backTranslation, s.source));
  const bleu = bleuFromStats(sumBleuStats(bleuCounts), { effectiveOrder: false });
  const chrf = chrfFromStats(sumChrfStats(chrfCounts));
  const comets = ordered.map((s) => s.comet);
  const comet =
    comets.length > 0 && comets.every((c) => c !== null)
      ? (comets as number[]).reduce((a, b) => a + b, 0) / comets.length
      : null;
  const mismatches = ordered.flatMap((s) =>
    preservationMismatches(s.section, s.source, s.backTranslation, settings.tests),
  );
  const reasons: string[] = [];
  if (settings.minBleu !== null && bleu < settings.minBleu)
    reasons.push(`BLEU ${fmt(bleu, 1)} below ${fmt(settings.minBleu, 2)}`);
  if (settings.minChrf !== null && chrf < settings.minChrf)
    reasons.push(`chrF ${fmt(chrf, 1)} below ${fmt(settings.minChrf, 2)}`);
  if (settings.minComet !== null && comet !== null && comet < settings.minComet)
    reasons.push(`COMET ${fmt(comet, 3)} below ${fmt(settings.minComet, 3)}`);
  for (const m of mismatches) reasons.push(`${m.test}${m.score ? ` ${m.score}` : ""} missing`);
  return {
    sections: ordered.map((s, i) => ({
      section: s.section,
      bleu: bleuFromStats(bleuCounts[i]!, { effectiveOrder: true }),
      chrf: chrfFromStats(chrfCounts[i]!),
    })),
    bleu,
    chrf,
    comet,
    mismatches,
    needsCorrection: reasons.length > 0,
    reason: reasons.join("; "),
  };
}
