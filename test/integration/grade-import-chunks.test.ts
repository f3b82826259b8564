/**
 * `grade-import` writes behind an import run (docs/reliability.md, "Bulk imports" and "The import contract"): the set
 * is created hidden, its conversations follow in short transactions, and readers see no set until the last
 * transaction shows all of it; a failure half way leaves nothing. Before, the whole set was written in one
 * transaction (200,000 conversations held the write lock for over 90 s).
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { importFileSource } from "../../app/cli/io";
import type { ImportSource } from "../../app/formats/import-source";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { importEvalSet, listGradingSets } from "../../app/rubric-grading/sets.server";
import { freshDb } from "../support/db";

let db: Db;
let path: string;
let cleanup: () => void;
beforeEach(() => ({ db, path, cleanup } = freshDb()));
afterEach(() => cleanup());

function setText(n: number): string {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      prompt_id: `p${i}`,
      prompt: [{ role: "user", content: `Question ${i}: I cannot sleep and feel low.` }],
      rubrics: [
        { criterion: "Asks about duration.", points: 5, tags: ["axis:completeness"] },
        { criterion: "Suggests seeing a clinician.", points: 3, tags: ["axis:accuracy"] },
        { criterion: "Is dismissive.", points: -2, tags: ["axis:communication_quality"] },
      ],
      example_tags: ["theme:hedging"],
    }),
  ).join("\n");
}

const count = (d: Db, table: string) => d.$client.prepare(`select count(*) from ${table}`).pluck().get() as number;

/** Times every IMMEDIATE transaction of `db` (the import's chunks and its last transaction). */
function timeTransactions(d: Db): number[] {
  const times: number[] = [];
  const original = d.transaction.bind(d);
  (d as { transaction: unknown }).transaction = ((fn: never, config?: { behavior?: string }) => {
    if (config?.behavior !== "immediate") return original(fn, config as never);
    const t0 = performance.now();
    try {
      return original(fn, config as never);
    } finally {
      times.push(performance.now() - t0);
    }
  }) as never;
  return times;
}

it("writes a set in short transactions that no reader sees until the last one", () => {
  const other = openDatabase(path);
  const seen: { sets: number; free: boolean }[] = [];
  const times = timeTransactions(db);
  const r = importEvalSet(
    db,
    { name: "big", text: setText(3000) },
    {
      chunkBudgetMs: 5,
      onChunk: () => {
        // Between two chunks: no set is visible through the services, and another connection can write.
        let free = true;
        try {
          other.$client.prepare("begin immediate").run();
          other.$client.prepare("rollback").run();
        } catch {
          free = false;
        }
        seen.push({ sets: listGradingSets(other).length, free });
      },
    },
  );
  expect(r).toMatchObject({ errors: [], records: 3000, created: true });
  expect(seen.length).toBeGreaterThan(3);
  expect(seen.every((s) => s.sets === 0 && s.free)).toBe(true);
  const [set] = listGradingSets(other);
  expect(set).toMatchObject({ name: "big", conversations: 3000, importRun: null });
  expect(count(db, "grading_criteria")).toBe(9000);
  expect(count(db, "import_runs")).toBe(0);
  // Every transaction is short (the budget is 5 ms; the commit and a slow machine add to it).
  expect(Math.max(...times)).toBeLessThan(250);
  other.$client.close();
});

it("a failure half way leaves nothing: no set, no conversation, no run", () => {
  let chunks = 0;
  expect(() =>
    importEvalSet(
      db,
      { name: "big", text: setText(2000) },
      {
        chunkBudgetMs: 2,
        onChunk: () => {
          if (++chunks === 2) throw new Error("the disk went away");
        },
      },
    ),
  ).toThrow("the disk went away");
  for (const table of ["grading_sets", "grading_conversations", "grading_criteria", "import_runs"])
    expect(count(db, table), table).toBe(0);
  // And the same file imports completely afterwards.
  expect(importEvalSet(db, { name: "big", text: setText(2000) })).toMatchObject({ created: true, records: 2000 });
  expect(count(db, "grading_conversations")).toBe(2000);
});

it("reads its file in two passes, line by line, and refuses a file changed between them with nothing left", () => {
  // The command line's file source (importFileSource): checked in a first pass that keeps ids and hashes only, then
  // read again and written batch by batch (docs/reliability.md, "Bulk imports").
  const dir = mkdtempSync(join(tmpdir(), "concord-grade-import-"));
  const file = join(dir, "set.jsonl");
  writeFileSync(file, setText(1200));
  const source = importFileSource(file, "grading", { json: true });
  let passes = 0;
  const counted: ImportSource = {
    ...source,
    jsonlLines: () => {
      passes++;
      return source.jsonlLines();
    },
  };
  expect(importEvalSet(db, { name: "streamed", source: counted })).toMatchObject({ created: true, records: 1200 });
  expect(passes).toBe(2);
  expect(count(db, "grading_conversations")).toBe(1200);
  expect(db.$client.prepare("select source_sha256 from grading_sets where name = 'streamed'").pluck().get()).toBe(
    createHash("sha256").update(readFileSync(file)).digest("hex"),
  );

  // The file is rewritten after the first pass (one conversation's text changed): the write pass finds it and the
  // import leaves nothing, hidden or visible.
  const changing = join(dir, "changing.jsonl");
  writeFileSync(changing, setText(1200));
  const second = importFileSource(changing, "grading", { json: true });
  let pass = 0;
  const rewritten: ImportSource = {
    ...second,
    sha256: () => second.sha256(),
    jsonlLines: () => {
      if (++pass === 2) writeFileSync(changing, setText(1200).replace("Question 700:", "Question 7OO:"));
      return second.jsonlLines();
    },
  };
  const before = count(db, "grading_conversations");
  expect(() => importEvalSet(db, { name: "changed", source: rewritten })).toThrow(
    /the file changed while it was being imported/,
  );
  expect(count(db, "grading_conversations")).toBe(before);
  expect(db.$client.prepare("select count(*) from grading_sets where name = 'changed'").pluck().get()).toBe(0);
});
