/**
 * Starts the built app (server.js over build/) on a free port against a temporary database, for e2e tests.
 * `npm test` builds first; a missing build fails here with a clear message.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = new URL("../..", import.meta.url).pathname;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

export interface RunningApp {
  url: string;
  dbPath: string;
  dir: string;
  /** The server process's id (benchmarks read its CPU time). */
  pid: number | undefined;
  output: () => string;
  stop: () => Promise<void>;
}

export function tempDbPath(): { dir: string; dbPath: string } {
  const dir = mkdtempSync(join(tmpdir(), "concord-test-"));
  return { dir, dbPath: join(dir, "concord.db") };
}

export async function startApp(
  opts: { dbPath?: string; demo?: boolean; env?: Record<string, string>; nodeArgs?: string[]; port?: number } = {},
): Promise<RunningApp> {
  if (!existsSync(join(ROOT, "build/server/index.js")))
    throw new Error("No build found: run `npm run build` before the e2e tests.");
  const { dir, dbPath } = opts.dbPath ? { dir: "", dbPath: opts.dbPath } : tempDbPath();
  // A test that must know the address before the start (a provider's registered callback) chooses the port.
  const port = opts.port ?? (await freePort());
  let out = "";
  const child: ChildProcess = spawn(process.execPath, [...(opts.nodeArgs ?? []), "server.js"], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: "production",
      PORT: String(port),
      HOST: "127.0.0.1",
      CONCORD_DB: dbPath,
      CONCORD_DEMO: opts.demo ? "1" : "0",
      ...opts.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (!out.includes("Concord is listening")) {
    if (child.exitCode !== null) throw new Error(`The app exited during start:\n${out}`);
    if (Date.now() > deadline) throw new Error(`The app did not start within 30 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    dbPath,
    dir,
    pid: child.pid,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
