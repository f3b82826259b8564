/**
 * Reading case files (docs/safe-psych.md#cases-and-sections, docs/formats.md#released-csv-datacsv, docs/formats.md#case-import-csv-and-jsonl): the Safe-Psych released CSV exactly, mapped CSVs, JSONL, and
 * whole-file validation reported as `line N: reason`.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  LABEL_COLUMNS,
  MAX_FILE_BYTES,
  MAX_SECTION_CHARS,
  parseCaseFile,
  type ParseOptions,
  type ParseResult,
} from "../../app/annotation/domain/case-import";
import { parseIcd10Table } from "../../app/icd10/icd10";
import { AGE_GROUPS, compactSections, normaliseAgeGroup, SECTION_KINDS } from "../../app/annotation/domain/sections";
import { pyStrip } from "../../app/python-compat/text";

const icd10 = parseIcd10Table(readFileSync(new URL("../../app/data/icd10-who-chapter-v.csv", import.meta.url), "utf8"));
function canonicalCode(code: string): string | null {
  const check = icd10.checkDiagnosisCode(code);
  return check.ok ? check.entry.code : null;
}

/** The released CSV's 13 columns in its own order (docs/formats.md#released-csv-datacsv). */
const RELEASED = ["id", "age_group", "sex", ...SECTION_KINDS, ...LABEL_COLUMNS];
const SECTIONS_ONLY = ["id", ...SECTION_KINDS];

function cell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function csv(header: string[], rows: string[][], eol = "\n"): string {
  return [header, ...rows].map((r) => r.map(cell).join(",")).join(eol) + eol;
}

/** A released-CSV row: id, metadata, five sections, five labels. */
function released(
  id: string,
  sections: string[],
  labels: string[] = ["", "", "", "", ""],
  meta = ["48-57", "F"],
): string[] {
  return [id, ...meta, ...sections, ...labels];
}

const FIVE = ["symptoms", "history", "exam", "tests", "comorbidity"];

function parse(input: string | Uint8Array, options: Partial<ParseOptions> = {}): ParseResult {
  return parseCaseFile(input, { filename: "cases.csv", canonicalCode, ...options });
}

function jsonl(objects: unknown[], eol = "\n"): string {
  return objects.map((o) => JSON.stringify(o)).join(eol) + eol;
}

/** What the admin page and the CLI print. */
function report(result: { errors: { line: number; message: string }[] }): string[] {
  return result.errors.map((e) => `line ${e.line}: ${e.message}`);
}

function warnings(result: ParseResult): string[] {
  return result.warnings.map((e) => `line ${e.line}: ${e.message}`);
}

const utf8 = (text: string) => new TextEncoder().encode(text);
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

describe("pyStrip is Python's str.strip() (docs/formats.md#python-compatible-behaviours)", () => {
  // Every code point for which Python 3.11's str.isspace() is true:
  // python3 -c "print([hex(c) for c in range(0x110000) if chr(c).isspace()])"
  const PYTHON_WHITESPACE = [
    0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
    0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
  ];

  it.each(PYTHON_WHITESPACE.map((c) => [c.toString(16), String.fromCharCode(c)]))(
    "strips U+%s at both ends",
    (_, ch) => {
      expect(pyStrip(`${ch}${ch}a${ch}b${ch}`)).toBe(`a${ch}b`);
    },
  );

  it("strips exactly Python's set: nothing that str.isspace() rejects", () => {
    const all = Array.from({ length: 0x3001 }, (_, c) => c).filter((c) => c < 0xd800 || c > 0xdfff);
    const stripped = all.filter((c) => pyStrip(`${String.fromCharCode(c)}x`) === "x");
    expect(stripped).toEqual(PYTHON_WHITESPACE);
  });

  it("keeps U+FEFF, U+200B and U+180E, which Python does not strip", () => {
    expect(pyStrip("\uFEFFa\uFEFF")).toBe("\uFEFFa\uFEFF");
    expect(pyStrip("\u200Ba\u180E")).toBe("\u200Ba\u180E");
  });
});

