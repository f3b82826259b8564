/** Runs test/support/hidden-import-child.ts in its own process and collects what it printed and how it ended. */
import { spawn } from "node:child_process";

const ROOT = new URL("../..", import.meta.url).pathname;

export function runImportChild(args: string[]): Promise<{ code: number | null; signal: string | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/support/hidden-import-child.ts", ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("exit", (code, signal) => resolve({ code, signal, out }));
  });
}
