/**
 * casereview-import and mentat-import into an EXISTING review set or question bank leave room for other writers and
 * stay all-or-nothing for readers (docs/reliability.md, "Bulk imports"): the new items (and their "create" events)
 * are written in the import run's short transactions, each carrying the run's id, which hides it from every reader;
 * the last transaction re-checks the guard (a changed item that has reviews or ratings now refuses the import) and
 * writes the changed items. A reader on another connection, through every public service function that reads the
 * items (summaries, item lists, the expert's list and item page, panel progress, report, annotation rows, the
 * guidelines of an item), sees the old state between chunks and the whole import after; a failed import leaves
 * the old state; a killed one leaves the old state, cleaned by the start's cleaning and by the next import.
 *
 * The files: the existing parent holds 4 items (a seed and three cases; four questions); the second file changes the
 * first item's text, keeps the other three and adds 1,500 new ones.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  addReviewRaters,
  getRaterItem,
  getReviewReport,
  importReviewSet,
  listRaterItems,
  listReviewItems,
  listReviewPanel,
  listReviewSets,
  saveReview,
} from "../../app/case-review/case-review.server";
import { importQuestionBank, listBanks } from "../../app/mentat/banks.server";
import { addBankRaters, listBankPanel } from "../../app/mentat/panel.server";
import { listBankQuestions, loadQuestions } from "../../app/mentat/questions.server";
import { getRaterQuestion, listRaterQuestions, saveOptionRating } from "../../app/mentat/ratings.server";
import { bankAnnotationRows } from "../../app/mentat/fits.server";
import { guidelinesForItem } from "../../app/guidelines/guidelines.server";
import { createUser } from "../../app/accounts/users.server";
import { cleanAbandonedRuns } from "../../app/platform/import-runs.server";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { freshDb } from "../support/db";
import { runImportChild } from "../support/spawn-import";

let db: Db;
let path: string;
let cleanup: () => void;
beforeEach(() => ({ db, path, cleanup } = freshDb()));
afterEach(() => cleanup());

const raw = (sql: string) => db.$client.prepare(sql).pluck().get() as number;

interface Chunking {
  chunkBudgetMs?: number;
  onChunk?: (done: number) => void;
}

interface Kind {
  /** The child's KIND (test/support/hidden-import-child.ts). */
  kind: string;
  table: string;
  /** A file of `n` items whose first item's text says `tag`. */
  file(n: number, tag: string): string;
  /** Imports into "Old": the number of new items, or the first error. */
  run(db: Db, text: string, chunking?: Chunking): number | string;
  /** Puts `raterId` on the panel of "Old". */
  panel(db: Db, raterId: string): void;
  /** Submits the expert's work on the first item (the one the second file changes). */
  submitFirst(db: Db, raterId: string): void;
  /** What a reader sees of "Old" through every public reader of the items. */
  view(reader: Db, raterId: string): unknown;
  /** Whether an item id reaches the expert through the services (their item page, its guidelines). */
  reaches(reader: Db, raterId: string, itemId: number): boolean;
}

const setId = (db: Db) => listReviewSets(db).find((s) => s.name === "Old")!.id;
const bankId = (db: Db) => listBanks(db).find((b) => b.name === "Old")!.id;
const firstId = (db: Db, table: string) =>
  db.$client
    .prepare(`select id from ${table} where external_id = ? `)
    .pluck()
    .get(table === "review_items" ? "c0" : "q0") as number;

