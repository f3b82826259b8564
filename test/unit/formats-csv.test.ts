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
import { CsvRecordStream, readCsv } from "../../app/formats/csv";
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

describe("the streamed import reader (CsvRecordStream)", () => {
  /** mulberry32, so that a failure names a seed that replays it. */
  const prng = (seed: number) => {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  };
  /** Reads `bytes` cut into the given pieces; records and error as readCsv gives them. */
  const streamed = (bytes: Uint8Array, cuts: number[], options: { relaxQuotes?: boolean; trim?: boolean }) => {
    const records: { line: number; cells: string[] }[] = [];
    const stream = new CsvRecordStream((r) => records.push(r), options);
    let at = 0;
    for (const cut of [...cuts, bytes.length]) {
      stream.write(bytes.subarray(at, cut));
      at = cut;
    }
    stream.finish();
    return stream.error ? { error: stream.error } : { records };
  };
  /** Mostly well-formed CSV (quoted cells with commas, doubled quotes and line ends, blank lines, CR, LF, CRLF), with some malformed quoting. */
  const randomCsv = (random: () => number, malformed: boolean) => {
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
    const ends = ["\n", "\r\n", "\r"];
    let text = "";
    const rows = 1 + Math.floor(random() * 12);
    for (let r = 0; r < rows; r++) {
      const cells = Math.floor(random() * 5);
      const row: string[] = [];
      for (let c = 0; c <= cells; c++) {
        const parts = Array.from({ length: Math.floor(random() * 4) }, () =>
          pick(["a", "é", "\u{1F600}", " ", ",", '"', "\n", "\r\n", "\r", "word"]),
        );
        const body = parts.join("");
        if (random() < 0.5 || /[",\r\n]/.test(body)) row.push(`"${body.replace(/"/g, '""')}"`);
        else row.push(body);
        if (malformed && random() < 0.08) row[row.length - 1] = pick(['a"b', '"a"b', '"open', ' "x"', '"a" ']);
      }
      text += row.join(",") + (r === rows - 1 && random() < 0.3 ? "" : pick(ends));
      if (random() < 0.15) text += pick(ends);
    }
    return text;
  };

  it("reads every file as readCsv does, wherever the file is cut (random files, with and without bad quoting)", () => {
    for (let seed = 1; seed <= 1000; seed++) {
      const random = prng(seed);
      const text = randomCsv(random, seed % 3 === 0);
      const bytes = new TextEncoder().encode(text);
      const cuts = Array.from({ length: Math.floor(random() * 4) }, () =>
        Math.floor(random() * (bytes.length + 1)),
      ).sort((a, b) => a - b);
      for (const options of [{}, { trim: true }]) {
        const expected = readCsv(text, options);
        expect({ seed, options, read: streamed(bytes, cuts, options) }).toEqual({ seed, options, read: expected });
      }
    }
  }, 60_000);

  it("hands a bad record, and everything after it, to csv-parse: its line and message as readCsv gives them", () => {
    // A quote opened and never closed: an error even though a bare quote inside a cell is read as text.
    const text = 'a,b\r\n"x\r\ny",z\r\nok,"fine"\r\nbad,"q"w\r\nlater,"open\r\n';
    const bytes = new TextEncoder().encode(text);
    expect(streamed(bytes, [7, 20], {})).toEqual(readCsv(text));
    expect(streamed(bytes, [7, 20], { trim: true })).toEqual(readCsv(text, { trim: true }));
    expect("error" in readCsv(text)).toBe(true);
  });
});
