/**
 * Resuming after kill -9: a grade-run child process is killed mid-run; the rerun grades only what has no verdict,
 * so every judge call is made once except the few in flight at the kill (at most --concurrency).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import type { Db } from "../../app/platform/db.server";
import { freshDb } from "../support/db";
import { scriptedJudge, startGradingStub, type GradingStub } from "../support/rubric-grading-stub";

const ROOT = new URL("../..", import.meta.url).pathname;
let db: Db;
let dbPath: string;
let cleanup: () => void;
let stub: GradingStub;
let dir: string;

beforeEach(async () => {
  ({ db, path: dbPath, cleanup } = freshDb());
  dir = mkdtempSync(join(tmpdir(), "concord-grading-kill-"));
});
afterEach(async () => {
  await stub?.close();
  cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  return { code: await runCli(argv, io), out, err };
}

it("loses at most the calls in flight when killed, and the rerun repeats no finished call", async () => {
  const conversations = Array.from({ length: 40 }, (_, k) => ({
    prompt_id: `k${k}`,
    prompt: [{ role: "user", content: `question ${k}` }],
    rubrics: Array.from({ length: 5 }, (_, i) => ({
      criterion: `${i % 2 ? "[met] " : ""}criterion ${k}.${i}`,
      points: 5 - 2 * (i === 4 ? 4 : 0),
      tags: [],
    })),
    example_tags: [],
  }));
  const file = join(dir, "set.jsonl");
  writeFileSync(file, conversations.map((c) => JSON.stringify(c)).join("\n") + "\n");
  stub = await startGradingStub((call) =>
    String(call.body.model).startsWith("judge")
      ? { ...scriptedJudge(call), delayMs: 25 }
      : { content: `answer to ${call.messages[0].content}` },
  );
  expect((await run(["grade-import", "--set", "s", file])).code).toBe(0);
  expect(
    (await run(["grade-respond", "--set", "s", "--candidate", "c", "--model", "m", "--base-url", stub.baseURL])).code,
  ).toBe(0);
  const before = stub.calls.length;
  const args = [
    "grade-run",
    "--set",
    "s",
    "--judge",
    "j",
    "--model",
    "judge-m",
    "--base-url",
    stub.baseURL,
    "--concurrency",
    "4",
  ];
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/concord.ts", ...args], {
    cwd: ROOT,
    stdio: "ignore",
    env: { ...process.env, CONCORD_DB: dbPath },
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const deadline = Date.now() + 30_000;
  while (stub.calls.length - before < 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  child.kill("SIGKILL");
  await exited;
  const stored = (db.$client.prepare("SELECT COUNT(*) AS n FROM grading_verdicts").get() as { n: number }).n;
  expect(stored).toBeGreaterThanOrEqual(50);
  expect(stored).toBeLessThan(200);

  const r = await run(args);
  expect(r.code, r.err).toBe(0);
  expect((db.$client.prepare("SELECT COUNT(*) AS n FROM grading_verdicts").get() as { n: number }).n).toBe(200);
  const judgePrompts = stub.calls.slice(before).map((c) => c.messages[1].content);
  const repeats = judgePrompts.length - new Set(judgePrompts).size;
  expect(repeats).toBeLessThanOrEqual(4);
  expect(new Set(judgePrompts).size).toBe(200);
}, 60_000);
