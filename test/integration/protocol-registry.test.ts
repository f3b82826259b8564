/**
 * The registration of the protocols (docs/architecture.md, "Registration"): shared code reads what the protocols
 * give it from app/platform/registry.server.ts, filled by the composition root app/protocols.server.ts. Reading it
 * before the root ran is an error, never an empty list that would quietly skip the start's cleaning.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { GUIDELINE_SCOPES } from "../../db/vocabulary";
import { freshDb } from "../support/db";

const ROUTES = join(__dirname, "..", "..", "app", "routes");

/** The workspaces whose routes ask for their item's guidelines, as the routes name them. */
function workspacesOfRoutes(): Set<string> {
  const kinds = new Set<string>();
  for (const f of readdirSync(ROUTES)) {
    const text = readFileSync(join(ROUTES, f), "utf8");
    for (const m of text.matchAll(/guidelines: "(\w+)"|guidelinesForItem\([^,]+, "(\w+)"/g)) kinds.add(m[1] ?? m[2]!);
  }
  return kinds;
}

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

  it("holds every kind of study's guidelines, one registration each, covering every workspace that shows them", async () => {
    vi.resetModules();
    await import("../../app/protocols.server");
    const { registered, guidelineScopeOfWorkspace } = await import("../../app/platform/registry.server");
    const { guidelines } = registered();
    expect(guidelines.map((g) => g.scope).sort()).toEqual([...GUIDELINE_SCOPES].sort());
    const workspaces = guidelines.flatMap((g) => g.workspaces);
    expect(new Set(workspaces).size, "a workspace belongs to one kind of study").toBe(workspaces.length);
    const asked = workspacesOfRoutes();
    expect(asked.size).toBeGreaterThanOrEqual(5);
    for (const kind of asked) expect(workspaces, kind).toContain(kind);
    expect(() => guidelineScopeOfWorkspace("no_such_workspace")).toThrow(/No protocol registered/);
    const { db, cleanup } = freshDb();
    try {
      // Each lookup runs against the schema and finds nothing in an empty database.
      for (const g of guidelines) {
        expect(g.studyExists(db, 1), g.scope).toBe(false);
        for (const w of g.workspaces) expect(g.studyOfItem(db, w, 1), w).toBeNull();
        if (g.submissionsByVersion) expect(g.submissionsByVersion(db, 1)).toEqual({});
      }
    } finally {
      cleanup();
    }
  });

  it("holds every protocol's links of the menu, each to a list page, in the header's order", async () => {
    vi.resetModules();
    await import("../../app/protocols.server");
    const { navEntriesFor, registered } = await import("../../app/platform/registry.server");
    const show = (e: { to: string; label: string }) => `${e.label} ${e.to}`;
    expect(navEntriesFor(["admin", "annotator", "adjudicator", "rater"]).map(show)).toEqual([
      "Annotate /annotate",
      "Model steps /model-review",
      "Adjudicate /adjudicate",
      "Rate responses /judge-validation",
      "Screening review /screening",
      "Expert ratings /expert-ratings",
      "Studies /admin",
      "Judges /admin/judge-validation",
      "Screening /admin/screening",
      "Experts /admin/expert-ratings",
      "Evaluations /admin/evaluations",
      "Model evaluation /admin/mc-evaluation",
      "Grading /admin/grading",
      "Preparation /admin/preparation",
      "Jobs /admin/eval-jobs",
    ]);
    expect(navEntriesFor(["rater"]).map((e) => e.to)).toEqual(["/judge-validation", "/screening", "/expert-ratings"]);
    expect(navEntriesFor([])).toEqual([]);
    const routes = new Set(readdirSync(ROUTES));
    for (const e of registered().nav) {
      // Each link is a page of the app: its list route exists.
      expect(routes, e.to).toContain(`${e.to.slice(1).replaceAll("/", ".") || "_index"}._index.tsx`.replace(/^\./, ""));
      if (e.activePattern) expect(new RegExp(e.activePattern).test(e.to), e.to).toBe(true);
    }
    // Every protocol address a worker can land on offers its list on an error page.
    const segments = registered().nav.flatMap((e) => e.listOf?.segments ?? []);
    expect([...new Set(segments)].sort()).toEqual(
      [
        "adjudicate",
        "annotate",
        "case-review",
        "expert-ratings",
        "judge-validation",
        "mentat",
        "screening",
        "model-review",
      ].sort(),
    );
    // A link registered for two roles is shown once to a user with both.
    expect(navEntriesFor(["annotator", "adjudicator"]).map(show)).toEqual([
      "Annotate /annotate",
      "Model steps /model-review",
      "Adjudicate /adjudicate",
    ]);
  });
});
