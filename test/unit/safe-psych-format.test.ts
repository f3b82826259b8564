import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parsePythonCsv as parseCsv } from "../../app/formats/csv-text";
import { agreementFlags, resolvePair } from "../../app/gold/domain/gold";
import { type CaseLabel } from "../../app/labels/labels";
import {
  buildDataGtRecord,
  buildSamplesRecord,
  type DataGtRecord,
  type GoldCase,
} from "../../app/gold/domain/safe-psych-format";
import {
  DATA_CSV_COLUMNS,
  serializeDataGt,
  serializeReleasedCsv,
  serializeSamples,
} from "../../app/gold/domain/safe-psych-serialize";
import { formatDataGtError, parseDataGtJson, readGoldCase } from "../../app/gold/domain/safe-psych-read";
import { jsonDumpsIndent2 as pythonJsonDump } from "../../app/python-compat/json";

// The expected files are written by test/fixtures/safe-psych/generate.py with Python's json.dump and csv.writer.
const fixture = (name: string) => readFileSync(new URL(`../fixtures/safe-psych/${name}`, import.meta.url), "utf8");

const interopExample: GoldCase = {
  id: "c0042",
  ageGroup: "48-57",
  sex: "F",
  sections: { presenting_symptoms: "s1", psychiatric_exam: "s3", psychological_exam: "s4" },
  gold: { sufficiency: "sufficient", icd10: "F33.1", earliestSection: 2 },
  agreement: { sufficiency: true, diagnosis: false },
  adjudicated: true,
  adjudicationReason: "diagnosis",
  annotators: {
    A: { sufficiency: "sufficient", icd10: "F33.1", earliestSection: 2 },
    B: { sufficiency: "sufficient", icd10: "F32.1", earliestSection: 3 },
  },
};

const annotators43: { A: CaseLabel; B: CaseLabel } = {
  A: {
    sufficiency: "insufficient",
    missingInfo: ["substance_use", "other"],
    missingInfoOther: "Family history; thyroid panel",
  },
  B: { sufficiency: "insufficient", missingInfo: ["onset_duration"], missingInfoOther: null },
};
const outcome43 = resolvePair(annotators43.A, annotators43.B);
if (outcome43.status !== "agreed") throw new Error("fixture: c0043 should not be disputed");

const annotators44: { A: CaseLabel; B: CaseLabel } = {
  A: { sufficiency: "sufficient", icd10: "F03", earliestSection: 1 },
  B: { sufficiency: "insufficient", missingInfo: ["imaging"], missingInfoOther: null },
};

const concordCases: GoldCase[] = [
  interopExample,
  {
    id: "c0043",
    ageGroup: "28-37",
    sex: "M",
    sections: {
      // Surrounding whitespace (including Python-only whitespace \x1c and \x85) is trimmed as str.strip does.
      presenting_symptoms: '  Pacientă, 34 ani: "nu mai pot dormi", anxietate;\tîngrijorare.\n',
      psychiatric_history: "Line one\nline two\r\nline three, with a comma\x1c",
      psychiatric_exam: "\x85Orientată temporo-spațial — afect anxios",
      psychological_exam: "HAM-A 24 \u2028 MMSE 29/30 éè 😀",
      secondary_diagnoses: "ctl\x01char \x7f del",
    },
    gold: outcome43.gold,
    agreement: agreementFlags(annotators43.A, annotators43.B),
    adjudicated: false,
    adjudicationReason: null,
    annotators: annotators43,
  },
  {
    id: "c0044",
    ageGroup: "78+",
    sex: "M",
    sections: {
      presenting_symptoms: "Memory loss over two years, disorientation.",
      psychiatric_history: "None known.",
      psychiatric_exam: "   ",
      psychological_exam: "MMSE 14/30",
      secondary_diagnoses: "Hypertension",
    },
    gold: { sufficiency: "sufficient", icd10: "F03", earliestSection: 1 },
    agreement: agreementFlags(annotators44.A, annotators44.B),
    adjudicated: true,
    adjudicationReason: "sufficiency",
    annotators: annotators44,
  },
  {
    // Labels imported from a released CSV: no annotations behind them.
    id: "0045",
    ageGroup: "18-27",
    sex: "",
    sections: {
      presenting_symptoms: "Auditory hallucinations",
      psychiatric_history: null,
      psychiatric_exam: "Formal thought disorder",
      secondary_diagnoses: "PANSS 98",
    },
    gold: { sufficiency: "sufficient", icd10: "F20.0", earliestSection: 3 },
    agreement: { sufficiency: true, diagnosis: true },
    adjudicated: false,
    adjudicationReason: null,
    annotators: null,
  },
];

