/**
 * The registration of the protocols (docs/architecture.md, "Registration"): shared code reads what the protocols
 * give it from app/platform/registry.server.ts, filled by the composition root app/protocols.server.ts. Reading it
 * before the root ran is an error, never an empty list that would quietly skip the start's cleaning.
 */
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { freshDb } from "../support/db";

afterEach(() => vi.resetModules());

describe("the protocol registry", () => {
  it("refuses to be read before the composition root has filled it", async () => {
    vi.resetModules();
    const { registered } = await import("../../app/platform/registry.server");
    expect(() => registered()).toThrow(/No protocols registered/);
  });

  it("holds every kind of hidden import parent and the demo once the composition root ran", async () => {
    vi.resetModules();
    await import("../../app/protocols.server");
    const { registered } = await import("../../app/platform/registry.server");
    const { hiddenParents, demo } = registered();
    expect(hiddenParents.map((p) => p.table).sort()).toEqual([
      "evaluation_imports",
      "grading_sets",
      "judge_sets",
      "mentat_banks",
      "review_sets",
      "screening_studies",
    ]);
    expect(demo.accounts.map((a) => a.username)).toContain("admin");
    const { db, cleanup } = freshDb();
    try {
      // Each registered table exists and carries the column the start's cleaning reads.
      for (const p of hiddenParents) {
        const cols = db.all<{ name: string }>(sql.raw(`pragma table_info(${p.table})`)).map((c) => c.name);
        expect(cols, p.table).toContain("import_run");
      }
      // And every parent table of the schema that an import creates hidden is registered: a table with its own
      // import_run whose visible view hides the row while that column is set (not a row of a run in progress).
      const views = db.all<{ sql: string }>(sql`select sql from sqlite_master where type = 'view'`);
      const hiddenByOwnColumn = new Set<string>();
      for (const v of views) {
        for (const m of v.sql.matchAll(/"(\w+)"\."import_run" is null(?! or)/g)) hiddenByOwnColumn.add(m[1]!);
      }
      expect(hiddenByOwnColumn.size).toBeGreaterThan(0);
      for (const t of hiddenByOwnColumn) expect(hiddenParents.map((p) => p.table)).toContain(t);
    } finally {
      cleanup();
    }
  });
});
