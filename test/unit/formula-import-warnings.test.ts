/**
 * The imports warn about cells that look like spreadsheet formulas (docs/security.md, "Spreadsheet exports"): the
 * value is kept as given, and the admin learns that it will be quoted in the CSVs meant for spreadsheets. A list
 * item ("- low mood") or a negative number is not flagged.
 */
import { describe, expect, it } from "vitest";
import { parseCaseFile } from "../../app/annotation/domain/case-import";
import { parseReviewCsv } from "../../app/case-review/domain/case-review";
import { parseResponsesJsonl } from "../../app/judge-validation/domain/judge-import";
import { parseQuestionBankCsv } from "../../app/mentat/domain/mentat";
import { parseItemsFile } from "../../app/screening/domain/screening-import";

const FORMULA = '=HYPERLINK("http://evil.example","x")';
const DDE = "-2+3+cmd|' /C calc'!A0";
const formulaMessage = <W extends { message: string }>(warnings: W[]): W[] =>
  warnings.filter((w) => /spreadsheet formula/.test(w.message));

describe("formula-like cells on import", () => {
  it("notes (import)", () => {
    const line = (id: string, first: string) =>
      JSON.stringify({
        id,
        presenting_symptoms: first,
        psychiatric_history: "none",
        psychiatric_exam: "calm",
        psychological_exam: "",
        secondary_diagnoses: "",
      });
    const r = parseCaseFile([line("c1", FORMULA), line("c2", "- low mood, early waking")].join("\n"), {
      format: "jsonl",
      canonicalCode: (c) => c,
    });
    expect(r.errors).toEqual([]);
    expect(r.cases).toHaveLength(2);
    expect(r.cases[0]!.sections[0]!.content).toBe(FORMULA);
    const w = formulaMessage(r.warnings);
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ line: 1 });
    expect(w[0]!.message).toMatch(/c1.*presenting_symptoms/);
  });

  it("model responses (judge-import)", () => {
    const r = parseResponsesJsonl(
      [
        JSON.stringify({ id: "r1", model: "m", strategy: "s", step: 1, is_last_section: false, response: DDE }),
        JSON.stringify({
          id: "r2",
          model: "m",
          strategy: "s",
          step: 1,
          is_last_section: false,
          response: "-0.5 is not a formula",
        }),
      ].join("\n"),
      { format: "simple" },
    );
    expect(r.errors).toEqual([]);
    const w = formulaMessage(r.warnings);
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ line: 1 });
  });

  it("screening items (screening-import)", () => {
    const r = parseItemsFile(
      [JSON.stringify({ id: "i1", text: "@SUM(A1:A9)" }), JSON.stringify({ id: "i2", text: "plain" })].join("\n"),
      { format: "jsonl" },
    );
    expect(r.errors).toEqual([]);
    expect(formulaMessage(r.warnings).map((w) => w.line)).toEqual([1]);
  });

  it("question banks (mentat-import)", () => {
    const csv = [
      "id,domain,question,a,b,c,d,e,answer",
      `q1,triage,What next?,"${FORMULA.replace(/"/g, '""')}",b,c,d,e,a`,
      "q2,triage,What next?,a,b,c,d,e,a",
    ].join("\n");
    const r = parseQuestionBankCsv(csv);
    expect(r.errors).toEqual([]);
    expect(formulaMessage(r.warnings).map((w) => w.line)).toEqual([2]);
  });

  it("generated cases (casereview-import)", () => {
    const r = parseReviewCsv(["id,kind,text", `c1,case,"${DDE}"`, "c2,case,A 40-year-old teacher"].join("\n"));
    expect(r.errors).toEqual([]);
    expect(formulaMessage(r.warnings).map((w) => w.line)).toEqual([2]);
  });
});
