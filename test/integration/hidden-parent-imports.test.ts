/**
 * The imports that create their parent — screening-import of a new study, casereview-import of a new review set,
 * mentat-import of a new bank — leave room for other writers and stay all-or-nothing for readers
 * (docs/reliability.md, "Bulk imports"): the parent is created hidden, its rows are written in short transactions,
 * and the last transaction makes it visible. A reader on another connection, through the services' own queries, sees
 * nothing until then and everything after; a failed import leaves no row and no event; a killed one leaves a hidden
 * parent that the start's cleaning and the next import remove, after which the same import completes.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { importIntoNewScreeningStudy, SCREENING_STUDY_PARENT } from "../../app/screening/screening-import.server";
import { listScreeningStudies } from "../../app/screening/screening.server";
import { importReviewSet, listReviewSets, REVIEW_SET_PARENT } from "../../app/case-review/case-review.server";
import { importQuestionBank, listBanks, MENTAT_BANK_PARENT } from "../../app/mentat/banks.server";
import { cleanAbandonedRuns } from "../../app/platform/import-runs.server";
import { cleanHiddenParents, type HiddenParent } from "../../app/platform/hidden-parents.server";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { freshDb } from "../support/db";
import { enc, itemsJsonl, labelsCsv, SETTINGS, type CorpusItem } from "../support/screening";
import { runImportChild } from "../support/spawn-import";

let db: Db;
let path: string;
let cleanup: () => void;
beforeEach(() => ({ db, path, cleanup } = freshDb()));
afterEach(() => cleanup());

const raw = (sql: string) => db.$client.prepare(sql).pluck().get() as number;

interface Chunking {
  chunkBudgetMs: number;
  onChunk: (done: number) => void;
}

interface Kind {
  /** The child's KIND (test/support/hidden-import-child.ts). */
  kind: string;
  parent: HiddenParent;
  /** The parent's table and every table the import writes under it. */
  tables: string[];
  /** A file of `n` records, as the child reads it. */
  file(n: number): string;
  /** Imports `n` records into a new parent `name` in this process: the number of records written, or the refusal. */
  run(db: Db, name: string, n: number, chunking?: Chunking): number | string;
  /** What a reader sees of every parent: "name:records". */
  view(reader: Db): string[];
}

const corpusOf = (n: number): CorpusItem[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `x${i}`,
    label: i % 3 === 0 ? "relevant" : "not_relevant",
    truth: i % 3 === 0,
    text: `I have been sleeping badly for ${i} nights`,
  }));

const casesCsv = (n: number) =>
  "id,kind,case_type,diagnosis,seed_id,text\ns0,seed,I,Major depressive disorder,,Seed: low mood for three weeks.\n" +
  Array.from(
    { length: n - 1 },
    (_, i) => `c${i},case,I,Major depressive disorder,s0,"Case ${i}: low mood, early waking, no pleasure."`,
  ).join("\n") +
  "\n";

const questionsCsv = (n: number) =>
  "id,domain,question,he,she,they,a,b,c,d,e,answer,notes\n" +
  Array.from(
    { length: n },
    (_, i) =>
      `q${i},triage,"A patient (${i}) stopped sleeping for four days. What is the next step?",,,,Urgent evaluation,Routine visit,Sleep aid,Reassure,Wait,a,`,
  ).join("\n") +
  "\n";

const KINDS: Kind[] = [
  {
    kind: "screening",
    parent: SCREENING_STUDY_PARENT,
    tables: ["screening_studies", "screening_items", "screening_labels"],
    file: (n) => itemsJsonl(corpusOf(n)),
    run: (db, name, n, chunking) =>
      importIntoNewScreeningStudy(db, {
        name,
        settings: SETTINGS,
        items: { bytes: enc(itemsJsonl(corpusOf(n))), filename: "items.jsonl" },
        labels: { bytes: enc(labelsCsv(corpusOf(n))), filename: "labels.csv" },
        actorId: null,
        ...chunking,
      }).files[0]!.created,
    view: (reader) => listScreeningStudies(reader).map((s) => `${s.name}:${s.items}`),
  },
  {
    kind: "casereview",
    parent: REVIEW_SET_PARENT,
    tables: ["review_sets", "review_items"],
    file: casesCsv,
    run: (db, name, n, chunking) => {
      const r = importReviewSet(db, { setName: name, text: casesCsv(n), actorId: null, ...chunking });
      return r.ok ? r.created : r.errors[0]!.message;
    },
    view: (reader) => listReviewSets(reader).map((s) => `${s.name}:${s.numCases + s.numSeeds}`),
  },
  {
    kind: "mentat",
    parent: MENTAT_BANK_PARENT,
    tables: ["mentat_banks", "mentat_questions"],
    file: questionsCsv,
    run: (db, name, n, chunking) => {
      const r = importQuestionBank(db, { bankName: name, text: questionsCsv(n), actorId: null, ...chunking });
      return r.ok ? r.created : r.errors[0]!.message;
    },
    view: (reader) => listBanks(reader).map((b) => `${b.name}:${b.numQuestions}`),
  },
];

