/**
 * A full disk for a command that writes files (docs/reliability.md, "Atomic files"): the command is run once to learn
 * how many bytes it writes, then again with the output layer failing with ENOSPC after none, half and all but one of
 * those bytes — into a new path and over its earlier output — and each time it must exit 2 with one line naming the
 * cause, and leave the folder it writes into exactly as it was (no temporary file or folder, no 0-byte file, the
 * earlier output unchanged).
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { expect } from "vitest";
import { injectOutputFault } from "../../app/platform/output-files.server";

type Run = (argv: string[]) => Promise<{ code: number; out: string; err: string }>;

/** Every file under `dir` with the sha256 of its bytes (a database and its companions left out: they are not output). */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, prefix: string) => {
    for (const name of readdirSync(d).sort()) {
      if (/\.db(-wal|-shm|-journal)?$/.test(name)) continue;
      const path = join(d, name);
      if (statSync(path).isDirectory()) {
        out[`${prefix}${name}/`] = "";
        walk(path, `${prefix}${name}/`);
      } else out[`${prefix}${name}`] = createHash("sha256").update(readFileSync(path)).digest("hex");
    }
  };
  walk(dir, "");
  return out;
}

function bytesUnder(path: string): number {
  if (!statSync(path).isDirectory()) return statSync(path).size;
  return readdirSync(path).reduce((sum, name) => sum + bytesUnder(join(path, name)), 0);
}

/**
 * Runs `command` (argv made by `argv(out)`) into `parent`: once to succeed, then under ENOSPC as described above.
 * Returns the number of bytes the command writes.
 */
export async function expectFullDiskRefusal(
  run: Run,
  command: string,
  argv: (out: string) => string[],
  parent: string,
  name = "out",
): Promise<number> {
  const first = join(parent, `${name}-first`);
  const ok = await run(argv(first));
  expect(ok.code, ok.err).toBe(0);
  expect(existsSync(first)).toBe(true);
  const total = bytesUnder(first);
  expect(total).toBeGreaterThan(1);
  for (const target of [join(parent, `${name}-new`), first]) {
    for (const after of [0, Math.floor(total / 2), total - 1]) {
      const before = snapshot(parent);
      const undo = injectOutputFault("ENOSPC", after);
      let r;
      try {
        r = await run(argv(target));
      } finally {
        undo();
      }
      expect(r.code, `${command} with the disk full after ${after} of ${total} bytes`).toBe(2);
      expect(r.err).toBe(
        `concord ${command}: cannot write ${target}: the disk is full (ENOSPC). Nothing was written; free some space and try again.\n`,
      );
      expect(snapshot(parent), `what ${command} left in ${basename(parent)}`).toEqual(before);
    }
  }
  return total;
}
