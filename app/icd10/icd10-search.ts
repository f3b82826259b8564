/**
 * ICD-10 search (docs/icd10.md#search): MiniSearch over each WHO chapter V code's title and the curated English
 * synonyms of app/data/icd10-synonyms.csv, with prefix and fuzzy matching, then ranked in tiers by match quality —
 * exact code, code prefix, exact name, title words, synonyms, fuzzy — with categories before their subcategories (unless
 * a subcategory fits better: the most specific fitting code first) and table order breaking ties. Pure: the same in the
 * browser (the code picker) and on the server.
 */
import MiniSearch from "minisearch";
import { parsePythonCsv } from "../formats/csv-text";
import { canonicalIcd10, type Icd10Entry, type Icd10Index } from "./icd10";
import { maxOf } from "../stats/extremes";

/** One row of the synonym table: a clinical name or abbreviation that means `code`. */
export interface Icd10Synonym {
  code: string;
  term: string;
}

/** How a hit matched, best first (docs/icd10.md#ranking). */
export type Icd10MatchKind =
  | "exact-code"
  | "code-prefix"
  | "exact-name"
  | "title"
  | "synonym"
  | "fuzzy"
  /** No entry matched every word: these match the most words. */
  | "partial";

export interface Icd10Hit {
  entry: Icd10Entry;
  kind: Icd10MatchKind;
  /** The synonym that explains the hit when the title alone does not, else null. */
  synonym: string | null;
  /** How many subcategories the entry has (0 for subcategories). */
  subcategories: number;
}

export interface Icd10Search {
  /** Categories and subcategories matching every word of the query, best first; empty query → []. */
  search(query: string, limit?: number): Icd10Hit[];
  /** The subcategories of a category, in table order. */
  subcategoriesOf(code: string): Icd10Entry[];
}

/**
 * Where a row of the synonym table comes from (its `source` column; docs/icd10.md, "The synonym table"):
 * `clinical` a name or phrase in everyday clinical use, written for Concord; `who-inclusion` an inclusion term that
 * WHO ICD-10 chapter V lists under the code; `abbreviation` an abbreviation in everyday clinical notes; `eponym` a
 * disorder named after a person; `british` British usage; `historical` an older name still met in notes and letters.
 */
export const SYNONYM_SOURCES = [
  "clinical",
  "who-inclusion",
  "abbreviation",
  "eponym",
  "british",
  "historical",
] as const;

/**
 * Parses the synonym table (`code,term,source`). Throws on a malformed table, a code that is not a WHO category or
 * subcategory, or an unknown source: it is shipped data, not input.
 */