describe.each(KINDS)("$kind into a new parent", (k) => {
  it("writes in short transactions and shows readers nothing until it is complete, then all of it", () => {
    expect(k.run(db, "Old", 4)).toBe(4);
    const reader = openDatabase(path);
    const seen: string[][] = [];
    const written = k.run(db, "Bulk", 1500, { chunkBudgetMs: 1, onChunk: () => seen.push(k.view(reader)) });
    expect(written).toBe(1500);
    expect(seen.length).toBeGreaterThan(2);
    // Between chunks the rows were in the file (counted on the reader's connection) but no reader saw the parent.
    expect(reader.$client.prepare(`select count(*) from ${k.tables[1]}`).pluck().get()).toBe(1504);
    for (const view of seen) expect(view).toEqual(["Old:4"]);
    expect(k.view(reader)).toEqual(["Bulk:1500", "Old:4"]);
    expect(raw("select count(*) from import_runs")).toBe(0);
    expect(raw("select count(*) from events where import_run is not null")).toBe(k.kind === "screening" ? 0 : 1504);
    reader.$client.close();
  });

  it("refuses a second import of the same new parent while the first is still writing", () => {
    const other = openDatabase(path);
    let second: number | string | undefined;
    const first = k.run(db, "Bulk", 1500, {
      chunkBudgetMs: 1,
      onChunk: () => {
        try {
          second ??= k.run(other, "Bulk", 4);
        } catch (error) {
          second = (error as Error).message;
        }
      },
    });
    expect(first).toBe(1500);
    expect(second).toMatch(/^Another import into the same place is still running/);
    expect(k.view(db)).toEqual(["Bulk:1500"]);
    other.$client.close();
  });

  it("that fails half way leaves no row and no event", () => {
    const before = raw("select count(*) from events");
    let chunks = 0;
    expect(() =>
      k.run(db, "Bulk", 1500, {
        chunkBudgetMs: 1,
        onChunk: () => {
          if (++chunks === 3) throw new Error("disk gone");
        },
      }),
    ).toThrow("disk gone");
    for (const table of [...k.tables, "import_runs"]) expect(raw(`select count(*) from ${table}`), table).toBe(0);
    expect(raw("select count(*) from events")).toBe(before);
  });

  it("that is killed leaves nothing visible; the start's cleaning and the next import remove it, then it imports", async () => {
    const file = join(path, "..", `bulk-${k.kind}.${k.kind === "screening" ? "jsonl" : "csv"}`);
    writeFileSync(file, k.file(1500));
    const args = [k.kind, path, file, "Bulk", "1"];
    const killed = await runImportChild([...args, "kill-after-chunk"]);
    expect(killed.signal).toBe("SIGKILL");
    expect(killed.out).toMatch(/^chunk \d+\nchunk \d+\n$/);
    expect(raw(`select count(*) from ${k.tables[1]}`)).toBeGreaterThan(0);
    expect(k.view(db)).toEqual([]);
    // The server's start cleans the same way (startup.server.ts).
    expect(cleanAbandonedRuns(db)).toBe(1);
    expect(cleanHiddenParents(db, [k.parent])).toBe(1);
    for (const table of [...k.tables, "import_runs"]) expect(raw(`select count(*) from ${table}`), table).toBe(0);
    expect(raw("select count(*) from events")).toBe(0);
    // Killed again, then the next import (which cleans first) imports the whole file.
    await runImportChild([...args, "kill-after-chunk"]);
    const again = await runImportChild(args);
    expect(again.out).toMatch(/done\n$/);
    expect(k.view(db)).toEqual(["Bulk:1500"]);
    expect(raw(`select count(*) from ${k.tables[0]}`)).toBe(1);
  });
});
