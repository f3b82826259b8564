/**
 * Every CSV reader reports the physical line of a bad row, also after a quoted cell holding a CRLF (csv-parse's own
 * `info.lines` counts that CRLF as two lines). Each file below has a header on line 1, a row whose quoted cell spans
 * lines 2–3 with a CRLF inside, and a bad row on line 4; the second group puts a CSV syntax error on line 4.
 */
import { describe, expect, it } from "vitest";
import { parseCaseFile } from "../../app/annotation/domain/case-import";
import { SECTION_KINDS } from "../../app/annotation/domain/sections";
import { parseReviewCsv } from "../../app/case-review/domain/case-review";
import { readCsvRecords } from "../../app/expert-panel/domain/expert-csv";
import { readCsv } from "../../app/formats/csv";
import { CsvSyntaxError, parsePythonCsv } from "../../app/formats/csv-text";
import { LineCounter } from "../../app/formats/lines";
import { parseJudgeLabelsCsv } from "../../app/judge-validation/domain/judge-labels-csv";
import { parseQuestionBankCsv } from "../../app/mentat/domain/mentat";
import { parseItemsFile, parseLabelsFile, parseTiersFile } from "../../app/screening/domain/screening-import";
import { parseRatingsCsv } from "../../app/stats/ratings-csv";

/** Header, a row with a quoted CRLF (lines 2–3), then `bad` on line 4, every line ending in CRLF. */
const file = (header: string, good: string, bad: string) => `${header}\r\n${good}\r\n${bad}\r\n`;
const multiline = '"first line\r\nsecond line"';
const linesOf = (issues: readonly { line: number }[]) => issues.map((i) => i.line);

describe("a bad row on line 4 after a quoted CRLF", () => {
  it("the import reader (formats/csv.ts)", () => {
    const read = readCsv(file("a,b", `x,${multiline}`, "y,z"));
    expect("records" in read && read.records.map((r) => r.line)).toEqual([1, 2, 4]);
  });

  it("case import", () => {
    const r = parseCaseFile(file(`id,${SECTION_KINDS.join(",")}`, `c1,${multiline},b,c,d,e`, "c2,only one,,,,"), {
      format: "csv",
      canonicalCode: () => null,
    });
    expect(r.errors).toEqual([{ line: 4, message: "(id c2) 1 non-empty section; a case needs 3 to 5." }]);
  });

  it("screening items, labels and tiers", () => {
    const items = parseItemsFile(file("id,text", `a,${multiline}`, "b,"), { format: "csv" });
    expect(linesOf(items.errors)).toEqual([4]);
    const known = new Set(["a"]);
    const labels = parseLabelsFile(file("id,label,rationale", `a,relevant,${multiline}`, "b,relevant,"), {
      format: "csv",
      knownIds: known,
      vocabulary: [],
    });
    expect(labels.errors).toEqual([{ line: 4, message: 'no item "b" in the study: import the items first.' }]);
    const tiers = parseTiersFile(file("id,tier,rationale", `a,clear,${multiline}`, "a,maybe,"), {
      format: "csv",
      ineligible: () => null,
    });
    expect(tiers.errors).toEqual([{ line: 4, message: 'duplicate id "a" (first on line 2).' }]);
  });

  it("judge-validation labels", () => {
    const r = parseJudgeLabelsCsv(
      file(
        "response_id,rater,primary_answer,info_request,note",
        `r1,A,committed,none,${multiline}`,
        "r2,,committed,none,",
      ),
    );
    expect(r.errors).toEqual([{ line: 4, message: "empty rater" }]);
  });

  it("expert question banks and case-review sets", () => {
    const bank = parseQuestionBankCsv(
      file("id,domain,question,a,b,c,d,e,answer", `q1,triage,${multiline},w,x,y,z,v,a`, "q2,triage,Q,w,x,y,z,v,z"),
    );
    expect(bank.errors).toEqual([{ line: 4, message: 'the answer "z" must be one of the letters a–e.' }]);
    const review = parseReviewCsv(file("id,text", `c1,${multiline}`, "c1,again"));
    expect(review.errors).toEqual([{ line: 4, message: 'the id "c1" is already used on line 2.' }]);
    const records = readCsvRecords(file("id,text", `c1,${multiline}`, "c2,x"));
    expect("rows" in records && records.rows.map((r) => r.line)).toEqual([2, 4]);
  });

  it("ratings", () => {
    const r = parseRatingsCsv(file("item,rater,label", `n1,A,${multiline}`, "n2,A"));
    expect(r.errors).toEqual([{ line: 4, message: "expected 3 fields, found 2" }]);
  });

  it("the Python-csv reader (formats/csv-text.ts)", () => {
    expect(() => parsePythonCsv(file("a,b", `x,${multiline}`, '"y"z,w'))).toThrow(
      new CsvSyntaxError("unexpected character after a closing quote", 4),
    );
  });
});

describe("a CSV syntax error on line 4 after a quoted CRLF", () => {
  const unclosed = file("id,text", `a,${multiline}`, 'b,"never closed');

  it("the import reader names the line in its message too", () => {
    const read = readCsv(unclosed);
    expect(read).toEqual({
      error: {
        line: 4,
        message: "Quote Not Closed: the parsing is finished with an opening quote at line 4",
        reason: "Quote Not Closed: the parsing is finished with an opening quote at line 4",
      },
    });
    // A bare quote is text for every upload (test/unit/csv-uploads.test.ts), never an error.
    const bare = readCsv(file("id,text", `a,${multiline}`, 'b,x"y'));
    expect("records" in bare && bare.records.map((r) => r.cells)).toEqual([
      ["id", "text"],
      ["a", "first line\r\nsecond line"],
      ["b", 'x"y'],
    ]);
  });

  it("every reader reports it on line 4", () => {
    expect(linesOf(parseCaseFile(unclosed, { format: "csv", canonicalCode: () => null }).errors)).toEqual([4]);
    expect(linesOf(parseItemsFile(unclosed, { format: "csv" }).errors)).toEqual([4]);
    expect(linesOf(parseJudgeLabelsCsv(unclosed).errors)).toEqual([4]);
    expect(linesOf(parseQuestionBankCsv(unclosed).errors)).toEqual([4]);
    expect(linesOf(parseReviewCsv(unclosed).errors)).toEqual([4]);
    expect(linesOf(parseRatingsCsv(unclosed).errors)).toEqual([4]);
    expect(() => parsePythonCsv(unclosed)).toThrow(new CsvSyntaxError("unterminated quoted field", 4));
  });
});

describe("the import reader", () => {
  it("skips blank lines and a BOM, and ends records at LF, CRLF or a lone CR alike", () => {
    const read = readCsv('\uFEFFa,b\r\n\r\nc,"d\ne"\rf,g\n\n\nh,i');
    expect(read).toEqual({
      records: [
        { line: 1, cells: ["a", "b"] },
        { line: 3, cells: ["c", "d\ne"] },
        { line: 5, cells: ["f", "g"] },
        { line: 8, cells: ["h", "i"] },
      ],
    });
  });

  it("counts lines over UTF-8 bytes (csv-parse's offsets) and over text alike", () => {
    const text = 'é,\u{1F600}\r\n"x\r\ny"\rz';
    const bytes = new TextEncoder().encode(text);
    expect(LineCounter.ofBytes(bytes).lineAt(bytes.length)).toBe(4);
    expect(LineCounter.ofText(text).lineAt(text.length)).toBe(4);
  });
});