const concordRecords = concordCases.map((c) => buildDataGtRecord(c));

describe("data_gt.json and samples.json (docs/formats.md#data_gtjson, docs/formats.md#samplesjson)", () => {
  it("reproduces the docs/formats.md#data_gtjson example record byte for byte", () => {
    const record = buildDataGtRecord(interopExample, { referenceFieldsOnly: true });
    expect(serializeDataGt([record])).toBe(fixture("interop-example.data_gt.json"));
    expect(serializeSamples([buildSamplesRecord(record)])).toBe(fixture("interop-example.samples.json"));
  });

  it("keeps the reference's key order and types", () => {
    const record = buildDataGtRecord(interopExample, { referenceFieldsOnly: true });
    expect(Object.keys(record)).toEqual([
      "id",
      "age_group",
      "sex",
      "diagnosis_sufficiency",
      "diagnosis_sufficiency_agreement",
      "diagnosis",
      "diagnosis_agreement",
      "earliest_sufficient_section",
      "num_sections_in_input",
      "last_section_order",
      "sections_metadata",
    ]);
    expect(record.earliest_sufficient_section).toBe("2");
    expect(record.sections_metadata.map((m) => m.assigned_order)).toEqual([1, null, 2, 3, null]);
  });

  it("appends Concord's fields after the reference fields, byte-identical to Python's json.dump", () => {
    expect(Object.keys(concordRecords[0]).slice(11)).toEqual([
      "action_labels",
      "presenting_symptoms_label",
      "adjudicated",
      "adjudication_reason",
      "missing_info",
      "missing_info_other",
      "annotators",
    ]);
    expect(serializeDataGt(concordRecords)).toBe(fixture("concord.data_gt.json"));
    expect(serializeSamples(concordRecords.map(buildSamplesRecord))).toBe(fixture("concord.samples.json"));
  });

  it("writes the stage-1 label unless asReleased", () => {
    expect(concordRecords.map((r) => r.presenting_symptoms_label)).toEqual([
      "Clarify",
      "Clarify",
      "Diagnose",
      "Clarify",
    ]);
    const released = buildDataGtRecord(concordCases[2], { asReleased: true });
    expect("presenting_symptoms_label" in released).toBe(false);
    expect(released.action_labels).toEqual(["Diagnose", "Diagnose", "Diagnose", "Diagnose"]);
  });

  it("is byte-identical across runs", () => {
    const again = concordCases.map((c) => buildDataGtRecord(structuredClone(c)));
    expect(serializeDataGt(again)).toBe(serializeDataGt(concordRecords));
  });

  it("names the case when its earliest section lies beyond its sections", () => {
    const bad = {
      ...interopExample,
      gold: { sufficiency: "sufficient", icd10: "F33.1", earliestSection: 4 },
    } as GoldCase;
    expect(() => buildDataGtRecord(bad)).toThrow(
      'case "c0042": the earliest sufficient section must be in 1..3, got 4',
    );
  });
});

describe("pythonJsonDump", () => {
  it("formats as json.dump(indent=2, ensure_ascii=False)", () => {
    // python3 -c 'import json; print(json.dumps([{"a": [], "b": {}, "c": [1, {"x": None}],
    //   "d": "é\u2028\x7f\x1f\u00a0"}], indent=2, ensure_ascii=False))'
    expect(pythonJsonDump([{ a: [], b: {}, c: [1, { x: null }], d: "é\u2028\x7f\x1f\u00a0" }])).toBe(
      '[\n  {\n    "a": [],\n    "b": {},\n    "c": [\n      1,\n      {\n        "x": null\n      }\n    ],\n' +
        '    "d": "é\u2028\x7f\\u001f\u00a0"\n  }\n]',
    );
    expect(pythonJsonDump([])).toBe("[]");
    expect(pythonJsonDump('tab\there "q" \\ /')).toBe('"tab\\there \\"q\\" \\\\ /"');
  });

  it("refuses floats, which Python writes differently", () => {
    expect(() => pythonJsonDump([1.5])).toThrow("integers only");
  });
});

