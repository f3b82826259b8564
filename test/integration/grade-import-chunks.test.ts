/**
 * `grade-import` writes behind an import run (docs/reliability.md, "Bulk imports" and "The import contract"): the set
 * is created hidden, its conversations follow in short transactions, and readers see no set until the last
 * transaction shows all of it; a failure half way leaves nothing. Before, the whole set was written in one
 * transaction (200,000 conversations held the write lock for over 90 s).
 */
import { afterEach, beforeEach, expect, it } from "vitest";
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
