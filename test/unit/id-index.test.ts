/**
 * The ids an import read as a stream keeps for its duplicate check (docs/reliability.md, "Bulk imports"), in memory
 * (the compact IdLineIndex) or on disk (DiskIdLines, what an import on the server uses): each answers as a Map of
 * id → first line would, over many ids (past several growths of the compact index's arrays and table, and several
 * transactions of the disk one), ids that differ in one code unit, surrogate pairs, and ids equal only in NFC
 * (compared as given: the reader normalises before it asks).
 */
import { afterEach, describe, expect, it } from "vitest";
import { IdLineIndex, type IdLines } from "../../app/formats/id-index";
import { DiskIdLines } from "../../app/platform/disk-id-lines.server";

const opened: DiskIdLines[] = [];
afterEach(() => opened.splice(0).forEach((d) => d.close()));

const kinds: [string, () => IdLines][] = [
  ["in memory", () => new IdLineIndex()],
  [
    "on disk",
    () => {
      const d = new DiskIdLines();
      opened.push(d);
      return d;
    },
  ],
];

describe.each(kinds)("the ids read so far, %s", (_, make) => {
  it("answers as a Map of first lines would", () => {
    const index = make();
    const map = new Map<string, number>();
    // A deterministic sequence (xorshift), ids drawn from a small alphabet so that many repeat.
    let x = 12345;
    const next = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), x >>> 0);
    const alphabet = ["a", "b", "é", "e\u0301", "😀", "Z", "0", "-"];
    for (let line = 1; line <= 60_000; line++) {
      let id = "";
      const length = 1 + (next() % 6);
      for (let i = 0; i < length; i++) id += alphabet[next() % alphabet.length];
      expect(index.add(id, line)).toBe(map.get(id));
      if (!map.has(id)) map.set(id, line);
    }
    // Every id again, on later lines: each answers the line it was first added on.
    for (const [id, line] of map) expect(index.add(id, 100_000)).toBe(line);
    expect(index.add("not there", 7)).toBeUndefined();
    expect(index.add("é", 8)).not.toBe(index.add("e\u0301", 9));
    expect(map.size).toBeGreaterThan(10_000);
  });

  it("keeps the first line of an id added twice, and tells ids apart by every code unit", () => {
    const index = make();
    expect(index.add("c1", 2)).toBeUndefined();
    expect(index.add("c1", 9)).toBe(2);
    expect(index.add("c1", 11)).toBe(2);
    expect(index.add("c", 3)).toBeUndefined();
    expect(index.add("c12", 4)).toBeUndefined();
    expect(index.add("\ud83d\ude00", 5)).toBeUndefined();
    expect(index.add("\ud83d\ude01", 6)).toBeUndefined();
    expect(index.add("\ud83d\ude00", 12)).toBe(5);
  });
});

it("the disk index cannot be used once closed", () => {
  const d = new DiskIdLines();
  d.add("a", 1);
  d.close();
  expect(() => d.add("b", 2)).toThrow();
});
