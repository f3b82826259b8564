/**
 * Spreadsheet formula injection (docs/security.md, "Spreadsheet exports"): a cell that starts with = + - @, a tab or
 * a carriage return is read by Excel, LibreOffice and Google Sheets as a formula, and model output, note text and
 * ids flow into the CSVs meant for spreadsheets. OWASP's recipe: such a cell gets a leading single quote, which the
 * spreadsheet shows as text. Plain numbers (a negative κ) are left as they are; the reading side undoes the quote.
 */
import { describe, expect, it } from "vitest";
import { fromSpreadsheetCell, looksLikeFormula, spreadsheetCell } from "../../app/formats/spreadsheet-safe";

describe("spreadsheetCell", () => {
  it.each([
    ['=HYPERLINK("http://evil.example","click")', `'=HYPERLINK("http://evil.example","click")`],
    ["+cmd|' /C calc'!A0", "+cmd|' /C calc'!A0".replace(/^/, "'")],
    ["-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"],
    ["@SUM(A1:A9)", "'@SUM(A1:A9)"],
    ["\t=1+1", "'\t=1+1"],
    ["\r=1+1", "'\r=1+1"],
    ["- low mood, early waking", "'- low mood, early waking"],
    ["-", "'-"],
    ["'=1+1", "''=1+1"],
  ])("quotes %j", (input, expected) => {
    expect(spreadsheetCell(input)).toBe(expected);
  });

  it.each(["", "ann_0001", "F32.1", "relevant", "-0.25", "+3", "-1e-5", "0.5", "12", "a=b", "x@y.z", "'quoted'"])(
    "leaves %j as it is",
    (input) => {
      expect(spreadsheetCell(input)).toBe(input);
    },
  );

  it("is undone by fromSpreadsheetCell for every value", () => {
    for (const v of ["=1+1", "'=1+1", "''=1", "-x", "-0.5", "plain", "'plain", "\tx", "", "@a", "'"])
      expect(fromSpreadsheetCell(spreadsheetCell(v))).toBe(v);
  });
});

describe("looksLikeFormula (import warnings)", () => {
  it.each(["=1+1", '=HYPERLINK("x")', "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", "@SUM(A1)", " =1+1"])(
    "flags %j",
    (v) => expect(looksLikeFormula(v)).toBe(true),
  );
  it.each(["- low mood (since May)", "-0.5", "plain text", "", "e-mail: x@y.z", "+3"])("does not flag %j", (v) =>
    expect(looksLikeFormula(v)).toBe(false),
  );
});
