/**
 * ICD-10 chapter V rules (docs/icd10.md): canonical form, diagnosis level, category, WHO block, the three match levels,
 * the WHO code table (lookup, validation; search is icd10-search.ts), and the Safe-Psych reference scripts' variants (docs/icd10.md#the-reference-scripts-variants) for
 * the metrics' compatibility mode.
 *
 * Nothing here throws on a bad code: junk gives `{ ok: false, error: "not an ICD-10 chapter V code: …" }` or null.
 */
import { parsePythonCsv } from "../formats/csv-text";
import { pyStrip } from "../python-compat/text";

export const NOT_CHAPTER_V = "not an ICD-10 chapter V code";

/** The WHO blocks of chapter V. docs/icd10.md#levels names the last block `F99`; the WHO table writes it `F99-F99`. */
export const WHO_BLOCKS = [
  { id: "F00-F09", first: 0, last: 9, title: "Organic, including symptomatic, mental disorders" },
  { id: "F10-F19", first: 10, last: 19, title: "Mental and behavioural disorders due to psychoactive substance use" },
  { id: "F20-F29", first: 20, last: 29, title: "Schizophrenia, schizotypal and delusional disorders" },
  { id: "F30-F39", first: 30, last: 39, title: "Mood [affective] disorders" },
  { id: "F40-F48", first: 40, last: 48, title: "Neurotic, stress-related and somatoform disorders" },
  {
    id: "F50-F59",
    first: 50,
    last: 59,
    title: "Behavioural syndromes associated with physiological disturbances and physical factors",
  },
  { id: "F60-F69", first: 60, last: 69, title: "Disorders of adult personality and behaviour" },
  { id: "F70-F79", first: 70, last: 79, title: "Mental retardation" },
  { id: "F80-F89", first: 80, last: 89, title: "Disorders of psychological development" },
  {
    id: "F90-F98",
    first: 90,
    last: 98,
    title: "Behavioural and emotional disorders with onset usually occurring in childhood and adolescence",
  },
  { id: "F99", first: 99, last: 99, title: "Unspecified mental disorder" },
] as const;

export type WhoBlockId = (typeof WHO_BLOCKS)[number]["id"];

export interface Icd10Code {
  ok: true;
  /** Canonical form: upper case, a dot after the third character (`f 321` → `F32.1`, `F02.80`, `F32.A`). */
  code: string;
  /** Three-character base (`F32.1` → `F32`). */
  category: string;
  /** Base plus the first character after the dot (`F31.11` → `F31.1`, `F32.A` → `F32.A`, `F29` → `F29`). */
  diagnosisLevel: string;
  hasDecimal: boolean;
  /** WHO block; null only for F49, which lies between the blocks F40–F48 and F50–F59. */
  block: WhoBlockId | null;
}

export interface Icd10Error {
  ok: false;
  input: string;
  reason: "empty" | "malformed" | "other-chapter";
  /** Starts with NOT_CHAPTER_V. */
  error: string;
}

export type Icd10Parse = Icd10Code | Icd10Error;

// Inner whitespace is removed too (`f 32.1`); \s misses Python's \x1c-\x1f and \x85, which pyStrip also strips.
// eslint-disable-next-line no-control-regex -- Python's whitespace includes these control characters
const WHITESPACE = /[\s\x1c-\x1f\x85]+/g;
// Letter, two digits, then up to four characters after an optional dot: WHO codes have one, ICD-10-CM up to four.
const CODE_SHAPE = /^([A-Z])(\d{2})(?:\.?([0-9A-Z]{1,4}))?$/;

/**
 * Parses anything that may hold a chapter V code (annotator input, imported labels, model output) into its canonical
 * form and levels. Accepts ICD-10-CM and other national extensions (`F02.80`, `F32.A`) — whether a code exists in
 * WHO ICD-10 is the code table's question (`Icd10Index.isValidChapterVCode`). Never throws.
 */