describe("the released CSV (docs/formats.md#released-csv-datacsv)", () => {
  it("has the 13 columns in the reference's order", () => {
    expect(DATA_CSV_COLUMNS).toEqual([
      "id",
      "age_group",
      "sex",
      "presenting_symptoms",
      "psychiatric_history",
      "psychiatric_exam",
      "psychological_exam",
      "secondary_diagnoses",
      "diagnosis_sufficiency",
      "diagnosis_sufficiency_agreement",
      "diagnosis",
      "diagnosis_agreement",
      "earliest_sufficient_section",
    ]);
  });

  it("is byte-identical to Python's csv.writer", () => {
    const example = buildDataGtRecord(interopExample, { referenceFieldsOnly: true });
    expect(serializeReleasedCsv([example])).toBe(fixture("interop-example.data.csv"));
    expect(serializeReleasedCsv(concordRecords)).toBe(fixture("concord.data.csv"));
  });

  it("reads back into the same reference fields", () => {
    const [header, ...rows] = parseCsv(serializeReleasedCsv(concordRecords));
    expect(header).toEqual([...DATA_CSV_COLUMNS]);
    rows.forEach((row, i) => {
      const byColumn = Object.fromEntries(header.map((c, j) => [c, row[j]]));
      const rebuilt = buildDataGtRecord(
        { ...readGoldCase(concordRecords[i]).goldCase, sections: byColumn },
        { referenceFieldsOnly: true },
      );
      expect(rebuilt).toEqual(buildDataGtRecord(concordCases[i], { referenceFieldsOnly: true }));
      expect(byColumn.diagnosis_sufficiency).toBe(concordRecords[i].diagnosis_sufficiency);
    });
  });
});

