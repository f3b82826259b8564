/**
 * Psychological test scores generalised into ranges (docs/preparation.md, "Test scores"): a table per test of the
 * names it is written under and its score ranges; a score becomes the range it falls in ("18-23"). The default table
 * covers the tests the Safe-Psych translation prompt names; the source of each test's ranges is in
 * docs/preparation.md. A project may replace it with its own (`parseScoreTable`).
 */
import { parsePythonCsv } from "../../formats/csv-text";

export interface ScoreRange {
  from: number;
  to: number;
}

export interface TestRanges {
  /** The name the table knows the test by. */
  test: string;
  /** Other ways the notes write it ("HDRS" for "HAM-D", "QI" for "IQ"). */
  aliases: string[];
  /** Its ranges, in order, not overlapping. */
  ranges: ScoreRange[];
}

export type ScoreTable = readonly TestRanges[];

const r = (...bounds: [number, number][]): ScoreRange[] => bounds.map(([from, to]) => ({ from, to }));

/** The default table; each test's source is listed in docs/preparation.md, "Test scores". */
export const DEFAULT_SCORE_TABLE: ScoreTable = [
  {
    test: "MMSE",
    aliases: ["Mini-Mental", "MMS"],
    ranges: r([0, 9], [10, 18], [19, 23], [24, 30]),
  },
  { test: "MADRS", aliases: ["MDRS"], ranges: r([0, 6], [7, 19], [20, 34], [35, 60]) },
  { test: "PANSS", aliases: [], ranges: r([30, 57], [58, 74], [75, 94], [95, 115], [116, 210]) },
  {
    test: "GAF",
    aliases: ["GAFS"],
    ranges: r([1, 10], [11, 20], [21, 30], [31, 40], [41, 50], [51, 60], [61, 70], [71, 80], [81, 90], [91, 100]),
  },
  { test: "IQ", aliases: ["QI"], ranges: r([0, 69], [70, 84], [85, 115], [116, 130], [131, 200]) },
  { test: "BDI", aliases: ["BDI-II", "Beck"], ranges: r([0, 13], [14, 19], [20, 28], [29, 63]) },
  { test: "HAM-D", aliases: ["HDRS", "HAMD", "HAM D", "Hamilton-D"], ranges: r([0, 7], [8, 16], [17, 23], [24, 52]) },
  { test: "HAM-A", aliases: ["HRSA", "HAMA", "HAM A", "Hamilton-A"], ranges: r([0, 17], [18, 24], [25, 30], [31, 56]) },
  { test: "SPMSQ", aliases: ["Pfeiffer"], ranges: r([0, 2], [3, 4], [5, 7], [8, 10]) },
  { test: "GDS", aliases: ["GDS-15"], ranges: r([0, 4], [5, 8], [9, 11], [12, 15]) },
  { test: "YMRS", aliases: [], ranges: r([0, 12], [13, 19], [20, 25], [26, 60]) },
  { test: "SCL-90", aliases: ["SCL 90", "SCL90", "scl 90"], ranges: r([0, 89], [90, 179], [180, 269], [270, 360]) },
];

/** The range `score` falls in, written "from-to", or null when no range of the test holds it. */
export function scoreRangeOf(test: TestRanges, score: number): string | null {
  if (!Number.isFinite(score)) return null;
  const range = test.ranges.find((x) => score >= x.from && score <= x.to);
  return range ? `${range.from}-${range.to}` : null;
}

export interface TableIssue {
  line: number;
  message: string;
}

/**
 * A score table from CSV with the columns `test`, `aliases` (separated by `|`, may be empty), `from` and `to`: one
 * row per range, the rows of a test together. Every bad row is reported by its line; nothing is returned then.
 */
export function parseScoreTable(text: string): { table: TestRanges[]; errors: TableIssue[] } {
  const errors: TableIssue[] = [];
  let parsed;
  try {
    parsed = parsePythonCsv(text.replace(/^\uFEFF/, ""));
  } catch (e) {
    return { table: [], errors: [{ line: 0, message: `cannot be read as CSV: ${(e as Error).message}` }] };
  }
  const [header, ...rows] = parsed;
  const columns = (header ?? []).map((c) => c.trim().toLowerCase());
  const missing = ["test", "aliases", "from", "to"].filter((c) => !columns.includes(c));
  if (missing.length) return { table: [], errors: [{ line: 1, message: `missing column ${missing.join(", ")}.` }] };
  const at = (row: string[], c: string) => (row[columns.indexOf(c)] ?? "").trim();
  const byTest = new Map<string, TestRanges>();
  rows.forEach((row, i) => {
    const line = i + 2;
    if (row.every((c) => c.trim() === "")) return;
    const test = at(row, "test");
    const from = Number(at(row, "from"));
    const to = Number(at(row, "to"));
    if (!test) return errors.push({ line, message: "the test has no name." });
    if (at(row, "from") === "" || at(row, "to") === "" || !Number.isFinite(from) || !Number.isFinite(to))
      return errors.push({ line, message: `(${test}) "from" and "to" must be numbers.` });
    if (from > to) return errors.push({ line, message: `(${test}) the range ${from}-${to} is empty: from > to.` });
    const entry = byTest.get(test) ?? { test, aliases: [], ranges: [] };
    for (const alias of at(row, "aliases")
      .split("|")
      .map((a) => a.trim()))
      if (alias && !entry.aliases.includes(alias)) entry.aliases.push(alias);
    const overlap = entry.ranges.find((x) => from <= x.to && x.from <= to);
    if (overlap)
      return errors.push({
        line,
        message: `(${test}) the range ${from}-${to} overlaps ${overlap.from}-${overlap.to}.`,
      });
    entry.ranges.push({ from, to });
    byTest.set(test, entry);
  });
  if (!errors.length && byTest.size === 0) errors.push({ line: 0, message: "the table has no rows." });
  const table = [...byTest.values()].map((t) => ({ ...t, ranges: [...t.ranges].sort((a, b) => a.from - b.from) }));
  return errors.length ? { table: [], errors } : { table, errors };
}
