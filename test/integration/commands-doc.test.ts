/**
 * The command reference (docs/commands.md) stays complete and correct: every command of `npm run concord`
 * (app/cli/registry.ts) has its row in the table and its section, whose usage block is the first paragraph of the
 * command's own `--help`, and the page names no command that does not exist.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { commands } from "../../app/cli/registry";

const doc = readFileSync("docs/commands.md", "utf8");

describe("docs/commands.md", () => {
  it("has a section for exactly the registry's commands", () => {
    const sections = [...doc.matchAll(/^### `([a-z-]+)`$/gm)].map((m) => m[1]);
    expect([...sections].sort()).toEqual(commands.map((c) => c.name).sort());
    const rows = [...doc.matchAll(/^\| \[`([a-z-]+)`\]\(#\1\) \|/gm)].map((m) => m[1]);
    expect([...rows].sort()).toEqual(commands.map((c) => c.name).sort());
  });

  it("shows each command's usage as its --help does", async () => {
    const wrong: string[] = [];
    for (const entry of commands) {
      const usage = (await entry.load()).help.split(/\n\s*\n/)[0]!;
      if (!doc.includes("```\n" + usage + "\n```")) wrong.push(entry.name);
    }
    expect(wrong).toEqual([]);
  }, 60_000);
});
