/**
 * The minimisation detectors (docs/preparation.md, "Detectors"): one per category of the data minimisation the
 * Safe-Psych authors applied to already de-identified notes — dates and times, places, person and institution names,
 * family references, quoted speech, physical features, surgeries and injuries, ages and psychological test scores.
 * Each returns proposals on one section's text: a span (UTF-16 offsets, as the page and the database keep them) and
 * what it becomes — nothing (removed), an age group, or a score's range. Pure: the lists, patterns and score table
 * come in the configuration.
 */
import { PREP_CATEGORIES, type PrepCategory } from "../../../db/vocabulary";
import { ageGroupOf } from "./age-groups";
import { scoreRangeOf, type ScoreTable } from "./score-table";
import { pushAll } from "../../stats/extremes";

export const CATEGORIES = PREP_CATEGORIES;
export type Category = PrepCategory;

export const CATEGORY_LABELS: Record<Category, string> = {
  date_time: "Date or time",
  place: "Place",
  name: "Person or institution name",
  family: "Family reference",
  quote: "Quoted speech",
  physical: "Physical feature",
  surgery_injury: "Surgery or injury",
  age: "Age",
  test_score: "Test score",
};

/** A span of one section's text and what it becomes ("" removes it). */
export interface Span {
  start: number;
  end: number;
  category: Category;
  replacement: string;
}

export interface DetectorConfig {
  /** Place names looked for as whole words (case-insensitive): cities, counties, villages, countries. */
  places: readonly string[];
  /** Person names (clinicians, staff) looked for as whole words. */
  names: readonly string[];
  /** Institution names (hospitals, clinics, wards) looked for as whole words. */
  institutions: readonly string[];
  /** More patterns for names (JavaScript regular expressions, Unicode mode): each match is a name. */
  namePatterns: readonly string[];
  /** Score ranges per test (docs/preparation.md, "Test scores"). */
  scoreTable: ScoreTable;
}

/** Not a letter or digit on either side: a whole word, diacritics included (`\b` knows only ASCII). */
const L = "(?<![\\p{L}\\p{N}])";
const R = "(?![\\p{L}\\p{N}])";

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function* matches(re: RegExp, text: string): Generator<RegExpExecArray> {
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0] === "") re.lastIndex++;
    else yield m;
  }
}

/** Whole-word, case-insensitive matches of any of `words` (longest first). */
function listPattern(words: readonly string[]): RegExp | null {
  const clean = words.map((w) => w.trim()).filter((w) => w !== "");
  if (clean.length === 0) return null;
  const sorted = [...clean].sort((a, b) => b.length - a.length).map(escape);
  return new RegExp(`${L}(?:${sorted.join("|")})${R}`, "giu");
}

