/**
 * The check that keeps rows of unfinished imports out of every reader (docs/reliability.md, "Bulk imports";
 * docs/checks.md): the ESLint rule `concord/visible-rows` reports a read of a table an import writes behind its run,
 * whether through drizzle or in SQL text, and leaves writes and the views alone; its list of tables is the list of
 * views, and every table with an `import_run` column has a view.
 */
import { RuleTester } from "eslint";
import { getTableColumns, is } from "drizzle-orm";
import { SQLiteTable, getTableConfig, getViewConfig } from "drizzle-orm/sqlite-core";
import tseslint from "typescript-eslint";
import { describe, expect, it } from "vitest";
import * as schema from "../../db/schema";
import { VISIBLE_VIEWS } from "../../db/schema-visible";
import { HIDDEN_CAPABLE_TABLES, visibleRows } from "../../eslint/visible-rows.js";

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

const tester = new RuleTester({ languageOptions: { parser: tseslint.parser } });
const schemaImport = `import { cases, judgeSets, mentatRatings, gradingVerdicts, users } from "../../db/schema";\n`;

tester.run("concord/visible-rows", visibleRows, {
  valid: [
    // Readers of the views.
    `${schemaImport}db.select().from(visibleCases).where(eq(visibleCases.studyId, 1)).all();`,
    `db.$client.prepare("select id from visible_cases c join visible_studies s on s.id = c.study_id").all();`,
    // Writes.
    `${schemaImport}tx.insert(cases).values(row).run(); tx.update(judgeSets).set({ status: "rating" }).run();`,
    `${schemaImport}tx.delete(mentatRatings).where(eq(mentatRatings.id, 1)).run();`,
    `db.$client.prepare("delete from cases where id in (select id from cases where import_run = ? limit 2000)");`,
    `db.$client.prepare("update cases set version = version + 1 where id = ?");`,
    // Tables an import never writes behind its run.
    `${schemaImport}db.select().from(users).all();`,
    // A read that must see hidden rows says why: in drizzle with `// eslint-disable-next-line concord/visible-rows --
    // <why>` (ESLint's own mechanism, reported when unused), in SQL text on the line itself.
    "db.$client.prepare(`SELECT 1 FROM grading_verdicts v -- reads hidden rows: a verdict being ingested counts\n WHERE v.judge_id = ?`);",
    // Prose that happens to say "from cases" outside SQL would be reported, so the project's messages avoid it; a
    // column named like a table is not a read.
    `db.$client.prepare("select cases_total from visible_studies");`,
  ],
  invalid: [
    {
      code: `${schemaImport}db.select().from(cases).where(eq(cases.id, id)).get();`,
      errors: [{ messageId: "drizzle", data: { name: "cases", view: "visibleCases" } }],
    },
    {
      code: `${schemaImport}db.select().from(users).innerJoin(judgeSets, eq(judgeSets.createdBy, users.id)).all();`,
      errors: [{ messageId: "drizzle" }],
    },
    {
      code: `import { gradingVerdicts as v } from "../../db/schema";\ndb.select().from(v).all();`,
      errors: [{ messageId: "drizzle", data: { name: "gradingVerdicts", view: "visibleGradingVerdicts" } }],
    },
    {
      code: `import * as s from "../../db/schema";\ndb.select().from(s.mentatRatings).all();`,
      errors: [{ messageId: "drizzle" }],
    },
    { code: `${schemaImport}db.$count(cases);`, errors: [{ messageId: "drizzle" }] },
    {
      code: `${schemaImport}` + "tx.get(sql`select import_run from ${judgeSets} where name = ${name}`);",
      errors: [{ messageId: "drizzle" }],
    },
    {
      code: `db.$client.prepare("SELECT id, version FROM mentat_ratings WHERE id = ?").get(1);`,
      errors: [{ messageId: "sql", data: { table: "mentat_ratings" } }],
    },
    {
      code: 'db.$client.prepare(`SELECT s.id FROM assignments a\n  JOIN cases c ON c.id = a.case_id\n  JOIN "studies" s ON s.id = c.study_id`);',
      errors: [
        { messageId: "sql", data: { table: "cases" }, line: 2 },
        { messageId: "sql", data: { table: "studies" }, line: 3 },
      ],
    },
    {
      code: "const where = 'x';\ndb.$client.prepare(`select count(*) from screening_items where ${where}`);",
      errors: [{ messageId: "sql", data: { table: "screening_items" } }],
    },
  ],
});

describe("the rule's tables", () => {
  it("are the tables that have a visible_* view", () => {
    expect(Object.values(HIDDEN_CAPABLE_TABLES).sort()).toEqual(Object.keys(VISIBLE_VIEWS).sort());
    for (const [drizzleName, sqlName] of Object.entries(HIDDEN_CAPABLE_TABLES)) {
      const table = (schema as Record<string, unknown>)[drizzleName];
      expect(is(table, SQLiteTable), drizzleName).toBe(true);
      expect(getTableConfig(table as SQLiteTable).name).toBe(sqlName);
    }
  });

  it("include every table with an import_run column, so a new one cannot be read around its view", () => {
    const withRun = Object.values(schema as Record<string, unknown>)
      .filter((t): t is SQLiteTable => is(t, SQLiteTable))
      .filter((t) => "importRun" in getTableColumns(t))
      .map((t) => getTableConfig(t).name)
      .sort();
    expect(withRun).toEqual(Object.keys(VISIBLE_VIEWS).sort());
  });

  it("each view has every column of its table", () => {
    for (const [name, view] of Object.entries(VISIBLE_VIEWS)) {
      const table = Object.values(schema as Record<string, unknown>).find(
        (t) => is(t, SQLiteTable) && getTableConfig(t).name === name,
      )!;
      expect(Object.keys(getViewConfig(view).selectedFields).sort(), name).toEqual(
        Object.keys(getTableColumns(table as SQLiteTable)).sort(),
      );
    }
  });
});
