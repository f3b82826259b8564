/**
 * Every CSV upload reads a file the same way (docs/formats.md, "CSV"): one reader, app/formats/csv.ts, with one set
 * of csv-parse options. For each kind of upload the same free-text cell is written four ways — with a bare quote
 * inside it, after a BOM, with CRLF line ends, and quoted across two lines — and each upload must accept the file and
 * read the cell's text as written.
 */
import { describe, expect, it } from "vitest";
import { parseCaseFile } from "../../app/annotation/domain/case-import";
import { SECTION_KINDS } from "../../app/annotation/domain/sections";
import { parseReviewCsv } from "../../app/case-review/domain/case-review";
import { parseJudgeLabelsCsv } from "../../app/judge-validation/domain/judge-labels-csv";
import { parseQuestionBankCsv } from "../../app/mentat/domain/mentat";
import { parseItemsFile } from "../../app/screening/domain/screening-import";

/** Each upload: its header, a row with the free-text cell at `CELL`, and how it is parsed into errors and a result. */
const UPLOADS: Record<string, { header: string; row: string; parse: (text: string) => { errors: unknown[] } }> = {
  "case import": {
    header: `id,${SECTION_KINDS.join(",")}`,
    row: "c1,CELL,history,exam,tests,comorbidity",
    parse: (text) => parseCaseFile(text, { format: "csv", canonicalCode: () => null }),
  },
  "screening items": {
    header: "id,text",
    row: "a,CELL",
    parse: (text) => parseItemsFile(text, { format: "csv" }),
  },
  "judge-validation labels": {
    header: "response_id,rater,primary_answer,info_request,note",
    row: "r1,CELL,committed,none,",
    parse: (text) => parseJudgeLabelsCsv(text),
  },
  "MENTAT question bank": {
    header: "id,domain,question,a,b,c,d,e,answer",
    row: "q1,triage,CELL,w,x,y,z,v,a",
    parse: (text) => parseQuestionBankCsv(text),
  },
  "case-review set": {
    header: "id,kind,case_type,text",
    row: "s01,seed,I,CELL",
    parse: (text) => parseReviewCsv(text),
  },
};

/** The four ways of writing the cell: the file's text and the cell's text the upload must read. */
const VARIANTS: Record<string, { file: (header: string, row: string) => string; cell: string }> = {
  "a bare quote": { file: (h, r) => `${h}\n${r.replace("CELL", 'He said "no" twice')}\n`, cell: 'He said "no" twice' },
  "a BOM": { file: (h, r) => `\uFEFF${h}\n${r.replace("CELL", "Plain text")}\n`, cell: "Plain text" },
  "CRLF line ends": { file: (h, r) => `${h}\r\n${r.replace("CELL", "Plain text")}\r\n`, cell: "Plain text" },
  "a quoted newline": {
    file: (h, r) => `${h}\n${r.replace("CELL", '"First line\nsecond line"')}\n`,
    cell: "First line\nsecond line",
  },
};

describe("every CSV upload reads a cell the same way", () => {
  for (const [upload, { header, row, parse }] of Object.entries(UPLOADS)) {
    for (const [variant, { file, cell }] of Object.entries(VARIANTS)) {
      it(`${upload}: ${variant}`, () => {
        const result = parse(file(header, row));
        expect(result.errors).toEqual([]);
        expect(JSON.stringify(result)).toContain(JSON.stringify(cell).slice(1, -1));
      });
    }
  }
});
