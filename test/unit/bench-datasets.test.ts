/**
 * The bench's generated data sets are kept between runs (scripts/bench/realistic-notes.ts,
 * `cachedRealisticReleasedCsv`; docs/development.md): generated once, under a folder named by the generator's
 * version, and the same bytes when generated again.
 */
import { readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { cachedRealisticReleasedCsv } from "../../scripts/bench/realistic-notes";

describe("the bench's data set cache", () => {
  it("generates a file once, keeps it, and generates the same bytes again", () => {
    const file = cachedRealisticReleasedCsv(30, 4242);
    try {
      expect(file.startsWith(tmpdir())).toBe(true);
      expect(file).toMatch(/concord-bench-datasets[/\\][0-9a-f]{16}[/\\]realistic-30-4242\.csv$/);
      const bytes = readFileSync(file);
      expect(bytes.toString("utf8").split("\r\n").filter(Boolean)).toHaveLength(31);
      const written = statSync(file).mtimeMs;
      expect(cachedRealisticReleasedCsv(30, 4242)).toBe(file);
      expect(statSync(file).mtimeMs).toBe(written);
      rmSync(file);
      expect(readFileSync(cachedRealisticReleasedCsv(30, 4242))).toEqual(bytes);
    } finally {
      rmSync(file, { force: true });
    }
  });
});