const KINDS: Kind[] = [
  {
    kind: "casereview",
    table: "review_items",
    file: (n, tag) =>
      "id,kind,case_type,diagnosis,seed_id,text\ns0,seed,I,Major depressive disorder,,Seed: low mood for three weeks.\n" +
      Array.from(
        { length: n - 1 },
        (_, i) =>
          `c${i},case,I,Major depressive disorder,s0,"Case ${i}${i === 0 ? ` (${tag})` : ""}: low mood, early waking."`,
      ).join("\n") +
      "\n",
    run: (db, text, chunking) => {
      const r = importReviewSet(db, { setName: "Old", text, actorId: null, ...chunking });
      return r.ok ? r.created : r.errors[0]!.message;
    },
    panel: (db, raterId) => addReviewRaters(db, { setId: setId(db), raterIds: [raterId], actorId: null }),
    submitFirst: (db, raterId) => {
      const values = { naturalness: 4, validity: 4, realism: 3, decision: null, reason: "", comment: "" };
      const saved = saveReview(db, {
        userId: raterId,
        itemId: firstId(db, "review_items"),
        values,
        version: 0,
        intent: "submit",
      });
      expect(saved.ok).toBe(true);
    },
    view: (reader, raterId) => {
      const id = setId(reader);
      const mine = listRaterItems(reader, raterId);
      return {
        sets: listReviewSets(reader).map((s) => `${s.name}:${s.numCases}+${s.numSeeds}:${s.numSubmitted}`),
        items: listReviewItems(reader, id),
        mine,
        first: getRaterItem(reader, { userId: raterId, itemId: mine[1]!.itemId })?.item.text,
        panel: listReviewPanel(reader, id),
        report: getReviewReport(reader, id),
      };
    },
    reaches: (reader, raterId, itemId) =>
      getRaterItem(reader, { userId: raterId, itemId }) !== null ||
      guidelinesForItem(reader, "case_review", itemId) !== null,
  },
  {
    kind: "mentat",
    table: "mentat_questions",
    file: (n, tag) =>
      "id,domain,question,he,she,they,a,b,c,d,e,answer,notes\n" +
      Array.from(
        { length: n },
        (_, i) =>
          `q${i},triage,"A patient (${i}${i === 0 ? `, ${tag}` : ""}) stopped sleeping for four days. What next?",,,,Urgent evaluation,Routine visit,Sleep aid,Reassure,Wait,a,`,
      ).join("\n") +
      "\n",
    run: (db, text, chunking) => {
      const r = importQuestionBank(db, { bankName: "Old", text, actorId: null, ...chunking });
      return r.ok ? r.created : r.errors[0]!.message;
    },
    panel: (db, raterId) => addBankRaters(db, { bankId: bankId(db), raterIds: [raterId], actorId: null }),
    submitFirst: (db, raterId) => {
      const values = { scores: [90, 40, 30, 20, 10], comment: "" };
      const saved = saveOptionRating(db, {
        userId: raterId,
        questionId: firstId(db, "mentat_questions"),
        values,
        version: 0,
        intent: "submit",
      });
      expect(saved.ok).toBe(true);
    },
    view: (reader, raterId) => {
      const id = bankId(reader);
      const mine = listRaterQuestions(reader, raterId);
      return {
        banks: listBanks(reader).map((b) => `${b.name}:${b.numQuestions}:${b.numRated}:${b.numSubmitted}`),
        questions: listBankQuestions(reader, id),
        loaded: loadQuestions(reader, id),
        mine,
        first: getRaterQuestion(reader, { userId: raterId, questionId: mine[0]!.questionId })?.question,
        panel: listBankPanel(reader, id),
        rows: bankAnnotationRows(reader, id),
      };
    },
    reaches: (reader, raterId, itemId) =>
      getRaterQuestion(reader, { userId: raterId, questionId: itemId }) !== null ||
      guidelinesForItem(reader, "mentat_rating", itemId) !== null,
  },
];

