/**
 * The chunked ratings reader of `agreement` (docs/statistics.md#at-scale): for every file it gives exactly
 * parseRatingsCsv's rows, errors and warnings, whatever the chunk boundaries, and it reads ordinary files without
 * falling back to the whole text.
 */
import { describe, expect, it } from "vitest";
import { codeRows, parseRatingsCsv, readCodedRatings, type CodedRatings } from "../../app/stats/ratings-csv";
import { buildCodedRatingTable, buildRatingTable, type RatingTable } from "../../app/stats/index";

function decoded(c: CodedRatings) {
  const rows = Array.from({ length: c.count }, (_, i) => ({
    item: c.items.at(c.rowItem[i])!,
    rater: c.raters[c.rowRater[i]],
    label: c.labels[c.rowLabel[i]],
    line: c.rowLine[i],
  }));
  const firstLines = c.labels.map((label, k) => [label, c.labelLine[k]]);
  return { rows, errors: c.errors, warnings: c.warnings, firstLines };
}

function chunked(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

const FILES: Record<string, string> = {
  plain: "item,rater,label\nn1,A,yes\nn1,B,no\nn2,A,yes\n",
  bom_crlf_blanks: "\uFEFFitem,rater,label\r\nn1, A ,yes\r\n\r\nn1,B,\tno \r\nn2,A,1\r\n",
  quoted: 'item,rater,label\nn1,A,"no, really"\n"n,2" , B ,"say ""hi"""\n',
  reordered_extra: "Label,note,RATER,Item\nyes,x,A,n1\nno,y,B,n1\n",
  duplicates: "item,rater,label\nn1,A,yes\nn1,A,yes\nn2,B,no\nn1,A,yes\n",
  conflict: "item,rater,label\nn1,A,yes\nn2,A,no\nn1,A,no\nn2,A,yes\n",
  empty_fields: "item,rater,label\n,A,yes\nn1,,no\nn1,A,\nn2,B,yes\n",
  short_rows: "item,rater,label\nn1,A\nn2,B,yes\n",
  only_empty_labels: "item,rater,label\nn1,A,\n",
  no_final_newline: "item,rater,label\nn1,A,yes\nn1,B,yes",
  // Ids outside ASCII (an astral character is two UTF-16 units): the compact item store gives them back whole.
  unicode: "item,rater,label\nnöte-é,A,yes\n😀 x,B,no\n😀 x,A,yes\nnöte-é,B,yes\n",
  // These need the full CSV parser: the reader must hand over and still answer the same.
  multiline_quote: 'item,rater,label\nn1,A,"line one\nline two"\nn1,B,yes\n',
  stray_quote: 'item,rater,label\nn1,A,ye"s\n',
  bare_cr: "item,rater,label\rn1,A,yes\rn1,B,no\r",
  blank_line: "item,rater,label\n   \nn1,A,yes\n",
  empty: "",
  header_only: "item,rater,label\n",
  missing_column: "item,coder,label\nn1,A,yes\n",
  unclosed: 'item,rater,label\nn1,A,"yes\n',
};

describe("readCodedRatings", () => {
  for (const [name, text] of Object.entries(FILES)) {
    it(`reads ${name} as parseRatingsCsv does, at every chunk size`, () => {
      const expected = decoded(codeRows(parseRatingsCsv(text)));
      for (const size of [1, 2, 3, 5, 8, 13, text.length || 1]) {
        expect(decoded(readCodedRatings(chunked(text, size), () => text))).toEqual(expected);
      }
    });
  }

  it("reads ordinary files without the whole text", () => {
    for (const name of ["plain", "bom_crlf_blanks", "quoted", "duplicates", "conflict", "empty_fields", "short_rows"]) {
      const text = FILES[name];
      const coded = readCodedRatings(chunked(text, 4), () => {
        throw new Error(`${name}: fell back to the full parser`);
      });
      expect(coded.count + coded.errors.length).toBeGreaterThan(0);
    }
  });

  it("agrees with parseRatingsCsv on a large random file, codes included", () => {
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const lines = ["item,rater,label"];
    for (let i = 0; i < 20_000; i++) {
      const item = `it-${Math.floor(random() * 5000)}`;
      const rater = `r${Math.floor(random() * 7)}`;
      lines.push(`${item},${rater},${random() < 0.02 ? "" : Math.floor(random() * 3)}`);
    }
    // Conflicting duplicates are likely here; keep only the first rating of each pair so the file is valid.
    const seen = new Set<string>();
    const text = lines
      .filter(
        (l, i) =>
          i === 0 ||
          (seen.has(l.split(",").slice(0, 2).join()) ? false : (seen.add(l.split(",").slice(0, 2).join()), true)),
      )
      .join("\n");
    const expected = parseRatingsCsv(text);
    const coded = readCodedRatings(chunked(text, 4096), () => text);
    expect(decoded(coded)).toEqual(decoded(codeRows(expected)));
    // The table from codes is the table from rows.
    // (The coded reader keeps item ids compact: its table names them by `at`, the rows' table by an array.)
    const named = (t: RatingTable) => ({
      ...t,
      items: Array.from({ length: t.items.length }, (_, i) => t.items.at(i)),
    });
    expect(named(buildCodedRatingTable(coded))).toEqual(named(buildRatingTable(expected.rows)));
    expect(coded.items.at(-1)).toBeUndefined();
    expect(coded.items.at(coded.items.length)).toBeUndefined();
  });
});

describe("buildCodedRatingTable", () => {
  it("rejects a label outside the given categories, as buildRatingTable does", () => {
    const coded = readCodedRatings(["item,rater,label\nn1,A,yes\nn1,B,maybe\n"], () => "");
    expect(() => buildCodedRatingTable(coded, { categories: ["yes", "no"] })).toThrow(
      'buildRatingTable: label "maybe" is not one of the given categories',
    );
  });
});