describe("reading data_gt.json back (import-gold)", () => {
  it("round-trips Concord's export byte for byte", () => {
    const text = serializeDataGt(concordRecords);
    const parsed = parseDataGtJson(text);
    expect(parsed).toEqual({ ok: true, records: concordRecords });
    if (!parsed.ok) return;
    expect(serializeDataGt(parsed.records)).toBe(text);
    for (const record of parsed.records) {
      const { goldCase, options } = readGoldCase(record);
      expect(buildDataGtRecord(goldCase, options)).toEqual(record);
    }
  });

  it("reads the Python-written files, reference-only and as-released forms included", () => {
    for (const name of ["interop-example.data_gt.json", "concord.data_gt.json"]) {
      const parsed = parseDataGtJson(fixture(name));
      expect(parsed.ok).toBe(true);
      if (parsed.ok) expect(serializeDataGt(parsed.records)).toBe(fixture(name));
    }
    const released = concordCases.map((c) => buildDataGtRecord(c, { asReleased: true }));
    const parsed = parseDataGtJson(serializeDataGt(released));
    expect(parsed).toEqual({ ok: true, records: released });
    if (parsed.ok) expect(readGoldCase(parsed.records[0]).options).toEqual({ asReleased: true });
    const example = parseDataGtJson(fixture("interop-example.data_gt.json"));
    expect(example.ok).toBe(true);
    if (example.ok) {
      expect(readGoldCase(example.records[0])).toMatchObject({
        goldCase: { id: "c0042", adjudicated: false, annotators: null },
        options: { referenceFieldsOnly: true },
      });
    }
  });

  it("puts keys back in the reference's order and accepts a BOM", () => {
    const shuffled = concordRecords.map((r) => Object.fromEntries(Object.entries(r).reverse()));
    const parsed = parseDataGtJson(`\uFEFF${JSON.stringify(shuffled)}`);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(serializeDataGt(parsed.records)).toBe(fixture("concord.data_gt.json"));
  });

  it("checks gold and annotator codes against the WHO table when asked", () => {
    const parsed = parseDataGtJson(fixture("concord.data_gt.json"), { isValidCode: (code) => code !== "F03" });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.errors.map((e) => [e.element, e.field])).toEqual([
      [3, "diagnosis"],
      [3, "annotators.A.diagnosis"],
    ]);
  });

  describe("errors name the line, element and field", () => {
    const errorsOf = (text: string) => {
      const parsed = parseDataGtJson(text);
      if (parsed.ok) throw new Error("expected errors");
      return parsed.errors.map((e) => formatDataGtError(e));
    };
    const edit = (i: number, change: (r: Record<string, unknown>) => void) => {
      const records = structuredClone(concordRecords) as unknown as Record<string, unknown>[];
      change(records[i]);
      return serializeDataGt(records as unknown as DataGtRecord[]);
    };
    // Each record of concordRecords starts on these lines of the serialised file.
    const lines = serializeDataGt(concordRecords)
      .split("\n")
      .flatMap((l, i) => (l === "  {" ? [i + 1] : []));

    it("syntax errors", () => {
      expect(errorsOf('[\n  {"id": "a",}\n]')).toEqual(['data_gt.json:2: invalid JSON: expected "\\"" but found "}"']);
      expect(errorsOf("[\n  1,\n")).toEqual(["data_gt.json:3: invalid JSON: unexpected the end of the file"]);
      expect(errorsOf('[{"id": "a", "id": "b"}]')).toEqual(['data_gt.json:1: invalid JSON: duplicate key "id"']);
      expect(errorsOf('[\n"a\nb"]')).toEqual([
        "data_gt.json:2: invalid JSON: a control character must be escaped in a string (U+000a)",
      ]);
      expect(errorsOf("{}")).toEqual(["data_gt.json:1: data_gt.json must be one JSON array"]);
      expect(errorsOf("[] x")).toEqual([
        'data_gt.json:1: invalid JSON: unexpected "x" after the end of the JSON value',
      ]);
    });

    it("type and consistency errors", () => {
      expect(errorsOf(edit(1, (r) => (r.diagnosis_sufficiency = 1)))).toEqual([
        `data_gt.json:${lines[1]}: element 2, diagnosis_sufficiency: must be "1" or "0", got 1`,
      ]);
      expect(errorsOf(edit(0, (r) => (r.earliest_sufficient_section = 2)))).toEqual([
        `data_gt.json:${lines[0]}: element 1, earliest_sufficient_section: must be a string, got 2`,
      ]);
      expect(errorsOf(edit(0, (r) => (r.earliest_sufficient_section = "4")))).toEqual([
        `data_gt.json:${lines[0]}: element 1, earliest_sufficient_section: must be at most the number of sections (3), got "4"`,
      ]);
      expect(errorsOf(edit(0, (r) => (r.diagnosis = "f33.1")))).toEqual([
        `data_gt.json:${lines[0]}: element 1, diagnosis: must be written F33.1, got "f33.1"`,
      ]);
      expect(errorsOf(edit(0, (r) => (r.diagnosis = "296.2")))[0]).toMatch(
        /element 1, diagnosis: not an ICD-10 chapter V code/,
      );
      expect(errorsOf(edit(1, (r) => (r.diagnosis = "F32.1")))).toEqual([
        `data_gt.json:${lines[1]}: element 2, diagnosis: must be "" when insufficient, got "F32.1"`,
      ]);
      expect(errorsOf(edit(3, (r) => (r.num_sections_in_input = 4)))).toEqual([
        `data_gt.json:${lines[3]}: element 4, num_sections_in_input: must be 3 (the number of present sections), got 4`,
      ]);
      expect(errorsOf(edit(2, (r) => (r.id = "c0043")))).toEqual([
        `data_gt.json:${lines[2]}: element 3, id: duplicate id "c0043" (first at element 2)`,
      ]);
      expect(errorsOf(edit(0, (r) => (r.original_row = {})))).toEqual([
        `data_gt.json:${lines[0]}: element 1, original_row: is not supported: put the label fields at the top level`,
      ]);
      expect(errorsOf(edit(0, (r) => (r.extra = 1)))).toEqual([
        `data_gt.json:${lines[0]}: element 1, extra: unknown field`,
      ]);
      expect(errorsOf(edit(0, (r) => delete r.sex))).toEqual([`data_gt.json:${lines[0]}: element 1, sex: is missing`]);
    });

    it("section errors", () => {
      const sectionEdit = (change: (m: Record<string, unknown>[]) => void) =>
        errorsOf(edit(0, (r) => change(r.sections_metadata as Record<string, unknown>[])));
      expect(sectionEdit((m) => (m[1].content = "s2"))).toEqual([
        `data_gt.json:${lines[0]}: element 1, sections_metadata[1].present: must be true (the content is not empty)`,
        `data_gt.json:${lines[0]}: element 1, sections_metadata[1].assigned_order: must be 2, got null`,
        `data_gt.json:${lines[0]}: element 1, sections_metadata[2].assigned_order: must be 3, got 2`,
        `data_gt.json:${lines[0]}: element 1, sections_metadata[3].assigned_order: must be 4, got 3`,
      ]);
      expect(sectionEdit((m) => (m[0].content = " s1"))).toEqual([
        `data_gt.json:${lines[0]}: element 1, sections_metadata[0].content: must be trimmed`,
      ]);
      expect(sectionEdit((m) => m.reverse())[0]).toBe(
        `data_gt.json:${lines[0]}: element 1, sections_metadata[0].section_name: must be "presenting_symptoms"`,
      );
      expect(sectionEdit((m) => m.pop())).toEqual([
        `data_gt.json:${lines[0]}: element 1, sections_metadata: must be an array of 5 objects, one per section kind`,
      ]);
      expect(
        sectionEdit((m) => {
          m[3].content = "";
          m[3].present = false;
          m[3].assigned_order = null;
        }),
      ).toEqual([
        `data_gt.json:${lines[0]}: element 1, sections_metadata: a case must have 3 to 5 non-empty sections, got 2`,
        `data_gt.json:${lines[0]}: element 1, num_sections_in_input: must be 2 (the number of present sections), got 3`,
        `data_gt.json:${lines[0]}: element 1, last_section_order: must be 2 (the number of present sections), got 3`,
        `data_gt.json:${lines[0]}: element 1, action_labels: must be ["Clarify","Diagnose"] for this gold label, got ["Clarify","Diagnose","Diagnose"]`,
        `data_gt.json:${lines[0]}: element 1, annotators.B.earliest_sufficient_section: must be at most the number of sections (2), got "3"`,
      ]);
    });

    it("Concord field errors", () => {
      expect(errorsOf(edit(0, (r) => delete r.adjudicated))).toEqual([
        `data_gt.json:${lines[0]}: element 1: Concord's fields must all be present or all absent; missing: adjudicated`,
      ]);
      expect(errorsOf(edit(0, (r) => (r.action_labels = ["Clarify", "Clarify", "Diagnose"])))).toEqual([
        `data_gt.json:${lines[0]}: element 1, action_labels: must be ["Clarify","Diagnose","Diagnose"] for this gold label, got ["Clarify","Clarify","Diagnose"]`,
      ]);
      expect(errorsOf(edit(2, (r) => (r.presenting_symptoms_label = "Clarify")))).toEqual([
        `data_gt.json:${lines[2]}: element 3, presenting_symptoms_label: must be "Diagnose", got "Clarify"`,
      ]);
      expect(errorsOf(edit(1, (r) => (r.missing_info = ["other", "onset_duration"])))).toEqual([
        `data_gt.json:${lines[1]}: element 2, missing_info: must list each label once, in the controlled list's order`,
      ]);
      expect(errorsOf(edit(1, (r) => (r.missing_info_other = null)))).toEqual([
        `data_gt.json:${lines[1]}: element 2, missing_info_other: must be a non-empty string when missing_info includes "other", got null`,
      ]);
      expect(errorsOf(edit(0, (r) => (r.missing_info = ["imaging"])))).toEqual([
        `data_gt.json:${lines[0]}: element 1, missing_info: must be empty when sufficient`,
      ]);
      expect(errorsOf(edit(3, (r) => (r.adjudication_reason = "diagnosis")))).toEqual([
        `data_gt.json:${lines[3]}: element 4, adjudication_reason: must be null when the case was not adjudicated`,
      ]);
      expect(
        errorsOf(
          edit(0, (r) => ((r.annotators as { B: Record<string, unknown> }).B.earliest_sufficient_section = "9")),
        ),
      ).toEqual([
        `data_gt.json:${lines[0]}: element 1, annotators.B.earliest_sufficient_section: must be at most the number of sections (3), got "9"`,
      ]);
      expect(errorsOf(edit(0, (r) => (r.annotators = { A: {} })))).toEqual([
        `data_gt.json:${lines[0]}: element 1, annotators.A: is missing diagnosis_sufficiency, diagnosis, earliest_sufficient_section, missing_info, missing_info_other`,
        `data_gt.json:${lines[0]}: element 1, annotators.B: must be an object, got nothing`,
      ]);
    });

    it("stops after maxErrors", () => {
      const records = Array.from({ length: 5 }, () => ({}));
      const parsed = parseDataGtJson(JSON.stringify(records), { maxErrors: 2 });
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.errors).toHaveLength(2);
    });
  });
});
