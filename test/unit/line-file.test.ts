/**
 * The result files' line reader (app/platform/line-file.server.ts, docs/reliability.md "Result files"): lines split
 * at line feeds across reads without breaking a character, CRLF, a last line without a line feed, a line longer
 * than the limit reported and skipped, bytes that are not UTF-8 reported.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { forEachFileLine, type FileLine } from "../../app/platform/line-file.server";

const dir = mkdtempSync(join(tmpdir(), "concord-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function read(bytes: Buffer, max: number): FileLine[] {
  const path = join(dir, `f${Math.random()}`);
  writeFileSync(path, bytes);
  const lines: FileLine[] = [];
  forEachFileLine(path, max, (l) => lines.push(l));
  return lines;
}

describe("forEachFileLine", () => {
  it("keeps a character split between two reads whole, and ends lines at LF and CRLF", () => {
    // "é" (2 bytes) straddles the 1 MiB read boundary.
    const first = "a".repeat((1 << 20) - 1) + "é";
    const lines = read(Buffer.from(`${first}\r\nsecond\n\nlast`, "utf8"), 2 << 20);
    expect(lines).toEqual([
      { line: 1, text: first, terminated: true, bytes: (1 << 20) + 1 + 2 },
      { line: 2, text: "second", terminated: true, bytes: 7 },
      { line: 3, text: "", terminated: true, bytes: 1 },
      { line: 4, text: "last", terminated: false, bytes: 4 },
    ]);
  });

  it("reports a line over the limit and one that is not UTF-8, and reads on", () => {
    const lines = read(Buffer.concat([Buffer.from("x".repeat(3000) + "\nok\n"), Buffer.from([0xff, 0x0a])]), 1000);
    expect(lines).toEqual([
      { line: 1, problem: "the line is longer than 1000 bytes", terminated: true, bytes: 3001 },
      { line: 2, text: "ok", terminated: true, bytes: 3 },
      { line: 3, problem: "the line is not valid UTF-8", terminated: true, bytes: 2 },
    ]);
  });
});
