/**
 * `concord users list | head` (docs/security.md, "Command-line output"): when the reader of the output goes away
 * before the command has written everything, the command stops quietly — no EPIPE stack trace on stderr.
 */
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { users } from "../../db/schema";
import { freshDb } from "../support/db";

const ROOT = new URL("../..", import.meta.url).pathname;
let dbPath: string;
let cleanup: () => void;

beforeAll(() => {
  const fresh = freshDb();
  dbPath = fresh.path;
  cleanup = fresh.cleanup;
  // Enough users that the list is larger than a pipe's buffer (no password hashing needed to list them).
  fresh.db
    .insert(users)
    .values(
      Array.from({ length: 3000 }, (_, i) => ({
        id: `u${i}`,
        username: `user-${String(i).padStart(5, "0")}-with-a-long-name`,
        displayName: `User ${i} with a long display name to fill the pipe`,
        passwordHash: "scrypt$131072$8$1$AAAA$AAAA",
        createdAt: 0,
      })),
    )
    .run();
});
afterAll(() => cleanup());

describe("output into a closed pipe", () => {
  it("users list | head -1 prints one line and no error", () => {
    const r = spawnSync("sh", ["-c", `"${process.execPath}" --import tsx scripts/concord.ts users list | head -1`], {
      cwd: ROOT,
      env: { ...process.env, CONCORD_DB: dbPath, CONCORD_DEMO: "0" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.stdout.split("\n").filter(Boolean)).toHaveLength(1);
    expect(r.stderr).not.toMatch(/EPIPE|Error|at /);
  });

  it("exits 0 when the reader closes early", () => {
    // pipefail: the pipeline's status is the command's own when it fails.
    const r = spawnSync(
      "bash",
      ["-c", `set -o pipefail; "${process.execPath}" --import tsx scripts/concord.ts users list | head -1 >/dev/null`],
      {
        cwd: ROOT,
        env: { ...process.env, CONCORD_DB: dbPath, CONCORD_DEMO: "0" },
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});
