import { CliError, type CliIO } from "./command";
import { commands } from "./registry";
import { maxOf } from "../stats/extremes";

function overview(): string {
  const width = maxOf(commands.map((c) => c.name.length));
  return [
    "Usage: npm run concord -- <command> [options]",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Run `npm run concord -- <command> --help` for a command's options.",
    "",
  ].join("\n");
}

export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    io.out(overview());
    return name ? 0 : 2;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    io.err(`concord: unknown command "${name}".\n\n${overview()}`);
    return 2;
  }
  const command = await entry.load();
  if (rest.includes("--help") || rest.includes("-h")) {
    io.out(command.help.endsWith("\n") ? command.help : command.help + "\n");
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    if (e instanceof CliError) {
      io.err(`concord ${name}: ${e.message}\n`);
      return e.exitCode;
    }
    // A file that could not be written (app/platform/output-files.server.ts): one line naming the cause, exit 2; the
    // output layer has left nothing behind. By name, so that this module does not load the layer at start-up.
    if ((e as { name?: unknown } | null)?.name === "OutputError") {
      io.err(`concord ${name}: ${(e as Error).message}\n`);
      return 2;
    }
    const fault = databaseFault(e);
    if (fault) {
      io.err(`concord ${name}: ${fault}\n`);
      return 2;
    }
    throw e;
  }
}

/**
 * The database's refusals that are not bugs, as one line that says what to do (docs/reliability.md, "Messages, not
 * stack traces"): two writers at once, a full disk, a damaged file. Every write ran in a transaction, so nothing of
 * the command was kept.
 */
export function databaseFault(e: unknown): string | null {
  const code = String((e as { code?: unknown } | null)?.code ?? "");
  // By name: importing the class would load the database layer into every command's start-up.
  const busy = (e as { name?: unknown } | null)?.name === "DatabaseBusyError";
  if (busy || code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
    return "the database is busy: another command (an import?) or the app is writing a long change. Nothing was written; run the command again when it has finished.";
  if (code.startsWith("SQLITE_FULL") || code === "ENOSPC")
    return "the disk is full. Nothing was written; free some space and run the command again.";
  if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB")
    return 'the database file is damaged. Restore the last good backup ("npm run concord -- backup" makes them) and run the command again.';
  if (code.startsWith("SQLITE_CONSTRAINT_UNIQUE"))
    return "another command wrote the same records at the same time. Nothing of this one was written; run it again to see what is left to do.";
  return null;
}