describe("compactSections (compacted numbering, docs/safe-psych.md#cases-and-sections)", () => {
  it("drops empty sections, keeps kind order and numbers the rest 1..T", () => {
    expect(
      compactSections({
        secondary_diagnoses: " stroke ",
        presenting_symptoms: "low mood",
        psychiatric_history: " \x1c\x85 ",
        psychiatric_exam: "flat affect",
        psychological_exam: null,
      }),
    ).toEqual([
      { order: 1, kind: "presenting_symptoms", content: "low mood" },
      { order: 2, kind: "psychiatric_exam", content: "flat affect" },
      { order: 3, kind: "secondary_diagnoses", content: "stroke" },
    ]);
  });
});

describe("age groups", () => {
  it("accepts the seven bins, also with an en dash", () => {
    for (const bin of AGE_GROUPS) expect(normaliseAgeGroup(bin)).toBe(bin);
    expect(normaliseAgeGroup("18\u201327")).toBe("18-27");
    expect(normaliseAgeGroup("18 to 27")).toBeNull();
    expect(normaliseAgeGroup("80+")).toBeNull();
  });
});

describe("the released CSV (docs/formats.md#released-csv-datacsv)", () => {
  it("reads a BOM, CRLF, a quoted multi-line cell and the label columns", () => {
    const text =
      RELEASED.join(",") +
      "\r\n" +
      'c0042,48-57,F,"Low mood for months,\r\nearly waking.",,"Slowed, sad.",MADRS 32,,1,1,F32.2,0,2\r\n';
    const result = parse(concat(new Uint8Array([0xef, 0xbb, 0xbf]), utf8(text)));
    expect(report(result)).toEqual([]);
    expect(result.format).toBe("csv");
    expect(result.hasReferenceLabels).toBe(true);
    expect(result.cases).toEqual([
      {
        line: 2,
        externalId: "c0042",
        ageGroup: "48-57",
        sex: "F",
        sections: [
          { order: 1, kind: "presenting_symptoms", content: "Low mood for months,\r\nearly waking." },
          { order: 2, kind: "psychiatric_exam", content: "Slowed, sad." },
          { order: 3, kind: "psychological_exam", content: "MADRS 32" },
        ],
        referenceLabels: {
          diagnosis_sufficiency: "1",
          diagnosis_sufficiency_agreement: "1",
          diagnosis: "F32.2",
          diagnosis_agreement: "0",
          earliest_sufficient_section: "2",
        },
        sourceDiagnosis: null,
      },
    ]);
  });

  it("takes the BOM off a string input too, so the first column is still id", () => {
    const result = parse("\uFEFF" + csv(SECTIONS_ONLY, [["a", "s", "h", "e", "", ""]]));
    expect(report(result)).toEqual([]);
    expect(result.cases[0]!.externalId).toBe("a");
  });

  it("reads the 13 columns in any order and ignores extra ones, with a warning", () => {
    const header = [...RELEASED].reverse().concat("notes");
    const row = released("r1", FIVE, ["1", "0", "F20.0", "1", "5"]).reverse().concat("free text");
    const result = parse(csv(header, [row]));
    expect(report(result)).toEqual([]);
    expect(warnings(result)).toEqual(['line 1: column "notes" not used.']);
    const c = result.cases[0]!;
    expect(c.externalId).toBe("r1");
    expect(c.sections.map((s) => [s.order, s.kind, s.content])).toEqual(
      SECTION_KINDS.map((k, i) => [i + 1, k, FIVE[i]]),
    );
    expect(c.referenceLabels).toMatchObject({ diagnosis: "F20.0", earliest_sufficient_section: "5" });
  });

  it("reads a short row as empty cells", () => {
    const text = RELEASED.join(",") + "\nshort,18-27,M,s,h,e\n";
    const result = parse(text);
    expect(report(result)).toEqual([]);
    expect(result.cases[0]!.sections.map((s) => s.kind)).toEqual([
      "presenting_symptoms",
      "psychiatric_history",
      "psychiatric_exam",
    ]);
    expect(result.cases[0]!.referenceLabels).toBeNull();
  });

  it("warns about cells beyond the header", () => {
    const text = SECTIONS_ONLY.join(",") + "\na,s,h,e,,,extra,more\n";
    const result = parse(text);
    expect(report(result)).toEqual([]);
    expect(warnings(result)).toEqual(["line 2: 2 cell(s) beyond the header ignored."]);
  });

  it("drops empty sections and validates τ in the compacted numbering 1..T", () => {
    const sections = ["", "history", "   ", "tests", "comorbidity"];
    const ok = parse(csv(RELEASED, [released("a", sections, ["1", "1", "F06.3", "1", "3"])]));
    expect(report(ok)).toEqual([]);
    expect(ok.cases[0]!.sections).toEqual([
      { order: 1, kind: "psychiatric_history", content: "history" },
      { order: 2, kind: "psychological_exam", content: "tests" },
      { order: 3, kind: "secondary_diagnoses", content: "comorbidity" },
    ]);
    // τ = 4 would be the fourth column, but this case has T = 3 sections.
    const bad = parse(csv(RELEASED, [released("a", sections, ["1", "1", "F06.3", "1", "4"])]));
    expect(report(bad)).toEqual([
      'line 2: (id a) earliest_sufficient_section is "4"; it must be a whole number from 1 to 3 (the case\'s non-empty sections).',
    ]);
  });

  it("trims every cell like Python strip, \\x1c-\\x1f and \\x85 included, but keeps \\uFEFF inside a cell", () => {
    const row = released(
      " \x1cid-1\x85 ",
      ["\x1d\x1e symptoms \x1f", "\x85\x1c\x1d\x1e\x1f", "\uFEFF", "\tMMSE 24\u3000", ""],
      ["\x1c1\x85", " 1 ", "\x1fF32.1\x1f", "0 ", "\x852"],
      [" 38-47\x85", "\x1fF"],
    );
    const result = parse(csv(RELEASED, [row]));
    expect(report(result)).toEqual([]);
    const c = result.cases[0]!;
    expect(c.externalId).toBe("id-1");
    expect(c.ageGroup).toBe("38-47");
    expect(c.sex).toBe("F");
    // The section made only of \x85 and \x1c-\x1f is empty and dropped; the one holding a lone U+FEFF is not.
    expect(c.sections).toEqual([
      { order: 1, kind: "presenting_symptoms", content: "symptoms" },
      { order: 2, kind: "psychiatric_exam", content: "\uFEFF" },
      { order: 3, kind: "psychological_exam", content: "MMSE 24" },
    ]);
    expect(c.referenceLabels).toEqual({
      diagnosis_sufficiency: "1",
      diagnosis_sufficiency_agreement: "1",
      diagnosis: "F32.1",
      diagnosis_agreement: "0",
      earliest_sufficient_section: "2",
    });
  });

  it("accepts a CSV with only id and the section columns as a study to annotate", () => {
    const result = parse(csv(SECTIONS_ONLY, [["n1", "a", "b", "c", "", ""]]));
    expect(report(result)).toEqual([]);
    expect(result.hasReferenceLabels).toBe(false);
    expect(result.cases[0]).toMatchObject({
      externalId: "n1",
      ageGroup: "",
      sex: "",
      referenceLabels: null,
      sourceDiagnosis: null,
    });
  });

  it("keeps a row whose label cells are all empty as a case without reference labels", () => {
    const result = parse(csv(RELEASED, [released("a", FIVE, ["1", "1", "F10.2", "1", "1"]), released("b", FIVE)]));
    expect(report(result)).toEqual([]);
    expect(result.hasReferenceLabels).toBe(true);
    expect(result.cases.map((c) => c.referenceLabels?.diagnosis ?? null)).toEqual(["F10.2", null]);
  });

  it("canonicalises the code and τ it keeps", () => {
    const result = parse(csv(RELEASED, [released("a", FIVE, ["1", "0", "f 32.1", "1", "02"])]));
    expect(report(result)).toEqual([]);
    expect(result.cases[0]!.referenceLabels).toMatchObject({ diagnosis: "F32.1", earliest_sufficient_section: "2" });
  });

  it("keeps an insufficient case's empty code and τ", () => {
    const result = parse(csv(RELEASED, [released("a", FIVE, ["0", "1", "", "1", ""])]));
    expect(report(result)).toEqual([]);
    expect(result.cases[0]!.referenceLabels).toEqual({
      diagnosis_sufficiency: "0",
      diagnosis_sufficiency_agreement: "1",
      diagnosis: "",
      diagnosis_agreement: "1",
      earliest_sufficient_section: "",
    });
  });

  it("keeps a source diagnosis column apart from the case", () => {
    const result = parse(csv([...SECTIONS_ONLY, "source_diagnosis"], [["a", "s", "h", "e", "", "", "F20.0 paranoid"]]));
    expect(result.cases[0]!.sourceDiagnosis).toBe("F20.0 paranoid");
    expect(JSON.stringify(result.cases[0]!.sections)).not.toContain("F20.0");
  });

  it("counts lines as an editor does: CRLF inside quoted cells and skipped blank lines", () => {
    const text =
      SECTIONS_ONLY.join(",") +
      "\r\n" +
      'a,"one\r\ntwo\r\nthree",h,e,,\r\n' + // lines 2-4
      "\r\n" + // line 5, blank
      'b,"x\ny",h,,,\r\n' + // lines 6-7, 2 sections
      ",s,h,e,,\r\n"; // line 8
    expect(report(parse(text))).toEqual([
      "line 6: (id b) 2 non-empty sections; a case needs 3 to 5.",
      "line 8: missing id: every case needs a non-empty id.",
    ]);
  });
});