describe.each(KINDS)("$kind into an existing parent", (k) => {
  let raterId: string;
  beforeEach(async () => {
    expect(k.run(db, k.file(4, "old"))).toBe(4);
    raterId = (
      await createUser(db, { username: "expert", password: "a long password 1", roles: ["rater"], actorId: null })
    ).id;
    k.panel(db, raterId);
  });

  it("writes the new items in short transactions; readers see the old state until it is complete, then all of it", () => {
    const reader = openDatabase(path);
    const before = k.view(reader, raterId);
    const eventsBefore = raw("select count(*) from events");
    let chunks = 0;
    const written = k.run(db, k.file(1504, "new"), {
      chunkBudgetMs: 1,
      onChunk: () => {
        chunks++;
        // The rows are in the file (counted on the reader's connection), but no service shows them.
        expect(reader.$client.prepare(`select count(*) from ${k.table}`).pluck().get()).toBeGreaterThan(4);
        expect(k.view(reader, raterId)).toEqual(before);
        const pending = reader.$client
          .prepare(`select id from ${k.table} where import_run is not null`)
          .pluck()
          .all() as number[];
        expect(pending.length).toBeGreaterThan(0);
        for (const id of pending.slice(0, 20)) expect(k.reaches(reader, raterId, id)).toBe(false);
      },
    });
    expect(written).toBe(1500);
    expect(chunks).toBeGreaterThan(2);
    const after = k.view(reader, raterId) as { mine: unknown[]; first: unknown };
    expect(after.mine).toHaveLength(1504);
    // The changed item was written in the last transaction, with the new items.
    expect(JSON.stringify(after.first)).toContain("new");
    expect(raw("select count(*) from import_runs")).toBe(0);
    // One "create" event per new item, one "update" for the changed one.
    expect(raw("select count(*) from events") - eventsBefore).toBe(1501);
    reader.$client.close();
  });

  it("re-checks the guard in the last transaction: work submitted meanwhile on a changed item refuses the import", () => {
    let submitted = false;
    const result = k.run(db, k.file(1504, "new"), {
      chunkBudgetMs: 1,
      onChunk: () => {
        if (!submitted) k.submitFirst(db, raterId);
        submitted = true;
      },
    });
    expect(result).toMatch(/already has (reviews|ratings)/);
    expect(raw(`select count(*) from ${k.table}`)).toBe(4);
    expect(raw(`select count(*) from ${k.table} where import_run is not null`)).toBe(0);
    expect(raw("select count(*) from import_runs")).toBe(0);
    expect(JSON.stringify((k.view(db, raterId) as { first: unknown }).first)).toContain("old");
    // The work submitted meanwhile is kept.
    expect(raw(`select count(*) from ${k.kind === "casereview" ? "review_judgements" : "mentat_ratings"}`)).toBe(1);
  });

  it("refuses a second import into the same parent while the first is still writing", () => {
    const other = openDatabase(path);
    let second: number | string | undefined;
    const first = k.run(db, k.file(1504, "new"), {
      chunkBudgetMs: 1,
      onChunk: () => void (second ??= k.run(other, k.file(6, "other"))),
    });
    expect(first).toBe(1500);
    expect(second).toMatch(/^Another import into the same place is still running/);
    other.$client.close();
  });

  it("that fails half way leaves the old state, with no row and no event of it", () => {
    const before = k.view(db, raterId);
    const events = raw("select count(*) from events");
    let chunks = 0;
    expect(() =>
      k.run(db, k.file(1504, "new"), {
        chunkBudgetMs: 1,
        onChunk: () => {
          if (++chunks === 3) throw new Error("disk gone");
        },
      }),
    ).toThrow("disk gone");
    expect(raw(`select count(*) from ${k.table}`)).toBe(4);
    expect(raw("select count(*) from events")).toBe(events);
    expect(raw("select count(*) from import_runs")).toBe(0);
    expect(k.view(db, raterId)).toEqual(before);
  });

  it("that is killed leaves the old state; the start's cleaning and the next import remove its rows, then it imports", async () => {
    const before = k.view(db, raterId);
    const events = raw("select count(*) from events");
    const file = join(path, "..", `added-${k.kind}.csv`);
    writeFileSync(file, k.file(1504, "new"));
    const args = [k.kind, path, file, "Old", "1"];
    const killed = await runImportChild([...args, "kill-after-chunk"]);
    expect(killed.signal).toBe("SIGKILL");
    expect(killed.out).toMatch(/^chunk \d+\nchunk \d+\n$/);
    expect(raw(`select count(*) from ${k.table}`)).toBeGreaterThan(4);
    expect(k.view(db, raterId)).toEqual(before);
    // The server's start cleans the same way (startup.server.ts).
    expect(cleanAbandonedRuns(db)).toBe(1);
    expect(raw(`select count(*) from ${k.table}`)).toBe(4);
    expect(raw("select count(*) from events")).toBe(events);
    expect(k.view(db, raterId)).toEqual(before);
    // Killed again, then the next import (which cleans first) imports the whole file.
    await runImportChild([...args, "kill-after-chunk"]);
    const again = await runImportChild(args);
    expect(again.out).toMatch(/done\n$/);
    expect(raw(`select count(*) from ${k.table}`)).toBe(1504);
    expect(raw("select count(*) from import_runs")).toBe(0);
    expect((k.view(db, raterId) as { mine: unknown[] }).mine.length).toBeGreaterThan(1500);
  });
});
