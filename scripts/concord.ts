/**
 * The single command-line entry: `npm run concord -- <command> [options]`.
 * Every command lives in app/cli/ and calls the same services as the web app.
 */
import { stopQuietlyWhenOutputCloses } from "../app/cli/closed-output";
import { runCli } from "../app/cli/index";

// Exports, backups and the database itself are readable by the owner only: they hold clinical text.
process.umask(0o077);
stopQuietlyWhenOutputCloses(process.stdout, "standard output");

const code = await runCli(process.argv.slice(2), {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  },
  isTTY: Boolean(process.stdout.isTTY),
});
process.exitCode = code;