describe("column mapping", () => {
  const header = [
    "Case",
    "Age",
    "Symptoms",
    "psychiatric_history",
    "psychiatric_exam",
    "psychological_exam",
    "secondary_diagnoses",
  ];

  it("reads renamed columns", () => {
    const result = parse(csv(header, [["k1", "28-37", "sad", "none", "calm", "", ""]]), {
      columnMap: { id: "Case", age_group: "Age", presenting_symptoms: "Symptoms" },
    });
    expect(report(result)).toEqual([]);
    expect(warnings(result)).toEqual([]);
    expect(result.cases[0]).toMatchObject({ externalId: "k1", ageGroup: "28-37" });
    expect(result.cases[0]!.sections[0]).toEqual({ order: 1, kind: "presenting_symptoms", content: "sad" });
  });

  it("names a mapped column that is not in the header", () => {
    const result = parse(csv(header, [["k1", "28-37", "sad", "none", "calm", "", ""]]), {
      columnMap: { id: "CaseId", presenting_symptoms: "Symptoms" },
    });
    expect(report(result)).toEqual([
      'line 1: column "CaseId" (mapped to id) is not in the header.',
      'line 1: missing required column "CaseId". The header must name id and the five section columns (presenting_symptoms, psychiatric_history, psychiatric_exam, psychological_exam, secondary_diagnoses), or map your column names to them.',
    ]);
    expect(result.cases).toEqual([]);
  });
});

