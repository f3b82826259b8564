import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CsvSyntaxError, formatCsvRecord, parsePythonCsv as parseCsv } from "../../app/formats/csv-text";
import {
  canonicalIcd10,
  compatCategory,
  compatDiagnosisLevel,
  compatGroup,
  compatMatches,
  compatMatchesDiagnosisLevel,
  compatNormalizeIcd10,
  createIcd10Index,
  icd10Block,
  icd10Category,
  icd10DiagnosisLevel,
  matchesAtBlock,
  matchesAtCategory,
  matchesAtDiagnosisLevel,
  matchIcd10,
  NOT_CHAPTER_V,
  parseIcd10,
  parseIcd10Table,
  WHO_BLOCKS,
} from "../../app/icd10/icd10";

const csvText = readFileSync(new URL("../../app/data/icd10-who-chapter-v.csv", import.meta.url), "utf8");
const table = parseIcd10Table(csvText);

describe("canonical form (docs/icd10.md#canonical-form)", () => {
  it.each([
    ["f321", "F32.1"],
    ["f 32.1", "F32.1"],
    ["F32.1", "F32.1"],
    ["  F32.1\n", "F32.1"],
    ["f32", "F32"],
    ["F03", "F03"],
    ["F31.11", "F31.11"],
    ["F3111", "F31.11"],
    ["F02.80", "F02.80"],
    ["f32.a", "F32.A"],
    ["F32A", "F32.A"],
    ["F10.239", "F10.239"],
  ])("%j → %s", (input, expected) => {
    expect(canonicalIcd10(input)).toBe(expected);
  });

  it.each([
    ["", "empty"],
    ["   ", "empty"],
    ["296.2", "malformed"],
    ["X", "malformed"],
    ["F3", "malformed"],
    ["F32.", "malformed"],
    ["F32.1.2", "malformed"],
    ["F32.12345", "malformed"],
    ["F40-F48", "malformed"],
    ["depression", "malformed"],
    ["G30.1", "other-chapter"],
    ["z 00", "other-chapter"],
  ] as const)("junk %j gives a clear error, never a throw", (input, reason) => {
    const p = parseIcd10(input);
    expect(p.ok).toBe(false);
    if (p.ok) return;
    expect(p.reason).toBe(reason);
    expect(p.error.startsWith(NOT_CHAPTER_V)).toBe(true);
    expect(p.input).toBe(input);
    expect(canonicalIcd10(input)).toBeNull();
    expect(icd10DiagnosisLevel(input)).toBeNull();
    expect(icd10Category(input)).toBeNull();
    expect(icd10Block(input)).toBeNull();
  });

  it("does not throw on null, undefined or non-strings", () => {
    expect(parseIcd10(null)).toMatchObject({ ok: false, reason: "empty" });
    expect(parseIcd10(undefined)).toMatchObject({ ok: false, reason: "empty" });
    expect(parseIcd10(296.2 as unknown as string)).toMatchObject({ ok: false, reason: "malformed" });
  });
});

describe("levels (docs/icd10.md#levels)", () => {
  it.each([
    ["F31.11", "F31.1"],
    ["F32.A", "F32.A"],
    ["F02.80", "F02.8"],
    ["F32.1", "F32.1"],
    ["F29", "F29"],
    ["f321", "F32.1"],
  ])("diagnosis level of %s is %s", (code, level) => {
    expect(icd10DiagnosisLevel(code)).toBe(level);
  });

  it.each([
    ["F32.1", "F32"],
    ["F32.2", "F32"],
    ["F02.80", "F02"],
    ["F99", "F99"],
  ])("category of %s is %s", (code, category) => {
    expect(icd10Category(code)).toBe(category);
  });

  it.each([
    ["F00.0", "F00-F09"],
    ["F09", "F00-F09"],
    ["F10.2", "F10-F19"],
    ["F29", "F20-F29"],
    ["F33.1", "F30-F39"],
    ["F48.1", "F40-F48"],
    ["F50.0", "F50-F59"],
    ["F69", "F60-F69"],
    ["F70.1", "F70-F79"],
    ["F84.0", "F80-F89"],
    ["F98.5", "F90-F98"],
    ["F99", "F99"],
  ])("WHO block of %s is %s", (code, block) => {
    expect(icd10Block(code)).toBe(block);
  });

  it("gives F49 no block: WHO's F40–F48 stops at F48", () => {
    expect(parseIcd10("F49")).toMatchObject({ ok: true, code: "F49", block: null });
    expect(matchesAtBlock("F49", "F49")).toBe(false);
  });

  it("lists the 11 WHO blocks of the table, in order", () => {
    const fromTable = table.entries.filter((e) => e.level === "block").map((e) => e.block);
    expect(fromTable).toEqual(WHO_BLOCKS.map((b) => b.id));
    for (const e of table.entries.filter((x) => x.level === "block")) {
      expect(WHO_BLOCKS.find((b) => b.id === e.block)?.title).toBe(e.title);
    }
  });
});

