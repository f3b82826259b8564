/**
 * The compiled command line (docs/architecture.md#the-command-line): the registry lists every command without loading
 * it, each entry's summary is the loaded command's own, and build/cli/concord.js runs without a TypeScript loader,
 * loading only the module of the command it runs.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { commands } from "../../app/cli/registry";

const ROOT = new URL("../..", import.meta.url).pathname;

describe("command registry", () => {
  it("each entry loads the command of its name, with the same summary", async () => {
    for (const entry of commands) {
      const command = await entry.load();
      expect(command.name).toBe(entry.name);
      expect(command.summary).toBe(entry.summary);
    }
  });

  it("names are unique", () => {
    const names = commands.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe("compiled CLI", () => {
  beforeAll(() => {
    execFileSync(process.execPath, ["scripts/build-cli.mjs"], { cwd: ROOT });
  }, 60_000);

  it("the entry imports no command module statically", () => {
    const entry = readFileSync(`${ROOT}build/cli/concord.js`, "utf8");
    // Only dynamic imports of command chunks; no database, statistics or client code in the entry itself.
    expect(entry).not.toMatch(/better-sqlite3|drizzle-orm|openai/);
    expect(entry).toMatch(/import\("\.\/chunks\/cli-/);
  });

  it("--help lists every command, run by plain node", () => {
    const r = spawnSync(process.execPath, ["build/cli/concord.js", "--help"], { cwd: ROOT, encoding: "utf8" });
    expect(r.status).toBe(0);
    for (const c of commands) expect(r.stdout).toContain(`  ${c.name} `);
  });

  it("every command's module loads in the compiled build (its bundled packages included) and shows its --help", () => {
    for (const c of commands) {
      const r = spawnSync(process.execPath, ["build/cli/concord.js", c.name, "--help"], {
        cwd: ROOT,
        encoding: "utf8",
      });
      expect(r.stderr, c.name).toBe("");
      expect(r.status, c.name).toBe(0);
      expect(r.stdout, c.name).toMatch(new RegExp(`^Usage: npm run concord -- ${c.name}`));
    }
  });

  it("opens a database and answers a command that reads it", () => {
    const dir = mkdtempSync(join(tmpdir(), "concord-cli-compiled-"));
    try {
      const r = spawnSync(process.execPath, ["build/cli/concord.js", "users", "list"], {
        cwd: ROOT,
        encoding: "utf8",
        env: { ...process.env, CONCORD_DB: join(dir, "concord.db"), CONCORD_DEMO: "0" },
      });
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs a command and its --help", () => {
    const r = spawnSync(process.execPath, ["build/cli/concord.js", "agreement", "--help"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: npm run concord -- agreement/);
    const bad = spawnSync(process.execPath, ["build/cli/concord.js", "nope"], { cwd: ROOT, encoding: "utf8" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('unknown command "nope"');
  });
});
