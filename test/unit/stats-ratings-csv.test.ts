import { describe, expect, it } from "vitest";
import { parseRatingsCsv } from "../../app/stats/ratings-csv";

describe("parseRatingsCsv", () => {
  it("reads item,rater,label rows with their line numbers, trimming fields and ignoring blank lines", () => {
    const result = parseRatingsCsv('\uFEFFitem,rater,label\nn1, A ,yes\n\nn1,B,"no, really"\n');
    expect(result.errors).toEqual([]);
    expect(result.rows).toEqual([
      { item: "n1", rater: "A", label: "yes", line: 2 },
      { item: "n1", rater: "B", label: "no, really", line: 4 },
    ]);
  });
  it("accepts the columns in any order and in any case, and ignores extra columns", () => {
    const result = parseRatingsCsv("Label,note,RATER,Item\nyes,x,A,n1\n");
    expect(result.rows).toEqual([{ item: "n1", rater: "A", label: "yes", line: 2 }]);
  });
  it("reports an empty file, a header without rows and missing columns at their line", () => {
    expect(parseRatingsCsv("").errors).toEqual([
      { line: 1, message: "the file is empty; expected a header item,rater,label" },
    ]);
    expect(parseRatingsCsv("  \n\n").errors[0].line).toBe(1);
    expect(parseRatingsCsv("item,rater,label\n").errors).toEqual([
      { line: 1, message: "no ratings: the file has a header but no rows" },
    ]);
    expect(parseRatingsCsv("item,coder,label\nn1,A,yes\n").errors).toEqual([
      { line: 1, message: "missing column rater: the header must name item, rater and label" },
    ]);
    expect(parseRatingsCsv("id,label\n").errors[0].message).toBe(
      "missing columns item, rater: the header must name item, rater and label",
    );
  });
  it("rejects a pair labelled twice differently, naming both lines", () => {
    const result = parseRatingsCsv("item,rater,label\nn1,A,yes\nn2,A,no\nn1,A,no\n");
    expect(result.rows).toEqual([]);
    expect(result.errors).toEqual([
      { line: 4, message: 'item "n1" rater "A" is labelled "no" here but "yes" on line 2' },
    ]);
  });
  it("keeps an identical duplicate once, with a warning", () => {
    const result = parseRatingsCsv("item,rater,label\nn1,A,yes\nn1,A,yes\n");
    expect(result.rows).toHaveLength(1);
    expect(result.warnings).toEqual([{ line: 3, message: 'duplicate of line 2 (item "n1", rater "A"): kept once' }]);
  });
  it("treats an empty label as a missing rating (warning) and rejects an empty item or rater", () => {
    const result = parseRatingsCsv("item,rater,label\nn1,A,\nn1,B,yes\n");
    expect(result.rows).toEqual([{ item: "n1", rater: "B", label: "yes", line: 3 }]);
    expect(result.warnings[0]).toEqual({
      line: 2,
      message: 'empty label for item "n1", rater "A": treated as a missing rating',
    });
    expect(parseRatingsCsv("item,rater,label\n,A,yes\nn1,,no\n").errors).toEqual([
      { line: 2, message: "empty item" },
      { line: 3, message: "empty rater" },
    ]);
  });
  it("reports short rows and malformed CSV with a line number", () => {
    expect(parseRatingsCsv("item,rater,label\nn1,A\n").errors).toEqual([
      { line: 2, message: "expected 3 fields, found 2" },
    ]);
    const broken = parseRatingsCsv('item,rater,label\nn1,A,yes\nn2,A,"no\n');
    expect(broken.errors).toHaveLength(1);
    expect(broken.errors[0].line).toBe(3); // where the unclosed quote opens
    expect(broken.errors[0].message).toMatch(/^not valid CSV: /);
  });
});