describe("matching (docs/icd10.md#matching-a-prediction-against-a-reference; paper §2.3.1.3 examples)", () => {
  it.each([
    // [reference, candidate, diagnosis level, category, block]
    ["F31.1", "F31.11", true, true, true],
    ["F31.1", "F31.2", false, true, true],
    ["F29", "F29.1", true, true, true],
    ["F29", "F29", true, true, true],
    ["F29", "F30.1", false, false, false],
    ["F32.1", "F32", false, true, true],
    ["F32.1", "F32.2", false, true, true],
    ["F32.1", "F33.1", false, false, true],
    ["F32.1", "F20.0", false, false, false],
    ["F32.1", "f321", true, true, true],
    ["F32.9", "F32.A", false, true, true],
    ["F02.8", "F02.80", true, true, true],
    ["F41.1", "F43.1", false, false, true],
    ["F32.1", "296.2", false, false, false],
    ["F32.1", "", false, false, false],
    ["", "F32.1", false, false, false],
    ["F32.1", "G30.1", false, false, false],
  ] as const)("reference %s vs %s", (reference, candidate, level, category, block) => {
    expect(matchesAtDiagnosisLevel(reference, candidate)).toBe(level);
    expect(matchesAtCategory(reference, candidate)).toBe(category);
    expect(matchesAtBlock(reference, candidate)).toBe(block);
    expect(matchIcd10(reference, candidate)).toEqual({ diagnosisLevel: level, category, block });
  });
});

describe("the WHO code table", () => {
  it("reads all 478 rows: 11 blocks, 78 categories, 389 subcategories", () => {
    const count = (level: string) => table.entries.filter((e) => e.level === level).length;
    expect(table.entries).toHaveLength(478);
    expect([count("block"), count("category"), count("subcategory")]).toEqual([11, 78, 389]);
  });

  it("keeps quoted titles with commas intact", () => {
    expect(table.lookup("F00.2")?.title).toBe("Dementia in Alzheimer disease, atypical or mixed type");
    expect(table.lookup("F00-F09")?.title).toBe("Organic, including symptomatic, mental disorders");
  });

  it("looks up codes in any accepted spelling, with parent and block", () => {
    expect(table.lookup("f321")).toEqual({
      code: "F32.1",
      title: "Moderate depressive episode",
      level: "subcategory",
      parent: "F32",
      block: "F30-F39",
    });
    expect(table.lookup("F32")).toMatchObject({ level: "category", parent: "F30-F39", block: "F30-F39" });
    expect(table.lookup("F40-F48")).toMatchObject({ level: "block", parent: null, block: "F40-F48" });
    expect(table.lookup("F99-F99")).toMatchObject({ level: "block", block: "F99" });
    expect(table.lookup("F99")).toMatchObject({ level: "category", parent: "F99-F99", block: "F99" });
    expect(table.lookup("F32.A")).toBeNull();
    expect(table.lookup("junk")).toBeNull();
  });

  it("accepts WHO categories and subcategories as diagnoses, not blocks nor ICD-10-CM codes", () => {
    for (const code of ["F03", "F32.1", "f 32.1", "F29", "F99", "F10.2", "F70.1"]) {
      expect(table.isValidChapterVCode(code)).toBe(true);
    }
    for (const code of ["F40-F48", "F99-F99", "F32.A", "F02.80", "F10.20", "F49", "F32.7", "296.2", "", "X", "F3"]) {
      expect(table.isValidChapterVCode(code)).toBe(false);
    }
  });

  it("explains why a code is refused", () => {
    expect(table.checkDiagnosisCode("F32.1")).toMatchObject({ ok: true, entry: { code: "F32.1" } });
    const error = (code: string) => {
      const c = table.checkDiagnosisCode(code);
      return c.ok ? null : c.error;
    };
    expect(error("F40-F48")).toBe("F40-F48 is a block of codes, not a diagnosis: choose a code");
    expect(error("F32.A")).toBe(
      "F32.A is not in WHO ICD-10 chapter V (2019); ICD-10-CM and other national codes are not accepted",
    );
    expect(error("F02.80")).toMatch(/ICD-10-CM/);
    expect(error("F49")).toBe("F49 is not in WHO ICD-10 chapter V (2019)");
    expect(error("296.2")).toMatch(new RegExp(`^${NOT_CHAPTER_V}`));
  });

  it("can be built from already-parsed rows", () => {
    const index = createIcd10Index([
      { code: "F30-F39", title: "Mood [affective] disorders", level: "block", parent: "" },
      { code: "F32", title: "Depressive episode", level: "category", parent: "F30-F39" },
    ]);
    expect(index.isValidChapterVCode("f32")).toBe(true);
    expect(index.lookup("F32")?.title).toBe("Depressive episode");
  });

  it("refuses a malformed table", () => {
    expect(() => parseIcd10Table("code,title\nF32,x\n")).toThrow(/header/);
    expect(() => parseIcd10Table("code,title,level,parent\nF32,x,chapter,\n")).toThrow(/unknown level/);
    expect(() => parseIcd10Table("code,title,level,parent\nF3,x,category,\n")).toThrow(/not a canonical/);
    expect(() => parseIcd10Table('code,title,level,parent\nF32,"x,category,\n')).toThrow(CsvSyntaxError);
  });
});

