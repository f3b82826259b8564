import { existsSync, rmSync } from "node:fs";
import { getDb } from "./db.server";
import { CliError, parseOptions, requireOption, type Command } from "../cli/command";

export const backupCommand: Command = {
  name: "backup",
  summary: "Take a consistent copy of the database, also while the app runs",
  help: `Usage: npm run concord -- backup --out FILE [--force]

Copies the database (CONCORD_DB, default ./data/concord.db) to FILE with SQLite's online backup, which gives a
consistent snapshot while the web app keeps reading and writing. Refuses to overwrite FILE unless --force.
The copy holds clinical text and labels: store it as carefully as the database itself.`,
  async run(argv, io) {
    const { values } = parseOptions(argv, { out: { type: "string" }, force: { type: "boolean", default: false } });
    const out = requireOption(values.out, "--out");
    if (existsSync(out)) {
      if (!values.force) throw new CliError(`${out} exists; choose another file or pass --force.`);
      // SQLite's backup writes into an existing file as a database, so a file that is not one must go first.
      rmSync(out);
    }
    const started = Date.now();
    try {
      // One step for the whole file: a step-wise copy restarts whenever the app writes, and might never finish.
      await getDb().$client.backup(out, { progress: () => 1_000_000_000 });
    } catch (e) {
      throw new CliError(`cannot back up to ${out}: ${(e as Error).message}.`, 1);
    }
    io.out(`Backed up the database to ${out} in ${Date.now() - started} ms.\n`);
    return 0;
  },
};
