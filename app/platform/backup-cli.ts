import Database from "better-sqlite3";
import { existsSync } from "node:fs";
import { getDb } from "./db.server";
import { fullIntegrityCheck } from "./integrity.server";
import { writeFileWith } from "./output-files.server";
import { CliError, parseOptions, requireOption, type Command } from "../cli/command";

export const backupCommand: Command = {
  name: "backup",
  summary: "Take a consistent copy of the database, also while the app runs",
  help: `Usage: npm run concord -- backup --out FILE [--force]

Copies the database (CONCORD_DB, default ./data/concord.db) to FILE with SQLite's online backup, which gives a
consistent snapshot while the web app keeps reading and writing. Refuses to overwrite FILE unless --force.
The copy is written under a temporary name beside FILE, checked with SQLite's integrity_check, synced to disk and
only then renamed to FILE: a backup that is interrupted leaves FILE as it was (docs/reliability.md).
The copy holds clinical text and labels: store it as carefully as the database itself.`,
  async run(argv, io) {
    const { values } = parseOptions(argv, { out: { type: "string" }, force: { type: "boolean", default: false } });
    const out = requireOption(values.out, "--out");
    if (existsSync(out) && !values.force) throw new CliError(`${out} exists; choose another file or pass --force.`);
    const started = Date.now();
    // Never written at the final path: a killed or failed backup must not leave a file there that restores to
    // something else than the database, nor anything beside it (docs/reliability.md, "Atomic files").
    await writeFileWith(out, async (temp) => {
      // One step for the whole file: a step-wise copy restarts whenever the app writes, and might never finish.
      await getDb().$client.backup(temp, { progress: () => 1_000_000_000 });
      // Opened read-write and switched out of WAL before the check: a read-only connection to a copy in WAL mode
      // leaves its -wal and -shm files beside it; this way the backup is one self-contained file.
      const copy = new Database(temp);
      let check: string;
      try {
        copy.pragma("journal_mode = DELETE");
        check = String(copy.pragma("integrity_check", { simple: true }));
      } finally {
        copy.close();
      }
      if (check !== "ok") throw new Error(`the copy fails SQLite's integrity check (${check.slice(0, 200)})`);
    });
    io.out(`Backed up the database to ${out} in ${Date.now() - started} ms.\n`);
    return 0;
  },
};

export const checkDbCommand: Command = {
  name: "check-db",
  summary: "Check the whole database with SQLite's integrity_check, also while the app runs",
  help: `Usage: npm run concord -- check-db

Runs SQLite's integrity_check over the whole database (CONCORD_DB, default ./data/concord.db) on a read-only
connection, which reads one consistent snapshot while the web app keeps reading and writing. Prints "ok" and exits 0,
or prints SQLite's first finding and exits 2. The server checks the whole file when it starts only up to 256 MiB;
run this after a crash, a disk error, and regularly on a big database (docs/reliability.md).`,
  run(argv, io) {
    parseOptions(argv, {});
    const path = getDb().$client.name;
    const started = Date.now();
    const result = fullIntegrityCheck(path);
    if (result !== "ok")
      throw new CliError(
        `${path}: damaged (SQLite's integrity_check: ${result.split("\n")[0]!.slice(0, 200)}). Stop every process using it and restore the last good backup: cp BACKUP.db ${path} && rm -f ${path}-wal ${path}-shm`,
      );
    io.out(`${path}: ok (SQLite's integrity_check, ${Date.now() - started} ms).\n`);
    return Promise.resolve(0);
  },
};