describe("csv-text", () => {
  it("reads quoted fields, doubled quotes, line breaks in quotes, CRLF, a BOM and blank lines", () => {
    expect(parseCsv('\uFEFFa,b\r\n"x, y","say ""hi""\nthere"\r\n\r\nlast,\n')).toEqual([
      ["a", "b"],
      ["x, y", 'say "hi"\nthere'],
      ["last", ""],
    ]);
    expect(parseCsv("a,b")).toEqual([["a", "b"]]);
    expect(parseCsv('a"b,c')).toEqual([['a"b', "c"]]);
  });

  it("reports syntax errors with their line", () => {
    expect(() => parseCsv('a\n"open')).toThrow("line 2: unterminated quoted field");
    expect(() => parseCsv('a\n"x"y')).toThrow("line 2: unexpected character after a closing quote");
  });

  it("writes records as Python's csv.writer does", () => {
    // python3 -c 'import csv,sys; csv.writer(sys.stdout).writerow(["a","",...])' — same fields, same bytes.
    expect(
      formatCsvRecord(["a", "", " lead", "trail ", 'q"uote', "com,ma", "new\nline", "cr\rx", "tab\tx", "ä€😀", "'s"]),
    ).toBe('a,, lead,trail ,"q""uote","com,ma","new\nline","cr\rx",tab\tx,ä€😀,\'s\r\n');
    expect(formatCsvRecord([""])).toBe('""\r\n');
    expect(formatCsvRecord(["", ""])).toBe(",\r\n");
  });
});

describe("compatibility with the reference scripts (docs/icd10.md#the-reference-scripts-variants)", () => {
  it("N trims, upper-cases and removes spaces only", () => {
    expect(compatNormalizeIcd10("  f 32.1 ")).toBe("F32.1");
    expect(compatNormalizeIcd10("")).toBeNull();
    expect(compatNormalizeIcd10(null)).toBeNull();
    expect(compatNormalizeIcd10("f\u00a032")).toBe("F\u00a032");
  });

  it.each([
    ["F31.11", "F31.1", "F31"],
    ["F32.A", "F32.A", "F32"],
    ["F02.80", "F02.8", "F02"],
    ["F29", "F29", "F29"],
    ["f321", "F32", "F32"],
    ["G30.1", "G30.1", "G30"],
    ["F32.", "F32", "F32"],
    ["F32-1", "F32", "F32"],
    ["296.2", null, null],
    ["X", null, null],
    ["F3", null, null],
    ["", null, null],
  ])("L and C of %j are %j and %j", (code, level, category) => {
    expect(compatDiagnosisLevel(code)).toBe(level);
    expect(compatCategory(code)).toBe(category);
  });

  it("G differs between the scripts only for F49", () => {
    expect(compatGroup("F49", "accuracy")).toBe("F40-F49");
    expect(compatGroup("F49", "seeds")).toBeNull();
    expect(compatGroup("F41.1", "accuracy")).toBe("F40-F49");
    expect(compatGroup("F41.1", "seeds")).toBe("F40-F48");
    for (const variant of ["accuracy", "seeds"] as const) {
      expect(compatGroup("F99", variant)).toBe("F99");
      expect(compatGroup("F32.1", variant)).toBe("F30-F39");
      expect(compatGroup("F90.0", variant)).toBe("F90-F98");
      expect(compatGroup("G30", variant)).toBeNull();
      expect(compatGroup("junk", variant)).toBeNull();
    }
  });

  it.each([
    ["F29", "F29.1", true],
    ["F32.1", "F32", false],
    ["F31.1", "F31.11", true],
    ["F32.1", "f321", false],
    ["F32", "f321", true],
    ["F32.1", "", false],
    ["", "F32.1", false],
  ])("diagnosis-level match of GT %s and %s is %s", (gt, predicted, expected) => {
    expect(compatMatchesDiagnosisLevel(gt, predicted)).toBe(expected);
  });

  it("matches at three levels with the chosen group table", () => {
    expect(compatMatches("F48.1", "F49", "accuracy")).toEqual({ diagnosisLevel: false, category: false, block: true });
    expect(compatMatches("F48.1", "F49", "seeds")).toEqual({ diagnosisLevel: false, category: false, block: false });
    expect(compatMatches("F32.1", "F33.1", "seeds")).toEqual({ diagnosisLevel: false, category: false, block: true });
  });
});