describe("errors, each as `line N: reason`", () => {
  it("missing id", () => {
    const result = parse(
      csv(SECTIONS_ONLY, [
        ["a", "s", "h", "e", "", ""],
        ["  ", "s", "h", "e", "", ""],
      ]),
    );
    expect(report(result)).toEqual(["line 3: missing id: every case needs a non-empty id."]);
    expect(result.cases).toEqual([]);
  });

  it("duplicate id, after trimming", () => {
    const rows = [
      ["a", "s", "h", "e", "", ""],
      ["b", "s", "h", "e", "", ""],
      [" a ", "s", "h", "e", "", ""],
    ];
    expect(report(parse(csv(SECTIONS_ONLY, rows)))).toEqual(['line 4: (id a) duplicate id "a" (first on line 2).']);
  });

  it("fewer than 3 non-empty sections", () => {
    const rows = [
      ["a", "s", "", "e", " ", ""],
      ["b", "", "", "", "", ""],
    ];
    expect(report(parse(csv(SECTIONS_ONLY, rows)))).toEqual([
      "line 2: (id a) 2 non-empty sections; a case needs 3 to 5.",
      "line 3: (id b) 0 non-empty sections; a case needs 3 to 5.",
    ]);
  });

  it("more than 5 non-empty sections (JSONL `sections` array)", () => {
    const sections = [...SECTION_KINDS, "psychiatric_exam"].map((kind, i) => ({ kind, content: `text ${i}` }));
    const result = parse(jsonl([{ id: "six", sections }]), { filename: "cases.jsonl" });
    expect(report(result)).toEqual(["line 1: (id six) 6 non-empty sections; a case needs 3 to 5."]);
  });

  it("a missing required column", () => {
    const header = SECTIONS_ONLY.filter((c) => c !== "psychological_exam");
    expect(report(parse(csv(header, [["a", "s", "h", "e", ""]])))).toEqual([
      'line 1: missing required column "psychological_exam". The header must name id and the five section columns (presenting_symptoms, psychiatric_history, psychiatric_exam, psychological_exam, secondary_diagnoses), or map your column names to them.',
    ]);
    const noId = SECTIONS_ONLY.filter((c) => c !== "id" && c !== "secondary_diagnoses");
    expect(report(parse(csv(noId, [["s", "h", "e", ""]])))[0]).toMatch(
      /^line 1: missing required columns "id", "secondary_diagnoses"\. /,
    );
  });

  it("label columns partially present", () => {
    const header = RELEASED.filter((c) => c !== "diagnosis_agreement" && c !== "earliest_sufficient_section");
    const result = parse(csv(header, [released("a", FIVE, ["1", "1", "F32.1"])]));
    expect(report(result)).toEqual([
      "line 1: label columns must all be present or all absent; missing diagnosis_agreement, earliest_sufficient_section.",
    ]);
  });

  it("invalid UTF-8, on the line that holds it", () => {
    const head = utf8(SECTIONS_ONLY.join(",") + '\na,"two\nlines",h,e,,\nb,caf');
    const bytes = concat(head, new Uint8Array([0xe9]), utf8(",h,e,,\n"));
    expect(report(parse(bytes))).toEqual([
      "line 4: the file is not valid UTF-8 here. Save it as UTF-8 and import it again.",
    ]);
    // An encoded surrogate and an overlong form are invalid too; so is a bad byte in the header.
    expect(report(parse(concat(utf8("id,"), new Uint8Array([0xed, 0xa0, 0x80]), utf8("\n"))))).toEqual([
      "line 1: the file is not valid UTF-8 here. Save it as UTF-8 and import it again.",
    ]);
    expect(report(parse(concat(utf8("id\nx\n"), new Uint8Array([0xc0, 0xaf]))))).toEqual([
      "line 3: the file is not valid UTF-8 here. Save it as UTF-8 and import it again.",
    ]);
  });

  it("oversized text", () => {
    const long = "x".repeat(MAX_SECTION_CHARS + 1);
    const rows = [
      ["ok", "s", "h", "x".repeat(MAX_SECTION_CHARS), "", ""],
      ["big", "s", "h", long, "", ""],
    ];
    expect(report(parse(csv(SECTIONS_ONLY, rows)))).toEqual([
      `line 3: (id big) section psychiatric_exam has ${MAX_SECTION_CHARS + 1} characters; the limit is ${MAX_SECTION_CHARS}.`,
    ]);
  });

  it("an oversized file, before decoding it", () => {
    const result = parse(new Uint8Array(MAX_FILE_BYTES + 1));
    expect(report(result)).toEqual([
      `line 0: the file has ${MAX_FILE_BYTES + 1} bytes; the limit is ${MAX_FILE_BYTES}. Split it.`,
    ]);
  });

  describe("a label value outside its domain", () => {
    const one = (labels: string[], sections = FIVE) => report(parse(csv(RELEASED, [released("a", sections, labels)])));

    it.each([["yes"], ["2"], ["1.0"], ["true"], [""]])("sufficiency %j is not 1/0", (value) => {
      expect(one([value, "1", "", "1", ""])).toEqual([
        `line 2: (id a) diagnosis_sufficiency is "${value}"; it must be 1 or 0.`,
      ]);
    });

    it("agreement flags must be 1/0 as well", () => {
      expect(one(["1", "y", "F32.1", "-1", "1"])).toEqual([
        'line 2: (id a) diagnosis_sufficiency_agreement is "y"; it must be 1 or 0.',
        'line 2: (id a) diagnosis_agreement is "-1"; it must be 1 or 0.',
      ]);
    });

    it("sufficient without a code", () => {
      expect(one(["1", "1", "", "1", "2"])).toEqual([
        "line 2: (id a) diagnosis is empty but diagnosis_sufficiency is 1; give the ICD-10 code.",
      ]);
    });

    it.each([["F32.A"], ["F02.80"], ["G30.1"], ["depression"], ["F32.12345"]])(
      "code %s is not in WHO chapter V",
      (code) => {
        expect(one(["1", "1", code, "1", "2"])).toEqual([
          `line 2: (id a) diagnosis "${code}" is not a WHO ICD-10 chapter V code (F00–F99).`,
        ]);
      },
    );

    it.each([["0"], ["6"], ["2.0"], ["two"], ["-1"], [""], ["1e0"]])(
      "τ %j outside 1..T or not a plain integer",
      (tau) => {
        expect(one(["1", "1", "F32.1", "1", tau])).toEqual([
          `line 2: (id a) earliest_sufficient_section is "${tau}"; it must be a whole number from 1 to 5 (the case's non-empty sections).`,
        ]);
      },
    );

    it("insufficient with a code or a τ", () => {
      expect(one(["0", "1", "F32.1", "1", "2"])).toEqual([
        'line 2: (id a) diagnosis is "F32.1" but diagnosis_sufficiency is 0; leave it empty.',
        'line 2: (id a) earliest_sufficient_section is "2" but diagnosis_sufficiency is 0; leave it empty.',
      ]);
    });
  });

  it("reports every bad row of the file, in line order, and keeps no case", () => {
    const rows = [
      released("a", FIVE, ["1", "1", "F32.1", "1", "2"]),
      released("", FIVE),
      released("c", ["s", "", "", "", ""]),
      released("a", FIVE),
      released("e", FIVE, ["1", "1", "F99", "1", "9"]),
      released("f", FIVE, ["0", "0", "", "0", ""]),
    ];
    const result = parse(csv(RELEASED, rows));
    expect(report(result)).toEqual([
      "line 3: missing id: every case needs a non-empty id.",
      "line 4: (id c) 1 non-empty section; a case needs 3 to 5.",
      'line 5: (id a) duplicate id "a" (first on line 2).',
      'line 6: (id e) earliest_sufficient_section is "9"; it must be a whole number from 1 to 5 (the case\'s non-empty sections).',
    ]);
    expect(result.cases).toEqual([]);
  });

  it("a CSV that cannot be parsed", () => {
    const result = parse(SECTIONS_ONLY.join(",") + '\na,"never closed,h,e,,\n');
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]!.message).toMatch(/^the CSV cannot be read: /);
    expect(result.cases).toEqual([]);
  });
});

