/**
 * ICD-10 search (docs/icd10.md#search): ranking tiers, categories before subcategories, the synonym table, and the
 * committed table of clinical queries (test/fixtures/icd10/queries.csv), whose expected code must be in the top 3
 * for at least 95% of the queries.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parsePythonCsv } from "../../app/formats/csv-text";
import { createIcd10Index, parseIcd10Table } from "../../app/icd10/icd10";
import { createIcd10Search, parseIcd10Synonyms } from "../../app/icd10/icd10-search";

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");
const table = parseIcd10Table(read("../../app/data/icd10-who-chapter-v.csv"));
const synonyms = parseIcd10Synonyms(read("../../app/data/icd10-synonyms.csv"), table);
const index = createIcd10Search(table, synonyms);
const codes = (q: string, limit?: number) => index.search(q, limit).map((h) => h.entry.code);
const kinds = (q: string, limit?: number) => index.search(q, limit).map((h) => `${h.entry.code} ${h.kind}`);

describe("ICD-10 search", () => {
  it("ranks the exact code first, then code prefixes in table order", () => {
    expect(codes("F32.1", 3)).toEqual(["F32.1"]);
    expect(codes("f32")).toEqual(["F32", "F32.0", "F32.1", "F32.2", "F32.3", "F32.8", "F32.9"]);
    expect(codes("f321")).toEqual(["F32.1"]);
    expect(codes("32.1")).toEqual(["F32.1"]);
    expect(codes("f41.1")).toEqual(["F41.1"]);
    expect(codes("F3", 3)).toEqual(["F30", "F30.0", "F30.1"]);
    expect(codes("f 32.1")[0]).toBe("F32.1");
    expect(kinds("F32", 2)).toEqual(["F32 exact-code", "F32.0 code-prefix"]);
  });

  it("matches every word against the title, the synonyms or the code, case- and accent-insensitively", () => {
    expect(codes("moderate depressive", 2)).toEqual(["F32.1", "F33.1"]);
    expect(codes("MODERATE DÉPRESSIVE", 2)).toEqual(["F32.1", "F33.1"]);
    expect(codes("f33 moderate")).toEqual(["F33.1"]);
    expect(codes("alzheimer late")[0]).toBe("F00.1");
    expect(codes("zzzz")).toEqual([]);
    expect(codes("")).toEqual([]);
    expect(codes("   ")).toEqual([]);
  });

  it("finds common diagnoses by their usual names and abbreviations", () => {
    const top = (q: string) => codes(q, 3);
    expect(top("depression").slice(0, 2)).toEqual(["F32", "F33"]);
    expect(top("ptsd")[0]).toBe("F43.1");
    expect(top("ocd")[0]).toBe("F42");
    expect(top("adhd")[0]).toBe("F90");
    expect(top("gad")[0]).toBe("F41.1");
    expect(top("mdd")[0]).toBe("F32");
    expect(top("borderline")[0]).toBe("F60.3");
    expect(top("benzodiazepine")[0]).toBe("F13");
    expect(top("agoraphobia with panic")[0]).toBe("F40.0");
    expect(top("alcohol dependence")[0]).toBe("F10.2");
  });

  it("ranks a title match before synonym and fuzzy matches, and 'depress' finds F32 first", () => {
    const depress = codes("depress", 20);
    expect(depress[0]).toBe("F32");
    for (const later of ["F20.4", "F25.1", "F31.3", "F31.4", "F31.5"]) {
      expect(depress.indexOf("F32")).toBeLessThan(depress.indexOf(later) === -1 ? Infinity : depress.indexOf(later));
    }
    // "mania" is a synonym of F30 and the first title word of F30.1 and F30.2; then "bipolar mania" (F31.1).
    const mania = kinds("mania");
    expect(mania[0]).toBe("F30 exact-name");
    expect(mania.slice(1, 3).sort()).toEqual(["F30.1 title", "F30.2 title"]);
    expect(mania.slice(3)).toEqual(["F31.1 synonym"]);
    // Fuzzy matches come after every literal one.
    const dementa = index.search("dementa", 50).map((h) => h.kind);
    expect(dementa[0]).toBe("fuzzy");
    const mixed = index.search("alcohol withdrawl", 50);
    expect(mixed[0]?.entry.code).toBe("F10.3");
    expect(kinds("schizophrenai", 1)).toEqual(["F20 fuzzy"]);
    expect(index.search("borderl")[0]).toMatchObject({ kind: "synonym", entry: { code: "F60.3" } });
    expect(index.search("ptsd")[0]?.synonym).toBe("ptsd");
  });

  it("shows the name a misspelt word matched through, and ranks the names it covers best first", () => {
    const hits = index.search("depresion", 8);
    expect(hits.every((h) => h.kind === "fuzzy")).toBe(true);
    // The synonym "depression" is the corrected word itself: F32 and F33 first.
    expect(hits.slice(0, 2).map((h) => [h.entry.code, h.synonym])).toEqual([
      ["F32", "depression"],
      ["F33", "depression"],
    ]);
    // A hit whose title lacks the corrected word says which synonym held it ("postnatal depression" for F53.0).
    for (const h of hits) if (!/depress/i.test(h.entry.title)) expect(h.synonym, h.entry.code).toMatch(/depression/);
    // Among half-covered names, table order: manic depression (F31) before postnatal depression (F53.0).
    const all = index.search("depresion", 50).map((h) => h.entry.code);
    expect(all.indexOf("F31")).toBeLessThan(all.indexOf("F53.0"));
    expect(all.indexOf("F31")).toBeLessThan(4);
  });

  it("keeps the tiers in order, but for a category moved up before its subcategories", () => {
    const tier = ["exact-code", "code-prefix", "exact-name", "title", "synonym", "fuzzy", "partial"];
    for (const q of ["depression", "depress", "panic", "anxiety", "personality", "alcohol dep", "schizofrenia"]) {
      const hits = index.search(q, 50);
      const moved = (h: (typeof hits)[number]) => hits.some((o) => o.entry.parent === h.entry.code);
      const order = hits.filter((h) => !moved(h)).map((h) => tier.indexOf(h.kind));
      expect(order, q).toEqual([...order].sort((a, b) => a - b));
    }
  });

  it("lists a category before its subcategories", () => {
    for (const q of ["depressive", "schizophrenia", "mania", "anxiety", "dementia", "alcohol", "bipolar"]) {
      const list = codes(q, 50);
      list.forEach((code, i) => {
        const parent = table.lookup(code)?.parent;
        const at = parent ? list.indexOf(parent) : -1;
        if (at !== -1) expect(at, `${q}: ${parent} before ${code}`).toBeLessThan(i);
      });
    }
  });

  it("reads two words as one and falls back to the best partial match", () => {
    expect(codes("schizo affective", 1)).toEqual(["F25"]);
    expect(codes("post partum depression", 1)).toEqual(["F53.0"]);
    const partial = index.search("severe depression with psychotic features", 3);
    expect(partial.map((h) => h.kind)).toEqual(["partial", "partial", "partial"]);
    expect(partial.map((h) => h.entry.code)).toContain("F32.3");
    // One unknown word among two: nothing, rather than every title with the other word.
    expect(codes("xqzw disorder")).toEqual([]);
    expect(codes("hyperthyroidism")).toEqual([]);
  });

  it("has a stable order: the same query gives the same list, ties in table order", () => {
    expect(codes("disorder", 100)).toEqual(codes("disorder", 100));
    const f3 = codes("f3", 500);
    expect(f3).toEqual(
      [...f3].sort(
        (a, b) => table.entries.findIndex((e) => e.code === a) - table.entries.findIndex((e) => e.code === b),
      ),
    );
  });

  it("says how many subcategories a hit has", () => {
    expect(index.search("F30", 1)[0]).toMatchObject({ entry: { code: "F30" }, subcategories: 5 });
    expect(index.search("F30.1", 1)[0]?.subcategories).toBe(0);
    expect(index.subcategoriesOf("F42").map((e) => e.code)).toEqual(["F42.0", "F42.1", "F42.2", "F42.8", "F42.9"]);
    expect(index.search("F42", 1)[0]?.subcategories).toBe(5);
  });

  it("never returns blocks and honours the limit", () => {
    expect(index.search("disorders", 500).every((h) => h.entry.level !== "block")).toBe(true);
    expect(codes("disorder", 5)).toHaveLength(5);
    expect(codes("f", 0)).toEqual([]);
  });

  it("is fast enough to run per keystroke", () => {
    const queries = ["d", "de", "dep", "depr", "depre", "depres", "depress", "depressi", "depressive", "f3", "f32.1"];
    const start = performance.now();
    for (let i = 0; i < 100; i++) for (const q of queries) index.search(`${q}${i % 2 ? "" : " "}`, 20);
    const perQuery = (performance.now() - start) / (100 * queries.length);
    expect(perQuery).toBeLessThan(5);
  });

  it("builds from rows sent to the browser, with or without synonyms", () => {
    const small = createIcd10Index([
      { code: "F30-F39", title: "Mood [affective] disorders", level: "block", parent: "" },
      { code: "F32", title: "Depressive episode", level: "category", parent: "F30-F39" },
    ]);
    expect(
      createIcd10Search(small)
        .search("depressive")
        .map((h) => h.entry.code),
    ).toEqual(["F32"]);
    expect(createIcd10Search(small).search("mdd")).toEqual([]);
    expect(createIcd10Search(small, [{ code: "F32", term: "MDD" }]).search("mdd")[0]?.kind).toBe("exact-name");
  });
});

describe("the synonym table (app/data/icd10-synonyms.csv)", () => {
  it("names only WHO categories and subcategories, each term once per code", () => {
    expect(synonyms.length).toBeGreaterThan(300);
    expect(synonyms.every((s) => table.isValidChapterVCode(s.code))).toBe(true);
  });

  it("refuses a malformed table", () => {
    const head = "code,term,source\n";
    expect(() => parseIcd10Synonyms("code,name,source\nF32,x,clinical\n", table)).toThrow(/header/);
    expect(() => parseIcd10Synonyms("code,term\nF32,x\n", table)).toThrow(/header/);
    expect(() => parseIcd10Synonyms(`${head}F32,x\n`, table)).toThrow(/row 2 has 2 fields, expected 3/);
    expect(() => parseIcd10Synonyms(`${head}F32.7,x,clinical\n`, table)).toThrow(/row 2: F32.7 is not/);
    expect(() => parseIcd10Synonyms(`${head}F30-F39,mood,clinical\n`, table)).toThrow(/not a WHO/);
    expect(() => parseIcd10Synonyms(`${head}f32,low mood,clinical\n`, table)).toThrow(/not a WHO/);
    expect(() => parseIcd10Synonyms(`${head}F32,low mood,clinical\nF32,Low  Mood,british\n`, table)).toThrow(
      /row 3 repeats/,
    );
    expect(() => parseIcd10Synonyms(`${head}F32,of the,clinical\n`, table)).toThrow(/no searchable term/);
    expect(() => parseIcd10Synonyms(`${head}F32,low mood,folklore\n`, table)).toThrow(/row 2: source "folklore"/);
  });
});

describe("the clinical query table (test/fixtures/icd10/queries.csv)", () => {
  const [header, ...rows] = parsePythonCsv(read("../fixtures/icd10/queries.csv"));
  const queries = rows.map(([query, expected]) => ({ query: query!, expected: expected!.split(" ") }));

  it("is well formed: at least 60 queries, every expected code in WHO chapter V", () => {
    expect(header).toEqual(["query", "expected"]);
    expect(queries.length).toBeGreaterThanOrEqual(60);
    for (const q of queries) for (const code of q.expected) expect(table.isValidChapterVCode(code), code).toBe(true);
  });

  it("finds an expected code in the top 3 for at least 95% of the queries", () => {
    const misses = queries.filter((q) => !codes(q.query, 3).some((c) => q.expected.includes(c)));
    const rate = 1 - misses.length / queries.length;
    expect(
      rate,
      `missed: ${misses.map((m) => `${m.query} → ${codes(m.query, 3).join(" ")}`).join("; ")}`,
    ).toBeGreaterThanOrEqual(0.95);
  });
});

describe("the first result for abbreviations, eponyms, British and older terms (test/fixtures/icd10/first-results.csv)", () => {
  const [header, ...rows] = parsePythonCsv(read("../fixtures/icd10/first-results.csv"));
  it.each(rows.map(([query, first]) => ({ query: query!, first: first! })))("$query → $first", ({ query, first }) => {
    expect(header).toEqual(["query", "first"]);
    expect(codes(query, 5)[0], codes(query, 5).join(" ")).toBe(first);
  });

  it("ranks the most specific fitting code first: a dependence before its category", () => {
    // F17 matches "tobacco" in its title and "dependence" through a subcategory's words; F17.2 names both itself.
    const tobacco = codes("tobacco dependence", 5);
    expect(tobacco.indexOf("F17.2")).toBeLessThan(tobacco.indexOf("F17") === -1 ? Infinity : tobacco.indexOf("F17"));
    // A category still leads its subcategories when it fits as well: "opioid" lists F11 before F11.0 ….
    expect(codes("opioid", 3)[0]).toBe("F11");
    // A category's synonym reaches its subcategories only together with their own words: "heroin" is F11 and the
    // subcategory named by its own synonym (heroin addiction), not every F11.x.
    expect(codes("heroin", 20)).toEqual(["F11", "F11.2"]);
  });
});