export function parseIcd10Synonyms(csvText: string, index: Icd10Index): Icd10Synonym[] {
  const [header, ...body] = parsePythonCsv(csvText);
  if (!header || header.join(",") !== "code,term,source") {
    throw new Error(`ICD-10 synonyms: expected the header code,term,source, got ${header?.join(",") ?? "nothing"}`);
  }
  const seen = new Set<string>();
  return body.map((cells, i) => {
    const line = i + 2;
    if (cells.length !== 3) throw new Error(`ICD-10 synonyms: row ${line} has ${cells.length} fields, expected 3`);
    const [code, term, source] = cells as [string, string, string];
    const entry = index.lookup(code);
    if (!entry || entry.level === "block" || entry.code !== code) {
      throw new Error(`ICD-10 synonyms: row ${line}: ${code} is not a WHO chapter V category or subcategory`);
    }
    if (tokens(term).length === 0) throw new Error(`ICD-10 synonyms: row ${line} has no searchable term`);
    if (!(SYNONYM_SOURCES as readonly string[]).includes(source)) {
      throw new Error(`ICD-10 synonyms: row ${line}: source "${source}" is not one of ${SYNONYM_SOURCES.join(", ")}`);
    }
    const key = `${code}\t${normalName(term)}`;
    if (seen.has(key)) throw new Error(`ICD-10 synonyms: row ${line} repeats ${code} ${term}`);
    seen.add(key);
    return { code, term };
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Terms. Index and query go through the same steps, so a spelling rule only has to be consistent, not exact.

const STOP_WORDS = new Set(["a", "an", "and", "by", "due", "for", "in", "of", "on", "or", "the", "to", "with"]);

/** British and American spellings meet (docs/icd10.md#search): behaviour/behavior, generalised/generalized, … */
function spelling(term: string): string {
  return term
    .replace(/our/g, "or")
    .replace(/ae/g, "e")
    .replace(/oe/g, "e")
    .replace(/is(ation|ations|ed|e|es|ing)$/, "iz$1");
}

/** Folded (accents removed, lower case), apostrophes dropped, split at anything not a letter or digit. */
function rawTokens(text: string): string[] {
  return text
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/['’]s\b/g, "")
    .replace(/['’]/g, "")
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/** The searchable terms of a text: no stop words, no single letters. */
function tokens(text: string): string[] {
  const out: string[] = [];
  for (const t of rawTokens(text)) {
    if (STOP_WORDS.has(t) || (t.length === 1 && !/\d/.test(t))) continue;
    out.push(spelling(t));
  }
  return out;
}

const normalName = (text: string) => tokens(text).join(" ");

/** `f32.1` → `F321`; `32.1` → `F321` (the F may be left out); null if the word cannot start a code. */
function codePrefixKey(word: string): string | null {
  let w = word.toUpperCase().replace(/\./g, "");
  if (/^\d/.test(w)) w = `F${w}`;
  return /^F\d{0,2}$|^F\d{2}[0-9A-Z]{1,4}$/.test(w) ? w : null;
}

// ---------------------------------------------------------------------------------------------------------------

/** One searchable name: an entry's title, or one of its synonyms (each its own document, so each is scored alone). */
interface Doc {
  id: number;
  entry: number;
  title?: string;
  synonym?: string;
}

/** Field boosts and prefix/fuzzy weights: a title word counts more than a synonym word, a whole word more than a part. */
const BOOST = { title: 2, synonym: 1.5 };
const WEIGHTS = { prefix: 0.5, fuzzy: 0.3 };
/** Fuzzy matching from six characters on, up to a fifth of the word's length in edits (at most 3). */
const fuzziness = (term: string) => (term.length >= 6 ? 0.2 : false);

const TIER: Record<Icd10MatchKind, number> = {
  "exact-code": 0,
  "code-prefix": 1,
  "exact-name": 2,
  title: 3,
  synonym: 4,
  fuzzy: 5,
  partial: 6,
};

/**
 * How an entry matched: `worst` over the query's words is 0 code, 1 title, 2 synonym, 3 fuzzy in the title, 4 fuzzy
 * in a synonym. `matchedName` is the synonym a word matched through (shown with the hit: a fuzzy match through a
 * synonym is otherwise unexplained).
 */
interface Candidate {
  score: number;
  worst: number;
  allCode: boolean;
  viaSynonym: boolean;
  matchedName?: string;
  /**
   * False while the entry matched only through its category's synonyms: such a subcategory is listed only when a
   * word of the query matches it through its own names too ("opiate dependence" → F11.2; "heroin" lists F11 alone).
   */
  own: boolean;
}

/** One word of the query: a code prefix key and/or the terms it splits into. */
interface Chunk {
  key: string | null;
  terms: string[];
}

function combine(a: Candidate, b: Candidate): Candidate {
  return {
    score: a.score + b.score,
    worst: Math.max(a.worst, b.worst),
    allCode: a.allCode && b.allCode,
    viaSynonym: a.viaSynonym || b.viaSynonym,
    matchedName: b.worst > a.worst ? (b.matchedName ?? a.matchedName) : (a.matchedName ?? b.matchedName),
    own: a.own || b.own,
  };
}

/** Builds the search over an index's categories and subcategories and the synonym table. */
export function createIcd10Search(index: Icd10Index, synonyms: readonly Icd10Synonym[] = []): Icd10Search {
  const entries = index.entries.filter((e) => e.level !== "block");
  const position = new Map(entries.map((e, i) => [e.code, i]));
  const codeKeys = entries.map((e) => e.code.replace(".", ""));
  const synonymsOf = entries.map(() => [] as string[]);
  for (const s of synonyms) {
    const i = position.get(s.code);
    if (i !== undefined) synonymsOf[i]!.push(s.term);
  }
  const children = new Map<string, Icd10Entry[]>();
  for (const e of entries) {
    if (e.level === "subcategory" && e.parent) children.set(e.parent, [...(children.get(e.parent) ?? []), e]);
  }
  // A subcategory's WHO title repeats its category's; its category's synonyms are its names too (docs/icd10.md,
  // "How a query matches"): "opiate dependence" is F11.2 although "opiate" is a synonym of F11 only.
  const childIndexes = entries.map((e) => (children.get(e.code) ?? []).map((c) => position.get(c.code)!));
  // A query that is exactly a title or a synonym names its code(s).
  const byName = new Map<string, Set<number>>();
  const addName = (name: string, i: number) => {
    const key = normalName(name);
    if (key) byName.set(key, (byName.get(key) ?? new Set()).add(i));
  };
  const docs: Doc[] = [];
  entries.forEach((e, i) => {
    addName(e.title, i);
    docs.push({ id: docs.length, entry: i, title: e.title });
    for (const s of synonymsOf[i]!) {
      addName(s, i);
      docs.push({ id: docs.length, entry: i, synonym: s });
    }
  });

  const mini = new MiniSearch<Doc>({
    fields: ["title", "synonym"],
    tokenize: rawTokens,
    processTerm: (t) => (STOP_WORDS.has(t) || (t.length === 1 && !/\d/.test(t)) ? null : spelling(t)),
    searchOptions: { boost: BOOST, weights: WEIGHTS, prefix: true, fuzzy: fuzziness, maxFuzzy: 3 },
  });
  mini.addAll(docs);

  /** Entries matching one (processed) term, over all their names; literal (whole or prefix) beats fuzzy. */
  const termCache = new Map<string, Map<number, Candidate>>();
  const matchTerm = (term: string): Map<number, Candidate> => {
    let found = termCache.get(term);
    if (found) return found;
    found = new Map();
    for (const r of mini.search(term, { processTerm: (t) => t, tokenize: (t) => [t] })) {
      const doc = docs[r.id as number]!;
      const literal = r.terms.some((t) => t.startsWith(term));
      const inTitle = doc.title !== undefined;
      const worst = literal ? (inTitle ? 1 : 2) : inTitle ? 3 : 4;
      const viaSynonym = doc.synonym !== undefined;
      const matchedName = doc.synonym ?? doc.title;
      // Every name of the entry that matches adds to its score; its best name decides how it matched. A category's
      // synonym also matches its subcategories, at half its score (their own names count more).
      const add = (entry: number, score: number, own: boolean) => {
        const previous = found!.get(entry);
        if (!previous) found!.set(entry, { score, worst, allCode: false, viaSynonym, matchedName, own });
        else {
          previous.score += score;
          // An entry's own names decide how it matched; its category's only while it has matched through no other.
          if ((own && !previous.own) || (own === previous.own && worst < previous.worst))
            [previous.worst, previous.viaSynonym, previous.matchedName] = [worst, viaSynonym, matchedName];
          previous.own ||= own;
        }
      };
      add(doc.entry, r.score, true);
      if (viaSynonym) for (const child of childIndexes[doc.entry]!) add(child, r.score / 2, false);
    }
    if (termCache.size > 500) termCache.clear();
    termCache.set(term, found);
    return found;
  };

  /** Entries matching one word of the query: by code prefix, or every one of its terms. */
  const matchChunk = (chunk: Chunk): Map<number, Candidate> => {
    const matched = new Map<number, Candidate>();
    let text: Map<number, Candidate> | null = null;
    for (const term of chunk.terms) {
      const next = new Map<number, Candidate>();
      for (const [i, m] of matchTerm(term)) {
        if (text === null) next.set(i, m);
        else {
          const previous = text.get(i);
          if (previous) next.set(i, combine(previous, m));
        }
      }
      text = next;
    }
    if (text) for (const [i, c] of text) matched.set(i, c);
    if (chunk.key !== null) {
      const key = chunk.key;
      codeKeys.forEach((k, i) => {
        if (k.startsWith(key)) matched.set(i, { score: 0, worst: 0, allCode: true, viaSynonym: false, own: true });
      });
    }
    return matched;
  };

  /** Entries matching every chunk. */
  const matchAll = (chunks: readonly Chunk[]): Map<number, Candidate> => {
    let all: Map<number, Candidate> | null = null;
    for (const chunk of chunks) {
      const matched = matchChunk(chunk);
      if (all === null) all = matched;
      else {
        const next = new Map<number, Candidate>();
        for (const [i, c] of all) {
          const m = matched.get(i);
          if (m) next.set(i, combine(c, m));
        }
        all = next;
      }
      if (all.size === 0) break;
    }
    return owned(all ?? new Map());
  };

  /** Leaves out the entries that matched only through their category's synonyms. */
  const owned = (found: Map<number, Candidate>): Map<number, Candidate> => {
    for (const [i, c] of found) if (!c.own) found.delete(i);
    return found;
  };

  /**
   * When no entry matches every word: first two neighbouring words read as one ("post partum" → "postpartum"), then
   * the entries matching the most words (kind "partial").
   */
  const fallback = (chunks: readonly Chunk[]): { found: Map<number, Candidate>; partial: boolean } => {
    const terms = chunks.flatMap((c) => (c.key === null ? c.terms : []));
    if (terms.length === chunks.reduce((n, c) => n + c.terms.length, 0) && terms.length >= 2) {
      for (let j = 0; j + 1 < terms.length; j++) {
        const merged = [...terms.slice(0, j), terms[j]! + terms[j + 1]!, ...terms.slice(j + 2)];
        const found = matchAll(merged.map((t) => ({ key: null, terms: [t] })));
        if (found.size > 0) return { found, partial: false };
      }
    }
    if (chunks.length < 2) return { found: new Map(), partial: false };
    const counts = new Map<number, { n: number; c: Candidate }>();
    for (const chunk of chunks) {
      for (const [i, m] of matchChunk(chunk)) {
        const previous = counts.get(i);
        counts.set(i, previous ? { n: previous.n + 1, c: combine(previous.c, m) } : { n: 1, c: m });
      }
    }
    const most = Math.max(0, maxOf([...counts.values()].map((v) => v.n)));
    const found = new Map<number, Candidate>();
    // All words but one, and two at least, so one common word does not list half the table.
    if (most >= Math.max(2, chunks.length - 1)) for (const [i, v] of counts) if (v.n === most) found.set(i, v.c);
    return { found: owned(found), partial: true };
  };

  /** The synonym that is the query, else the one covering most of its terms (the shorter on a tie), for display. */
  const bestSynonym = (i: number, name: string, terms: readonly string[]): string | null => {
    let best: string | null = null;
    let bestCover = 0;
    const parent = entries[i]!.parent ? position.get(entries[i]!.parent!) : undefined;
    const names = parent === undefined ? synonymsOf[i]! : [...synonymsOf[i]!, ...synonymsOf[parent]!];
    for (const s of names) {
      if (normalName(s) === name) return s;
      const own = tokens(s);
      const cover = terms.filter((t) => own.some((o) => o.startsWith(t))).length;
      if (cover > bestCover || (cover === bestCover && cover > 0 && best !== null && s.length < best.length)) {
        [best, bestCover] = [s, cover];
      }
    }
    return best;
  };

  const search = (query: string, limit = 20): Icd10Hit[] => {
    const words = query.split(/\s+/).filter(Boolean);
    if (words.length === 0 || limit <= 0) return [];
    const exact = canonicalIcd10(query);
    const name = normalName(query);
    const named = byName.get(name);

    const chunks: Chunk[] = [];
    for (const word of words) {
      const key = codePrefixKey(word);
      // A word shaped like a code with digits is only a code; "f" may also start a word.
      const terms = key !== null && /\d/.test(key) ? [] : tokens(word);
      if (key === null && terms.length === 0) continue; // a stop word on its own narrows nothing
      chunks.push({ key, terms });
    }
    let candidates = matchAll(chunks);
    let partial = false;
    if (candidates.size === 0 && !named) ({ found: candidates, partial } = fallback(chunks));
    // Names match whole, so an exact name is found even when a word alone would narrow it away.
    for (const i of named ?? []) {
      if (!candidates.has(i)) candidates.set(i, { score: 0, worst: 1, allCode: false, viaSynonym: true, own: true });
    }
    if (candidates.size === 0) return [];

    const allTerms = chunks.flatMap((c) => c.terms);
    const ranked = [...candidates].map(([i, c]) => {
      const entry = entries[i]!;
      let kind: Icd10MatchKind;
      if (exact !== null && entry.code === exact) kind = "exact-code";
      else if (c.allCode && !partial) kind = "code-prefix";
      else if (named?.has(i)) kind = "exact-name";
      else if (partial) kind = "partial";
      else kind = c.worst <= 1 ? "title" : c.worst === 2 ? "synonym" : "fuzzy";
      const byCode = kind === "exact-code" || kind === "code-prefix";
      const titleIsName = kind === "exact-name" && normalName(entry.title) === name;
      const showSynonym = !byCode && !titleIsName && (c.viaSynonym || kind === "exact-name");
      // A fuzzy hit through a synonym shows that synonym: the corrected word is in it, not in the title.
      const synonym = showSynonym
        ? ((kind === "fuzzy" && c.worst === 4 ? c.matchedName : undefined) ?? bestSynonym(i, name, allTerms))
        : null;
      // How much of the name it matched through the query covers: "depression" for "depresion" covers all of
      // the synonym "depression", half of "postnatal depression".
      const cover = c.matchedName ? Math.min(1, allTerms.length / Math.max(1, tokens(c.matchedName).length)) : 0;
      return { i, entry, kind, cover, score: c.score, synonym };
    });
    // Fuzzy scores say little (a misspelt word matches many names a little): within that tier the hit whose name
    // the query covers most comes first, then table order.
    ranked.sort((a, b) =>
      a.kind === "fuzzy" && b.kind === "fuzzy"
        ? b.cover - a.cover || a.i - b.i
        : TIER[a.kind] - TIER[b.kind] || b.score - a.score || a.i - b.i,
    );

    // Categories before their subcategories: a category the query found moves up to just before its first
    // subcategory in the list — unless that subcategory fits the query in a better tier (the query names what the
    // subcategory adds, e.g. a dependence): then the most specific fitting code comes first.
    const inList = new Map(ranked.map((r) => [r.entry.code, r]));
    const emitted = new Set<string>();
    const ordered: typeof ranked = [];
    for (const r of ranked) {
      if (emitted.has(r.entry.code)) continue;
      const parent = r.entry.parent ? inList.get(r.entry.parent) : undefined;
      if (parent && !emitted.has(parent.entry.code) && TIER[parent.kind] <= TIER[r.kind]) {
        ordered.push(parent);
        emitted.add(parent.entry.code);
      }
      ordered.push(r);
      emitted.add(r.entry.code);
    }
    return ordered.slice(0, limit).map((r) => ({
      entry: r.entry,
      kind: r.kind,
      synonym: r.synonym,
      subcategories: children.get(r.entry.code)?.length ?? 0,
    }));
  };

  return { search, subcategoriesOf: (code) => children.get(code) ?? [] };
}