export function parseIcd10(input: string | null | undefined): Icd10Parse {
  const raw = typeof input === "string" ? input : input == null ? "" : String(input);
  const compact = pyStrip(raw).replace(WHITESPACE, "").toUpperCase();
  if (compact === "") return { ok: false, input: raw, reason: "empty", error: `${NOT_CHAPTER_V}: the code is empty` };
  const m = CODE_SHAPE.exec(compact);
  if (!m) {
    return {
      ok: false,
      input: raw,
      reason: "malformed",
      error: `${NOT_CHAPTER_V}: ${JSON.stringify(raw)} (expected F, two digits and an optional decimal part, e.g. F32.1)`,
    };
  }
  const [, letter, digits, decimal] = m;
  if (letter !== "F") {
    return {
      ok: false,
      input: raw,
      reason: "other-chapter",
      error: `${NOT_CHAPTER_V}: ${JSON.stringify(raw)} is outside F00–F99`,
    };
  }
  const category = `F${digits}`;
  return {
    ok: true,
    code: decimal ? `${category}.${decimal}` : category,
    category,
    diagnosisLevel: decimal ? `${category}.${decimal[0]}` : category,
    hasDecimal: decimal !== undefined,
    block: blockOfNumber(Number(digits)),
  };
}

function blockOfNumber(n: number): WhoBlockId | null {
  return WHO_BLOCKS.find((b) => n >= b.first && n <= b.last)?.id ?? null;
}

/** Canonical form, or null for junk. */
export function canonicalIcd10(input: string | null | undefined): string | null {
  const p = parseIcd10(input);
  return p.ok ? p.code : null;
}

export function icd10DiagnosisLevel(input: string | null | undefined): string | null {
  const p = parseIcd10(input);
  return p.ok ? p.diagnosisLevel : null;
}

export function icd10Category(input: string | null | undefined): string | null {
  const p = parseIcd10(input);
  return p.ok ? p.category : null;
}

export function icd10Block(input: string | null | undefined): WhoBlockId | null {
  const p = parseIcd10(input);
  return p.ok ? p.block : null;
}

/**
 * The diagnosis-level match (docs/icd10.md#matching-a-prediction-against-a-reference) of a candidate against a reference (gold) code. A reference with a decimal matches
 * a candidate with the same diagnosis level (`F31.1` ✓ `F31.11`; `F32.1` ✗ `F32`); a reference without one matches
 * any candidate with the same base (`F29` ✓ `F29.1`). Junk on either side never matches.
 * Unlike the reference scripts (`compatMatchesDiagnosisLevel`) both codes are canonicalised first, so `F321` is F32.1.
 */
export function matchesAtDiagnosisLevel(
  reference: string | null | undefined,
  candidate: string | null | undefined,
): boolean {
  const r = parseIcd10(reference);
  const c = parseIcd10(candidate);
  if (!r.ok || !c.ok) return false;
  return r.hasDecimal ? r.diagnosisLevel === c.diagnosisLevel : r.category === c.category;
}

export function matchesAtCategory(reference: string | null | undefined, candidate: string | null | undefined): boolean {
  const r = parseIcd10(reference);
  const c = parseIcd10(candidate);
  return r.ok && c.ok && r.category === c.category;
}

/** Same WHO block. F49 has no block and matches nothing. */
export function matchesAtBlock(reference: string | null | undefined, candidate: string | null | undefined): boolean {
  const r = parseIcd10(reference);
  const c = parseIcd10(candidate);
  return r.ok && c.ok && r.block !== null && r.block === c.block;
}

export interface Icd10Match {
  diagnosisLevel: boolean;
  category: boolean;
  block: boolean;
}