describe("warnings", () => {
  it("an age group outside the bins is kept as given and warned about, not refused", () => {
    const rows = [
      released("a", FIVE, undefined, ["18 to 27", "F"]),
      released("b", FIVE, undefined, ["18\u201327", "M"]),
    ];
    const result = parse(csv(RELEASED, rows));
    expect(report(result)).toEqual([]);
    expect(warnings(result)).toEqual([
      'line 2: (id a) age group "18 to 27" is not one of 18-27, 28-37, 38-47, 48-57, 58-67, 68-77, 78+; kept as given.',
    ]);
    expect(result.cases.map((c) => c.ageGroup)).toEqual(["18 to 27", "18\u201327"]);
  });
});

describe("JSONL", () => {
  const opts = { filename: "cases.jsonl" };

  it("flat keys, numeric id and sample_id", () => {
    const result = parse(
      jsonl([
        {
          id: 7,
          age_group: "78+",
          sex: "M",
          presenting_symptoms: " a ",
          psychiatric_history: "b",
          psychiatric_exam: "",
          psychological_exam: "c",
        },
        { sample_id: "s-2", presenting_symptoms: "a", psychiatric_exam: "b", secondary_diagnoses: "c" },
      ]),
      opts,
    );
    expect(report(result)).toEqual([]);
    expect(result.format).toBe("jsonl");
    expect(result.hasReferenceLabels).toBe(false);
    expect(
      result.cases.map((c) => [
        c.line,
        c.externalId,
        c.ageGroup,
        c.sections.map((s) => `${s.order}:${s.kind}:${s.content}`),
      ]),
    ).toEqual([
      [1, "7", "78+", ["1:presenting_symptoms:a", "2:psychiatric_history:b", "3:psychological_exam:c"]],
      [2, "s-2", "", ["1:presenting_symptoms:a", "2:psychiatric_exam:b", "3:secondary_diagnoses:c"]],
    ]);
  });

  it("a `sections` object", () => {
    const result = parse(
      jsonl([{ id: "o", sections: { psychiatric_exam: "e", presenting_symptoms: "p", secondary_diagnoses: "s" } }]),
      opts,
    );
    expect(result.cases[0]!.sections.map((s) => s.kind)).toEqual([
      "presenting_symptoms",
      "psychiatric_exam",
      "secondary_diagnoses",
    ]);
  });

  it("a `sections` array of kind/content (or section_name), put back in kind order", () => {
    const sections = [
      { kind: "psychological_exam", content: "MMSE 30" },
      { section_name: "presenting_symptoms", content: "p" },
      { kind: "psychiatric_history", content: "  " },
      { kind: "psychiatric_exam", content: "e" },
    ];
    const result = parse(jsonl([{ id: "arr", sections }]), opts);
    expect(report(result)).toEqual([]);
    expect(result.cases[0]!.sections).toEqual([
      { order: 1, kind: "presenting_symptoms", content: "p" },
      { order: 2, kind: "psychiatric_exam", content: "e" },
      { order: 3, kind: "psychological_exam", content: "MMSE 30" },
    ]);
  });

  it("refuses unknown or repeated kinds and malformed sections", () => {
    const three = [
      { kind: "presenting_symptoms", content: "p" },
      { kind: "psychiatric_exam", content: "e" },
    ];
    const result = parse(
      jsonl([
        { id: "u", sections: [...three, { kind: "family_history", content: "f" }] },
        { id: "r", sections: [...three, { kind: "psychiatric_exam", content: "again" }] },
        { id: "m", sections: [...three, { kind: "psychological_exam" }] },
        { id: "t", presenting_symptoms: "p", psychiatric_exam: 3, secondary_diagnoses: "s" },
      ]),
      opts,
    );
    expect(report(result)).toEqual([
      'line 1: (id u) unknown section kind "family_history"; use one of presenting_symptoms, psychiatric_history, psychiatric_exam, psychological_exam, secondary_diagnoses.',
      "line 2: (id r) section psychiatric_exam appears twice.",
      'line 3: each element of "sections" needs "kind" (a section kind) and "content" (text).',
      "line 4: section psychiatric_exam must be text.",
    ]);
  });

  it("a `labels` object, with numbers and booleans as flags", () => {
    const labels = {
      diagnosis_sufficiency: true,
      diagnosis_sufficiency_agreement: 0,
      diagnosis: "f41.1",
      diagnosis_agreement: false,
      earliest_sufficient_section: 3,
    };
    const result = parse(
      jsonl([
        { id: "l", sections: { presenting_symptoms: "p", psychiatric_exam: "e", secondary_diagnoses: "s" }, labels },
      ]),
      opts,
    );
    expect(report(result)).toEqual([]);
    expect(result.hasReferenceLabels).toBe(true);
    expect(result.cases[0]!.referenceLabels).toEqual({
      diagnosis_sufficiency: "1",
      diagnosis_sufficiency_agreement: "0",
      diagnosis: "F41.1",
      diagnosis_agreement: "0",
      earliest_sufficient_section: "3",
    });
  });

  it("flat label keys, checked against the same domains", () => {
    const base = { presenting_symptoms: "p", psychiatric_exam: "e", secondary_diagnoses: "s" };
    const result = parse(
      jsonl([
        {
          id: "ok",
          ...base,
          diagnosis_sufficiency: 0,
          diagnosis_sufficiency_agreement: 1,
          diagnosis: "",
          diagnosis_agreement: 1,
          earliest_sufficient_section: null,
        },
        {
          id: "frac",
          ...base,
          diagnosis_sufficiency: 1,
          diagnosis_sufficiency_agreement: 1,
          diagnosis: "F32.1",
          diagnosis_agreement: 1,
          earliest_sufficient_section: 2.5,
        },
        { id: "partial", ...base, diagnosis_sufficiency: 1 },
      ]),
      opts,
    );
    expect(report(result)).toEqual([
      'line 2: (id frac) earliest_sufficient_section is "2.5"; it must be a whole number from 1 to 3 (the case\'s non-empty sections).',
      'line 3: (id partial) diagnosis_sufficiency_agreement is ""; it must be 1 or 0.',
      'line 3: (id partial) diagnosis_agreement is ""; it must be 1 or 0.',
      "line 3: (id partial) diagnosis is empty but diagnosis_sufficiency is 1; give the ICD-10 code.",
      'line 3: (id partial) earliest_sufficient_section is ""; it must be a whole number from 1 to 3 (the case\'s non-empty sections).',
    ]);
  });

  it("bad JSON lines, with CRLF, blank lines and a BOM", () => {
    const good = JSON.stringify({ id: "g", presenting_symptoms: "p", psychiatric_exam: "e", secondary_diagnoses: "s" });
    const text = `${good}\r\n\r\n{"id": "x",\r\n[1, 2]\r\n"text"\r\n`;
    const result = parse(concat(new Uint8Array([0xef, 0xbb, 0xbf]), utf8(text)), opts);
    const lines = report(result);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^line 3: not valid JSON \(/);
    expect(lines.slice(1)).toEqual([
      "line 4: each line must be one JSON object.",
      "line 5: each line must be one JSON object.",
    ]);
    expect(result.cases).toEqual([]);
  });
});

