/**
 * JSON columns are declared in drizzle's JSON mode (db/schema*.ts). The stored bytes must stay what the services
 * wrote by hand before: `JSON.stringify(value)` without spaces, in a TEXT column, so existing databases, hashes and
 * exports read the same (docs/architecture.md#json-columns).
 */
import { getTableColumns, getTableName, is } from "drizzle-orm";
import { SQLiteTable, SQLiteTextJson } from "drizzle-orm/sqlite-core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as schema from "../../db/schema";
import { events, mentatBanks } from "../../db/schema";
import { recordEvent } from "../../app/audit/audit.server";
import type { Db } from "../../app/platform/db.server";
import { freshDb } from "../support/db";

const jsonColumns = Object.values(schema as Record<string, unknown>)
  .filter((t): t is SQLiteTable => is(t, SQLiteTable))
  .flatMap((t) =>
    Object.values(getTableColumns(t))
      .filter((c) => is(c, SQLiteTextJson))
      .map((c) => ({ table: getTableName(t), column: c })),
  );

describe("JSON columns", () => {
  let db: Db;
  let cleanup: () => void;
  beforeEach(() => ({ db, cleanup } = freshDb()));
  afterEach(() => cleanup());

  it("are TEXT columns whose defaults are values, not pre-serialised strings", () => {
    expect(jsonColumns.length).toBeGreaterThanOrEqual(25);
    for (const { table, column } of jsonColumns) {
      expect(column.getSQLType(), `${table}.${column.name}`).toBe("text");
      // A string default would be stringified a second time ('"[]"' instead of '[]').
      if (column.hasDefault) expect(typeof column.default, `${table}.${column.name}`).toBe("object");
    }
  });

  it("write the bytes of JSON.stringify without spaces and read them back", () => {
    const value = {
      gold: [{ sufficiency: "insufficient", missingInfo: ["other"], missingInfoOther: 'é "q"' }, null],
      n: 1.5,
    };
    for (const { column } of jsonColumns) {
      expect(column.mapToDriverValue(value)).toBe(JSON.stringify(value));
      expect(column.mapFromDriverValue(JSON.stringify(value))).toEqual(value);
    }
    recordEvent(db, { actorId: null, entity: "test", entityId: "1", action: "a", changes: value });
    const raw = db.$client.prepare("SELECT changes FROM events").get() as { changes: string };
    expect(raw.changes).toBe(
      '{"gold":[{"sufficiency":"insufficient","missingInfo":["other"],"missingInfoOther":"é \\"q\\""},null],"n":1.5}',
    );
    expect(db.select({ c: events.changes }).from(events).get()!.c).toEqual(value);
  });

  it("store a column's default as the same text as the migration's SQL default", () => {
    db.insert(mentatBanks).values({ name: "b", createdAt: 1 }).run();
    const viaDrizzle = db.$client.prepare("SELECT preference_domains AS p FROM mentat_banks").get() as { p: string };
    expect(viaDrizzle.p).toBe('["triage","documentation"]');
    db.$client.prepare("INSERT INTO mentat_banks (name, created_at) VALUES ('c', 1)").run();
    const viaSql = db.$client.prepare("SELECT preference_domains AS p FROM mentat_banks WHERE name = 'c'").get() as {
      p: string;
    };
    expect(viaSql.p).toBe(viaDrizzle.p);
    expect(
      db
        .select({ p: mentatBanks.preferenceDomains })
        .from(mentatBanks)
        .all()
        .map((r) => r.p),
    ).toEqual([
      ["triage", "documentation"],
      ["triage", "documentation"],
    ]);
  });
});