function spansOf(re: RegExp | null, text: string, category: Category, replacement = "", group?: number): Span[] {
  if (!re) return [];
  const out: Span[] = [];
  for (const m of matches(re, text)) {
    if (group !== undefined && m.indices?.[group]) {
      const [start, end] = m.indices[group]!;
      out.push({ start, end, category, replacement });
    } else out.push({ start: m.index, end: m.index + m[0].length, category, replacement });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Dates and times

const MONTHS = [
  // English
  "january",
  "february",
  "march",
  "april",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
  "jan",
  "feb",
  "mar",
  "apr",
  "jun",
  "jul",
  "aug",
  "sep",
  "sept",
  "oct",
  "nov",
  "dec",
  // Romanian
  "ianuarie",
  "februarie",
  "martie",
  "aprilie",
  "mai",
  "iunie",
  "iulie",
  "septembrie",
  "octombrie",
  "noiembrie",
  "decembrie",
  "ian",
  "iun",
  "iul",
  "noi",
];
const MONTH = `(?:${[...MONTHS, "may"].sort((a, b) => b.length - a.length).join("|")})\\.?`;
const YEAR = "(?:19|20)\\d{2}";
const DATE_PATTERNS = [
  // 12.03.2015, 12/03/2015, 12-03-15, 2015-03-12
  `${L}\\d{1,2}[./-]\\d{1,2}[./-](?:${YEAR}|\\d{2})${R}`,
  `${L}${YEAR}-\\d{1,2}-\\d{1,2}${R}`,
  // 12 March 2015, 12 martie 2015, March 12, 2015, martie 2015, March 2015
  `${L}\\d{1,2}\\s+${MONTH}(?:\\s+${YEAR})?${R}`,
  `${L}${MONTH}\\s+\\d{1,2}(?:,\\s*${YEAR})?${R}`,
  `${L}${MONTH}\\s+${YEAR}${R}`,
  // a year alone: 2015, in 1998
  `${L}${YEAR}${R}`,
  // times: 14:30, 8.15 am, ora 14
  `${L}\\d{1,2}:\\d{2}(?:\\s*(?:am|pm))?${R}`,
  `${L}\\d{1,2}(?:\\.\\d{2})?\\s*(?:am|pm|a\\.m\\.|p\\.m\\.)(?![\\p{L}\\p{N}])`,
  `${L}(?:ora|orele)\\s+\\d{1,2}(?:[:.]\\d{2})?${R}`,
  // weekdays
  `${L}(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|luni|marți|marti|miercuri|joi|vineri|sâmbătă|sambata|duminică|duminica)${R}`,
];
const DATE_RE = new RegExp(DATE_PATTERNS.join("|"), "giu");

export function detectDates(text: string): Span[] {
  return spansOf(DATE_RE, text, "date_time");
}

// ---------------------------------------------------------------------------------------------------------------
// Places

/** Words that introduce a place name: "the village of X", "satul X", "județul X", "X County", "str. X". */
const PLACE_CUE_RE = new RegExp(
  [
    `${L}(?:village|town|city|county|commune|municipality)\\s+of\\s+\\p{Lu}[\\p{L}-]+(?:\\s+\\p{Lu}[\\p{L}-]+)?`,
    `${L}(?:satul|comuna|orașul|orasul|municipiul|județul|judetul|localitatea|strada|str\\.)\\s+\\p{Lu}[\\p{L}-]+(?:\\s+\\p{Lu}[\\p{L}-]+)?`,
    `${L}\\p{Lu}[\\p{L}-]+\\s+(?:County|Street|Village)${R}`,
  ].join("|"),
  "gu",
);

export function detectPlaces(text: string, config: Pick<DetectorConfig, "places">): Span[] {
  return [...spansOf(listPattern(config.places), text, "place"), ...spansOf(PLACE_CUE_RE, text, "place")];
}

// ---------------------------------------------------------------------------------------------------------------
// Person and institution names

const NAME_CUE_RE = new RegExp(
  [
    // Dr. Popescu, dr. Ana Ionescu, Prof. Marin, asistenta Maria
    `${L}(?:Dr|dr|Prof|prof|Doctor|doctor|Doctorul|doctorul|Doamna|doamna|Domnul|domnul|Mr|Mrs|Ms|nurse|asistenta)\\.?\\s+\\p{Lu}[\\p{L}-]+(?:\\s+\\p{Lu}[\\p{L}-]+)?`,
    // Spitalul Județean Sibiu, Clinica Psihiatrie II, Centrul de Sănătate Mintală
    `${L}(?:Spitalul|Spital|Clinica|Centrul|Sanatoriul|Secția|Sectia)(?:\\s+(?:de|din|pentru|și)?\\s*\\p{Lu}[\\p{L}.-]*)+`,
    // Saint Mary Hospital, Riverside Clinic
    `${L}(?:\\p{Lu}[\\p{L}.'-]*\\s+){1,4}(?:Hospital|Clinic|Centre|Center|Infirmary|Sanatorium)${R}`,
  ].join("|"),
  "gu",
);

export function detectNames(
  text: string,
  config: Pick<DetectorConfig, "names" | "institutions" | "namePatterns">,
): Span[] {
  const out = [
    ...spansOf(listPattern(config.names), text, "name"),
    ...spansOf(listPattern(config.institutions), text, "name"),
    ...spansOf(NAME_CUE_RE, text, "name"),
  ];
  for (const source of config.namePatterns) pushAll(out, spansOf(new RegExp(source, "gu"), text, "name"));
  return out;
}

/** Why a name pattern cannot be used, or null (checked when a project's configuration is saved). */
export function namePatternProblem(source: string): string | null {
  try {
    const re = new RegExp(source, "gu");
    if (re.test("")) return `the pattern "${source}" matches empty text.`;
    return null;
  } catch (e) {
    return `the pattern "${source}" is not a regular expression: ${(e as Error).message}`;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Family references

const FAMILY_WORDS = [
  // English
  "mother",
  "mothers",
  "mother's",
  "father",
  "fathers",
  "father's",
  "sister",
  "sisters",
  "sister's",
  "brother",
  "brothers",
  "brother's",
  "son",
  "sons",
  "son's",
  "daughter",
  "daughters",
  "daughter's",
  "husband",
  "husband's",
  "wife",
  "wife's",
  "grandmother",
  "grandfather",
  "grandson",
  "granddaughter",
  "grandchildren",
  "grandparents",
  "aunt",
  "uncle",
  "cousin",
  "cousins",
  "niece",
  "nephew",
  "stepmother",
  "stepfather",
  "stepson",
  "stepdaughter",
  "mother-in-law",
  "father-in-law",
  "twin",
  // Romanian, with their common inflections
  "mama",
  "mamei",
  "mamă",
  "mamii",
  "mamei sale",
  "tatăl",
  "tatal",
  "tatălui",
  "tatalui",
  "tata",
  "sora",
  "surorii",
  "surori",
  "surorile",
  "fratele",
  "fratelui",
  "frații",
  "fratii",
  "fiul",
  "fiului",
  "fiii",
  "fiica",
  "fiicei",
  "fiicele",
  "soțul",
  "sotul",
  "soțului",
  "sotului",
  "soția",
  "sotia",
  "soției",
  "sotiei",
  "bunica",
  "bunicii",
  "bunicul",
  "bunicului",
  "bunicii",
  "mătușa",
  "matusa",
  "mătușii",
  "unchiul",
  "unchiului",
  "vărul",
  "varul",
  "verișoara",
  "nepotul",
  "nepoata",
  "soacra",
  "socrul",
  "geamănul",
  "geamăna",
];
const FAMILY_RE = listPattern(FAMILY_WORDS);

/** What a family reference becomes, by the notes' language: the relation generalised. */
export function familyReplacement(language: string): string {
  return language.toLowerCase().startsWith("ro") ? "ruda" : "relative";
}

export function detectFamily(text: string, language: string): Span[] {
  return spansOf(FAMILY_RE, text, "family", familyReplacement(language));
}

// ---------------------------------------------------------------------------------------------------------------
// Quoted speech

/** Text between double quotation marks of any of the usual forms, one to 600 characters, on one paragraph. */
const QUOTE_RE = /"[^"\n]{1,600}"|“[^”\n]{1,600}”|„[^”“"\n]{1,600}[”“"]|«[^»\n]{1,600}»|‘[^’\n]{1,600}’/gu;

export function detectQuotes(text: string): Span[] {
  // A pair of quotes around a single word of capitals or digits (a test's name, a code) is not speech.
  return spansOf(QUOTE_RE, text, "quote").filter((s) => !/^.[\p{Lu}\p{N}.-]{1,10}.$/u.test(text.slice(s.start, s.end)));
}

// ---------------------------------------------------------------------------------------------------------------
// Physical features, surgeries and injuries: a cue word and the words after it up to the clause's end

/** The cue word and at most `words` more words, stopping at punctuation. */
const phrase = (cues: readonly string[], words: number) =>
  new RegExp(
    `${L}(?:${[...cues].sort((a, b) => b.length - a.length).join("|")})${R}(?:[ \\t]+[\\p{L}\\p{N}'’-]+){0,${words}}`,
    "giu",
  );

const STOP_WORDS = new Set([
  "and",
  "but",
  "who",
  "which",
  "with",
  "is",
  "was",
  "has",
  "had",
  "și",
  "si",
  "dar",
  "care",
  "este",
  "era",
  "are",
  "avea",
]);

const TRAILING_RE = /\s+(?:in|on|at|of|for|to|the|a|an|her|his|în|in|la|de|cu|pe|din|lui|ei)$/iu;

/** Ends a phrase at the first joining word (", and", "which", "și"), so one clause is proposed, not the sentence. */
function trimPhrase(text: string, span: Span): Span {
  const words = text.slice(span.start, span.end).split(/(\s+)/);
  let end = span.start;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (i > 0 && i % 2 === 0 && STOP_WORDS.has(w.toLowerCase())) break;
    end += w.length;
  }
  let trimmed = text.slice(span.start, end).replace(/\s+$/, "");
  // Nor with a word that leads on to what follows ("operated for appendicitis in").
  for (let m = TRAILING_RE.exec(trimmed); m; m = TRAILING_RE.exec(trimmed)) trimmed = trimmed.slice(0, m.index);
  return { ...span, end: span.start + trimmed.length };
}

const PHYSICAL_CUES = [
  "tattoo",
  "tattoos",
  "tattooed",
  "scar",
  "scars",
  "piercing",
  "piercings",
  "pierced",
  "birthmark",
  "dyed hair",
  "heavy makeup",
  "makeup",
  "wearing",
  "dressed in",
  "tatuaj",
  "tatuaje",
  "tatuat",
  "tatuată",
  "cicatrice",
  "cicatrici",
  "cicatricea",
  "cicatricii",
  "machiaj",
  "machiată",
  "machiat",
  "îmbrăcat în",
  "îmbrăcată în",
  "îmbrăcat cu",
  "îmbrăcată cu",
  "purta",
  "poartă",
  "semn din naștere",
  "păr vopsit",
];
const PHYSICAL_RE = phrase(PHYSICAL_CUES, 4);

export function detectPhysical(text: string): Span[] {
  return spansOf(PHYSICAL_RE, text, "physical").map((s) => trimPhrase(text, s));
}

const SURGERY_CUES = [
  "surgery",
  "surgeries",
  "operated",
  "operation",
  "\\p{L}+ectomy",
  "\\p{L}+otomy",
  "\\p{L}+plasty",
  "fracture",
  "fractures",
  "fractured",
  "injury",
  "injuries",
  "injured",
  "burns",
  "amputation",
  "amputated",
  "head trauma",
  "car accident",
  "road accident",
  "operat",
  "operată",
  "operație",
  "operația",
  "operații",
  "intervenție chirurgicală",
  "intervenţie chirurgicală",
  "\\p{L}+ectomie",
  "\\p{L}+otomie",
  "fractură",
  "fractura",
  "fracturi",
  "traumatism",
  "traumatisme",
  "accident rutier",
  "accident de mașină",
  "arsuri",
  "amputație",
  "rănit",
  "rănită",
];
const SURGERY_RE = phrase(SURGERY_CUES, 3);

export function detectSurgeryInjury(text: string): Span[] {
  return spansOf(SURGERY_RE, text, "surgery_injury").map((s) => trimPhrase(text, s));
}

// ---------------------------------------------------------------------------------------------------------------
// Ages → the paper's age groups

/** A number of years in an age's words: "45 years old", "45-year-old", "aged 45", "age 45", "45 de ani", "vârsta de 45". */
const AGE_RE = new RegExp(
  [
    `${L}(?<a>\\d{1,3})(?:\\s*|-)(?:years?|yrs?)(?:\\s*|-)old${R}`,
    `${L}(?<b>\\d{1,3})\\s*(?:y\\.o\\.|yo${R})`,
    `${L}(?:aged|age|age of|vârsta de|varsta de|în vârstă de|in varsta de|vârsta|varsta)\\s*:?\\s*(?<c>\\d{1,3})${R}`,
    `${L}(?<d>\\d{1,3})\\s+(?:de\\s+)?ani${R}`,
  ].join("|"),
  "giud",
);

export function detectAges(text: string): Span[] {
  const out: Span[] = [];
  for (const m of matches(AGE_RE, text)) {
    const groups = m.indices?.groups ?? {};
    const at = groups.a ?? groups.b ?? groups.c ?? groups.d;
    if (!at) continue;
    const years = Number(text.slice(at[0], at[1]));
    // "3 ani" of an illness's course and "120 years" are not a person's age.
    if (years < 1 || years > 120) continue;
    out.push({ start: at[0], end: at[1], category: "age", replacement: ageGroupOf(years) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Psychological test scores → their ranges

export function detectScores(text: string, table: ScoreTable): Span[] {
  const out: Span[] = [];
  for (const test of table) {
    const names = [test.test, ...test.aliases].map(escape).join("|");
    // The name, a few joining words or signs ("score of", "=", ":", "scor", "de"), then the score (and "/max").
    const re = new RegExp(
      `${L}(?:${names})${R}[^\\p{L}\\p{N}\\n]{0,4}(?:(?:total|score|scor(?:ul)?|of|de|was|este|=|:)[^\\p{L}\\p{N}\\n]{0,3}){0,3}(?<n>\\d{1,3}(?:[.,]\\d+)?)(?<max>\\s*/\\s*\\d{1,3})?(?![\\p{N}])`,
      "giud",
    );
    for (const m of matches(re, text)) {
      const n = m.indices?.groups?.n;
      if (!n) continue;
      const score = Number(text.slice(n[0], n[1]).replace(",", "."));
      const range = scoreRangeOf(test, score);
      if (range === null) continue;
      const end = m.indices?.groups?.max?.[1] ?? n[1];
      out.push({ start: n[0], end, category: "test_score", replacement: range });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// All of them

/** Which category wins when two spans overlap: the generalising ones first (they keep information), then by order. */
const PRIORITY: Record<Category, number> = {
  test_score: 0,
  age: 1,
  quote: 2,
  name: 3,
  place: 4,
  date_time: 5,
  surgery_injury: 6,
  physical: 7,
  family: 8,
};

/**
 * Every detector over one text: spans in text order, none overlapping. Of two overlapping spans the one of the
 * higher-priority category is kept, and of the same category the longer; a span inside a quotation is dropped (the
 * quotation is removed whole).
 */
export function detectAll(text: string, config: DetectorConfig, language: string): Span[] {
  const all = [
    ...detectScores(text, config.scoreTable),
    ...detectAges(text),
    ...detectQuotes(text),
    ...detectNames(text, config),
    ...detectPlaces(text, config),
    ...detectDates(text),
    ...detectSurgeryInjury(text),
    ...detectPhysical(text),
    ...detectFamily(text, language),
  ].filter((s) => s.end > s.start);
  all.sort(
    (a, b) => PRIORITY[a.category] - PRIORITY[b.category] || b.end - b.start - (a.end - a.start) || a.start - b.start,
  );
  const kept: Span[] = [];
  for (const s of all) if (!kept.some((k) => k.start < s.end && s.start < k.end)) kept.push(s);
  return kept.sort((a, b) => a.start - b.start);
}

/** The text with `spans` (in order, not overlapping) replaced; a removal leaves no double space behind. */
export function applySpans(text: string, spans: readonly Pick<Span, "start" | "end" | "replacement">[]): string {
  let out = "";
  let at = 0;
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    out += text.slice(at, s.start) + s.replacement;
    at = s.end;
  }
  out += text.slice(at);
  return out.replace(/[ \t]{2,}/g, " ").replace(/ ([,.;:])/g, "$1");
}
