/**
 * kill -9 of `import`, `export-gold` and `backup` at several moments (docs/reliability.md, "Atomic files"): what is
 * left is the old state or the new one, never a mix. The moments are fixed (spread over the command's start-up and
 * work) so that the test is repeatable; each command is killed a few times, a few seconds in all.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECTION_KINDS } from "../../app/annotation/domain/sections";
import { verifyGoldFolder } from "../../app/gold/gold-files.server";
import { freshDb } from "../support/db";

const ROOT = new URL("../..", import.meta.url).pathname;
const MOMENTS_MS = [400, 900, 1400, 2000];

let dbPath: string;
let dir: string;
let cleanup: () => void;

function casesFile(name: string, n: number, text: string): string {
  const rows = [["id", "age_group", "sex", ...SECTION_KINDS].join(",")];
  for (let i = 0; i < n; i++)
    rows.push([`c${i}`, "38-47", "F", `${text} ${i}`, "No admissions.", "Slowed.", "", ""].join(","));
  const path = join(dir, name);
  writeFileSync(path, rows.join("\n") + "\n");
  return path;
}

const concord = (args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "scripts/concord.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, CONCORD_DB: dbPath, CONCORD_DEMO: "0" },
    encoding: "utf8",
    timeout: 60_000,
  });

/** Starts the command and kills it with SIGKILL after `ms` (or lets it finish first). */
function killAfter(args: string[], ms: number): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/concord.ts", ...args], {
      cwd: ROOT,
      env: { ...process.env, CONCORD_DB: dbPath, CONCORD_DEMO: "0" },
      stdio: "ignore",
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("exit", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

beforeAll(() => {
  const fresh = freshDb();
  dbPath = fresh.path;
  dir = dirname(fresh.path);
  cleanup = fresh.cleanup;
  fresh.db.$client.close();
  expect(concord(["import", "--study", "Pilot", casesFile("old.csv", 3000, "Old text")]).status).toBe(0);
});
afterAll(() => cleanup());

/**
 * What readers see: an import writes its new cases in short transactions, hidden until its last one (docs/reliability.md,
 * "Bulk imports"), so a killed import may leave hidden rows, which the next import or start removes.
 */
const VISIBLE = "(c.import_run is null or c.import_run not in (select id from import_runs))";

function studyState(): { cases: number; changed: number; imports: number } {
  const db = new Database(dbPath, { readonly: true });
  try {
    return {
      cases: db.prepare(`select count(*) from cases c where ${VISIBLE}`).pluck().get() as number,
      changed: db
        .prepare(
          `select count(*) from case_sections s join cases c on c.id = s.case_id where ${VISIBLE} and s.content like 'New text%'`,
        )
        .pluck()
        .get() as number,
      imports: db.prepare("select count(*) from imports").pluck().get() as number,
    };
  } finally {
    db.close();
  }
}

describe("kill -9 leaves the old state or the new one", () => {
  it("import", { timeout: 60_000 }, async () => {
    const file = casesFile("new.csv", 6000, "New text");
    for (const ms of MOMENTS_MS) {
      const before = studyState();
      await killAfter(["import", "--study", "Pilot", file], ms);
      const after = studyState();
      const unchanged =
        after.cases === before.cases && after.changed === before.changed && after.imports === before.imports;
      const complete = after.cases === 6000 && after.changed === 6000 && after.imports === before.imports + 1;
      expect(unchanged || complete).toBe(true);
      if (complete) break;
    }
    // Whatever a killed run left hidden is removed by the next import: afterwards every row is a visible one.
    expect(concord(["import", "--study", "Pilot", file]).status).toBe(0);
    const db = new Database(dbPath, { readonly: true });
    try {
      expect(db.prepare("select count(*) from import_runs").pluck().get()).toBe(0);
      expect(db.prepare("select count(*) from cases").pluck().get()).toBe(6000);
    } finally {
      db.close();
    }
  });

  it("export-gold", { timeout: 60_000 }, async () => {
    const out = join(dir, "export");
    expect(concord(["export-gold", "--study", "Pilot", "--out", out, "--allow-partial"]).status).toBe(0);
    expect(verifyGoldFolder(out)).toEqual([]);
    for (const ms of MOMENTS_MS) {
      await killAfter(["export-gold", "--study", "Pilot", "--out", out, "--allow-partial"], ms);
      // A kill between the two renames leaves the previous export beside the place; the next run puts it back.
      if (!existsSync(out))
        expect(readdirSync(dir).some((f) => f.startsWith(".export.") && f.endsWith(".old"))).toBe(true);
      else expect(verifyGoldFolder(out)).toEqual([]);
    }
    expect(concord(["export-gold", "--study", "Pilot", "--out", out, "--allow-partial"]).status).toBe(0);
    expect(concord(["export-gold", "--verify", out]).status).toBe(0);
    expect(readdirSync(dir).filter((f) => f.startsWith(".export."))).toEqual([]);
  });

  it("backup", { timeout: 60_000 }, async () => {
    mkdirSync(join(dir, "backups"), { recursive: true });
    for (const [i, ms] of MOMENTS_MS.entries()) {
      const out = join(dir, "backups", `b${i}.db`);
      await killAfter(["backup", "--out", out], ms);
      if (!existsSync(out)) continue;
      const copy = new Database(out, { readonly: true });
      try {
        expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
        expect(copy.prepare("select count(*) from cases").pluck().get()).toBeGreaterThan(0);
      } finally {
        copy.close();
      }
    }
  });
});