describe("empty files and formats", () => {
  it.each([
    ["", "cases.csv"],
    ["  \r\n\n", "cases.csv"],
    ["\uFEFF", "cases.csv"],
    ["", "cases.jsonl"],
    ["\n\n", "cases.jsonl"],
  ])("%j as %s is empty", (text, filename) => {
    expect(report(parse(utf8(text), { filename }))).toEqual(["line 1: the file is empty."]);
  });

  it("an unknown format is refused unless chosen", () => {
    const text = csv(SECTIONS_ONLY, [["a", "s", "h", "e", "", ""]]);
    expect(report(parse(text, { filename: "notes.txt" }))).toEqual([
      'line 0: cannot tell the format of "notes.txt": name it .csv or .jsonl, or choose the format.',
    ]);
    expect(parse(text, { filename: "notes.txt", format: "csv" }).cases).toHaveLength(1);
    expect(parse(text, { filename: "NOTES.CSV" }).cases).toHaveLength(1);
  });

  it("the chosen format wins over the extension; .ndjson is JSONL", () => {
    const text = jsonl([{ id: "j", presenting_symptoms: "p", psychiatric_exam: "e", secondary_diagnoses: "s" }]);
    expect(parse(text, { filename: "cases.ndjson" }).cases).toHaveLength(1);
    expect(parse(text, { filename: "cases.csv", format: "jsonl" }).format).toBe("jsonl");
  });
});
