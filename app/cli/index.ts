import { CliError, type CliIO } from "./command";
import { commands } from "./registry";

function overview(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
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
    throw e;
  }
}
