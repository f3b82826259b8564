/**
 * `npm run dev` (`node server.js --dev`, docs/architecture.md, "Development") is the production server with Vite's
 * middleware: it serves pages from the sources and answers as production does — here, a log-in sent while another
 * connection holds the database's write lock answers 503 with Retry-After and the busy message, not 500
 * (docs/reliability.md, "Busy answers"), and succeeds once the lock is released.
 */
import Database from "better-sqlite3";
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_PASSWORD } from "../../app/demo/demo.server";
import { BUSY_REQUEST_MESSAGE } from "../../app/platform/busy-answer.server";
import { freePort, tempDbPath } from "../support/server";

const ROOT = new URL("../..", import.meta.url).pathname;
let child: ChildProcess;
let url: string;
let out = "";
const { dir, dbPath } = tempDbPath();

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, ["server.js", "--dev"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", CONCORD_DB: dbPath, CONCORD_DEMO: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const deadline = Date.now() + 60_000;
  while (!out.includes("Concord is listening")) {
    if (child.exitCode !== null)
      throw new Error(`The development server exited during start:
${out}`);
    if (Date.now() > deadline)
      throw new Error(`The development server did not start within 60 s:
${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}, 90_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

const logIn = () =>
  fetch(`${url}/login`, {
    method: "POST",
    body: new URLSearchParams({ username: "annotator1", password: DEMO_PASSWORD }),
    redirect: "manual",
  });

describe("the development server", () => {
  it("serves the log-in page from the sources", async () => {
    const page = await fetch(`${url}/login`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>Log in · Concord");
  }, 60_000);

  it("answers a busy database with 503 and Retry-After, as production does", async () => {
    const holder = new Database(dbPath);
    holder.exec("BEGIN IMMEDIATE");
    try {
      const busy = await logIn();
      expect(busy.status).toBe(503);
      expect(busy.headers.get("retry-after")).toBe("1");
      expect((await busy.text()).replace(/&#x27;|&#39;/g, "'")).toContain(BUSY_REQUEST_MESSAGE.slice(0, 40));
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    const ok = await logIn();
    expect(ok.status).toBe(302);
    expect(out).not.toMatch(/SQLITE_BUSY|database is locked/);
  }, 60_000);
});
