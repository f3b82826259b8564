/**
 * The preparation report's figures and the COMET file's reader (docs/preparation.md, "The report" and "COMET
 * scores"): quartiles, histogram bins, the CSV's long form, and the file's refusals by line.
 */
import { describe, expect, it } from "vitest";
import { distribution, histogram, quantile } from "~/preparation/domain/report";
import { parseCometFile } from "~/preparation/domain/comet-file";

describe("report figures", () => {
  it("quartiles by linear interpolation (numpy's default)", () => {
    const xs = [1, 2, 3, 4, 10];
    expect(quantile(xs, 0.5)).toBe(3);
    expect(quantile(xs, 0.25)).toBe(2);
    expect(quantile(xs, 0.75)).toBe(4);
    expect(quantile([1, 2], 0.5)).toBe(1.5);
    expect(quantile([], 0.5)).toBeNull();
  });

  it("bins hold from ≤ v < to, and the last one its upper end", () => {
    const bins = histogram([0, 9.99, 10, 100, 55], 0, 100, 10);
    expect(bins).toHaveLength(10);
    expect(bins[0]).toEqual({ from: 0, to: 10, count: 2 });
    expect(bins[1]!.count).toBe(1);
    expect(bins[5]!.count).toBe(1);
    expect(bins[9]!.count).toBe(1);
  });

  it("COMET's bins cover its values in steps of 0.02", () => {
    const d = distribution("COMET", [0.861, 0.9, 0.873], 0.878);
    expect(d.bins[0]!.from).toBe(0.86);
    expect(d.bins.at(-1)!.to).toBe(0.9);
    expect(d.bins.reduce((a, b) => a + b.count, 0)).toBe(3);
    expect(d).toMatchObject({ n: 3, median: 0.873, project: 0.878 });
    expect(distribution("COMET", [], null)).toMatchObject({ n: 0, median: null, bins: [] });
  });
});

describe("the COMET file", () => {
  it("reads CSV and JSONL, a section by number or kind", () => {
    expect(parseCometFile("note_id,section,score\nro-1,0,0.81\nro-1,psychiatric_exam,-0.2\n", "csv")).toEqual({
      rows: [
        { line: 2, noteId: "ro-1", section: 0, score: 0.81 },
        { line: 3, noteId: "ro-1", section: "psychiatric_exam", score: -0.2 },
      ],
      errors: [],
    });
    expect(parseCometFile('{"note_id":"a","section":2,"score":0.5}\n', "jsonl").rows).toEqual([
      { line: 1, noteId: "a", section: 2, score: 0.5 },
    ]);
  });

  it("refuses a bad header, bad cells, unknown keys and duplicates by line, and then returns no rows", () => {
    expect(parseCometFile("note,section,score\nro-1,0,1\n", "csv").errors).toEqual([
      { line: 1, message: "the header must name the columns note_id, section, score; missing: note_id; unknown: note" },
    ]);
    const r = parseCometFile("note_id,section,score\nro-1,0,x\n,1,0.2\nro-1,-1,0.3\nro-2,0,0.1\nro-2,0,0.1\n", "csv");
    expect(r.rows).toEqual([]);
    expect(r.errors).toEqual([
      { line: 2, message: "score must be a number" },
      { line: 3, message: "note_id is empty" },
      { line: 4, message: "section must be a section's number (0, 1, …) or its kind" },
      { line: 6, message: 'note "ro-2" section 0 is given twice: on line 5 and on line 6' },
    ]);
    expect(
      parseCometFile('{"note_id":"a","section":0,"score":1,"x":2}\n[1]\n{bad\n', "jsonl").errors.map((e) => e.line),
    ).toEqual([1, 2, 3]);
  });
});
