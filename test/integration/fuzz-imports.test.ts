/**
 * The hostile-file corpus (test/fixtures/fuzz/, written by its generate.py) through the seven imports
 * (docs/reliability.md, "Hostile and damaged files"): every file is either refused — exit 2, a message naming the
 * file, and not one row written — or accepted with a warning. None crashes the command, writes part of itself, or is
 * accepted silently.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import type { Db } from "../../app/platform/db.server";
import { freshDb } from "../support/db";

const CORPUS = new URL("../fixtures/fuzz/", import.meta.url).pathname;

const COMMANDS: Record<string, (file: string) => string[]> = {
  "import-csv": (f) => ["import", "--study", "Fuzz", f],
  "import-jsonl": (f) => ["import", "--study", "Fuzz", f],
  "screening-items": (f) => ["screening-import", "--study", "Fuzz", "--categories", "anxiety,mood", "--items", f],
  "judge-import": (f) => ["judge-import", "--set", "fuzz", f],
  "mentat-import": (f) => ["mentat-import", f, "--bank", "Fuzz"],
  "casereview-import": (f) => ["casereview-import", f, "--set", "Fuzz"],
  "import-gold": (f) => ["import-gold", f, "--study", "Fuzz"],
};

let db: Db;
let cleanup: () => void;
beforeAll(() => ({ db, cleanup } = freshDb()));
afterAll(() => cleanup());

/** Rows of every table: an import that is refused must leave every count as it was. */
function rowCounts(): Record<string, number> {
  const tables = db.$client
    .prepare(
      "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like '__drizzle%'",
    )
    .pluck()
    .all() as string[];
  return Object.fromEntries(
    tables.map((t) => [t, db.$client.prepare(`select count(*) from "${t}"`).pluck().get() as number]),
  );
}

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return { code, out, err };
}

const folders = readdirSync(CORPUS, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

it("holds at least 150 hostile files over the seven imports", () => {
  expect(folders.sort()).toEqual(Object.keys(COMMANDS).sort());
  expect(folders.reduce((n, f) => n + readdirSync(join(CORPUS, f)).length, 0)).toBeGreaterThanOrEqual(150);
});

describe.each(folders)("%s", (folder) => {
  const files = readdirSync(join(CORPUS, folder)).sort();
  it.each(files)("%s is refused whole or accepted with a warning", async (name) => {
    const path = join(CORPUS, folder, name);
    const before = rowCounts();
    const r = await run(COMMANDS[folder]!(path));
    expect(r.err).not.toMatch(/\n\s+at |RangeError|TypeError|SqliteError|UNIQUE constraint/);
    if (r.code === 0) {
      // Accepted: only with a warning that says what is odd about it; nothing is taken silently.
      expect(r.err).toMatch(/warning/);
    } else {
      expect(r.code).toBe(2);
      // Where: the file, or (the case import's style) the line.
      expect(r.err.includes(path) || /line \d+:/.test(r.err)).toBe(true);
      expect(rowCounts()).toEqual(before);
    }
  });
});
