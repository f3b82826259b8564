/**
 * The compact index of ids an import read as a stream keeps for its duplicate check (docs/reliability.md, "Bulk
 * imports"): it answers as a Map of id → first line would, over many ids (past several growths of its arrays and
 * table), ids that differ in one code unit, surrogate pairs, and ids equal only in NFC (compared as given: the reader
 * normalises before it asks).
 */
import { expect, it } from "vitest";
import { IdLineIndex } from "../../app/formats/id-index";

it("answers as a Map of first lines would", () => {
  const index = new IdLineIndex();
  const map = new Map<string, number>();
  // A deterministic sequence (xorshift), ids drawn from a small alphabet so that many repeat.
  let x = 12345;
  const next = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), x >>> 0);
  const alphabet = ["a", "b", "é", "e\u0301", "😀", "Z", "0", "-"];
  for (let line = 1; line <= 60_000; line++) {
    let id = "";
    const length = 1 + (next() % 6);
    for (let i = 0; i < length; i++) id += alphabet[next() % alphabet.length];
    expect(index.get(id)).toBe(map.get(id));
    if (!map.has(id)) map.set(id, line);
    index.set(id, line);
  }
  for (const [id, line] of map) expect(index.get(id)).toBe(line);
  expect(index.get("not there")).toBeUndefined();
  expect(index.get("é")).not.toBe(index.get("e\u0301"));
  expect(map.size).toBeGreaterThan(10_000);
});

it("keeps the first line of an id added twice", () => {
  const index = new IdLineIndex();
  index.set("c1", 2);
  index.set("c1", 9);
  expect(index.get("c1")).toBe(2);
  expect(index.get("c")).toBeUndefined();
  expect(index.get("c12")).toBeUndefined();
});