export function matchIcd10(reference: string | null | undefined, candidate: string | null | undefined): Icd10Match {
  return {
    diagnosisLevel: matchesAtDiagnosisLevel(reference, candidate),
    category: matchesAtCategory(reference, candidate),
    block: matchesAtBlock(reference, candidate),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The WHO code table (app/data/icd10-who-chapter-v.csv: code,title,level,parent)

export type Icd10Level = "block" | "category" | "subcategory";

export interface Icd10TableRow {
  code: string;
  title: string;
  level: Icd10Level;
  /** "" for blocks. */
  parent: string;
}

export interface Icd10Entry {
  /** As in the table: `F32.1`, `F32`, `F30-F39`, `F99-F99`. */
  code: string;
  title: string;
  level: Icd10Level;
  parent: string | null;
  /** The entry's WHO block as docs/icd10.md#levels spells it (the table's `F99-F99` is `F99`). */
  block: WhoBlockId;
}

export type Icd10Check = { ok: true; entry: Icd10Entry } | { ok: false; error: string };

export interface Icd10Index {
  /** Every row, in the table's (hierarchical) order. */
  readonly entries: readonly Icd10Entry[];
  /** By any spelling `parseIcd10` accepts (`f321`), or by a block range (`F40-F48`, `F99-F99`); null if absent. */
  lookup(code: string): Icd10Entry | null;
  /**
   * True for the categories and subcategories of WHO ICD-10 chapter V (`F03`, `F32.1`), in any accepted spelling.
   * Blocks are not diagnoses and are rejected, as are ICD-10-CM codes absent from WHO ICD-10 (`F32.A`, `F02.80`).
   */
  isValidChapterVCode(code: string): boolean;
  /** Like isValidChapterVCode, with the reason a code is refused (for forms and imports). */
  checkDiagnosisCode(code: string): Icd10Check;
}

const LEVELS: readonly string[] = ["block", "category", "subcategory"];
const SINGLE_CATEGORY_BLOCK = /^(F\d{2})-\1$/;

/** Parses the table's CSV text (quoted fields allowed). Throws on a malformed table: it is shipped data, not input. */
export function parseIcd10Table(csvText: string): Icd10Index {
  const [header, ...body] = parsePythonCsv(csvText);
  const columns = ["code", "title", "level", "parent"];
  if (!header || columns.some((c, i) => header[i] !== c)) {
    throw new Error(`ICD-10 table: expected the header ${columns.join(",")}, got ${header?.join(",") ?? "nothing"}`);
  }
  const rows = body.map((cells, i) => {
    if (cells.length !== 4) throw new Error(`ICD-10 table: row ${i + 2} has ${cells.length} fields, expected 4`);
    const [code, title, level, parent] = cells;
    if (!LEVELS.includes(level)) throw new Error(`ICD-10 table: row ${i + 2} has an unknown level ${level}`);
    return { code, title, level: level as Icd10Level, parent };
  });
  return createIcd10Index(rows);
}

/** Builds the index from already-parsed rows (e.g. sent by a loader to the browser). */
export function createIcd10Index(rows: readonly Icd10TableRow[]): Icd10Index {
  const entries: Icd10Entry[] = [];
  const byCode = new Map<string, Icd10Entry>();
  for (const row of rows) {
    let block: WhoBlockId | null;
    if (row.level === "block") {
      // The table writes the one-category block as F99-F99; docs/icd10.md#levels calls it F99.
      const id = SINGLE_CATEGORY_BLOCK.test(row.code) ? row.code.slice(0, 3) : row.code;
      block = WHO_BLOCKS.find((b) => b.id === id)?.id ?? null;
      if (block === null) throw new Error(`ICD-10 table: unknown block ${row.code}`);
    } else {
      const p = parseIcd10(row.code);
      if (!p.ok || p.code !== row.code) throw new Error(`ICD-10 table: ${row.code} is not a canonical chapter V code`);
      block = p.block;
      if (block === null) throw new Error(`ICD-10 table: ${row.code} lies outside every WHO block`);
    }
    const entry: Icd10Entry = { code: row.code, title: row.title, level: row.level, parent: row.parent || null, block };
    if (byCode.has(row.code)) throw new Error(`ICD-10 table: duplicate code ${row.code}`);
    byCode.set(row.code, entry);
    entries.push(entry);
  }

  const lookup = (code: string): Icd10Entry | null => {
    const compact = pyStrip(code).replace(WHITESPACE, "").toUpperCase();
    if (compact.includes("-")) return byCode.get(compact) ?? null;
    const p = parseIcd10(compact);
    return p.ok ? (byCode.get(p.code) ?? null) : null;
  };

  const checkDiagnosisCode = (code: string): Icd10Check => {
    const p = parseIcd10(code);
    if (!p.ok) {
      const block = lookup(code);
      if (block) return { ok: false, error: `${block.code} is a block of codes, not a diagnosis: choose a code` };
      return { ok: false, error: p.error };
    }
    const entry = byCode.get(p.code);
    if (entry) return { ok: true, entry };
    // WHO chapter V has no 5-character codes and no letters after the dot: such codes come from ICD-10-CM.
    const national = p.code.length > 5 || /[A-Z]$/.test(p.code);
    const hint = national ? "; ICD-10-CM and other national codes are not accepted" : "";
    return { ok: false, error: `${p.code} is not in WHO ICD-10 chapter V (2019)${hint}` };
  };

  return {
    entries,
    lookup,
    isValidChapterVCode: (code) => {
      const e = lookup(code);
      return e !== null && e.level !== "block";
    },
    checkDiagnosisCode,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Compatibility: the reference scripts' own normalisation and levels (docs/icd10.md#the-reference-scripts-variants: N, L, C, G), for the metrics'
// compatibility mode only. They differ from the rules above: no canonicalisation (`F321` has no diagnosis level
// beyond F32), any letter is accepted for L and C, only ASCII spaces are removed, and the group of F49 depends on
// the script. Python's `\d` also matches non-ASCII decimal digits; these use ASCII digits only.

/** N: trim (Python strip), upper case, remove spaces; null if nothing is left. */
export function compatNormalizeIcd10(code: string | null | undefined): string | null {
  const n = pyStrip(code ?? "")
    .toUpperCase()
    .replace(/ /g, "");
  return n === "" ? null : n;
}

/** L: leading letter + 2 digits, plus `.` and the first following character if any (`F31.11` → `F31.1`). */
export function compatDiagnosisLevel(code: string | null | undefined): string | null {
  const n = compatNormalizeIcd10(code);
  const m = n === null ? null : /^([A-Z][0-9]{2})(?:\.([0-9A-Za-z]))?/.exec(n);
  if (!m) return null;
  return m[2] ? `${m[1]}.${m[2]}` : m[1];
}

/** C: leading letter + 2 digits. */
export function compatCategory(code: string | null | undefined): string | null {
  const n = compatNormalizeIcd10(code);
  const m = n === null ? null : /^([A-Z][0-9]{2})/.exec(n);
  return m ? m[1] : null;
}

/**
 * Which script's group table: `accuracy` (diagnosis_accuracy/process.py) has F40-F49, `seeds`
 * (multiple_seed_runs/process.py) has F40-F48, as WHO does. Only F49 differs.
 */
export type CompatGroupVariant = "accuracy" | "seeds";

/** G: the group of C, letter F only: `F00-F09` … `F90-F98`, `F99`; null outside the table. */
export function compatGroup(code: string | null | undefined, variant: CompatGroupVariant): string | null {
  const c = compatCategory(code);
  if (c === null || c[0] !== "F") return null;
  const n = Number(c.slice(1));
  if (variant === "accuracy" && n >= 40 && n <= 49) return "F40-F49";
  return blockOfNumber(n);
}

/** The scripts' diagnosis-level match: L equal if N(gt) has a dot, else C equal; both sides non-null. */
export function compatMatchesDiagnosisLevel(
  gt: string | null | undefined,
  predicted: string | null | undefined,
): boolean {
  const g = compatNormalizeIcd10(gt);
  const p = compatNormalizeIcd10(predicted);
  if (g === null || p === null) return false;
  const [a, b] = g.includes(".")
    ? [compatDiagnosisLevel(g), compatDiagnosisLevel(p)]
    : [compatCategory(g), compatCategory(p)];
  return a !== null && b !== null && a === b;
}

/** The scripts' three match levels (`match_diagnosis_level`, `match_3char`, `match_high_class`). */
export function compatMatches(
  gt: string | null | undefined,
  predicted: string | null | undefined,
  variant: CompatGroupVariant,
): Icd10Match {
  const [gc, pc] = [compatCategory(gt), compatCategory(predicted)];
  const [gg, pg] = [compatGroup(gt, variant), compatGroup(predicted, variant)];
  return {
    diagnosisLevel: compatMatchesDiagnosisLevel(gt, predicted),
    category: gc !== null && gc === pc,
    block: gg !== null && gg === pg,
  };
}
