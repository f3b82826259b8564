/**
 * The second pass of a two-pass import (`secondPass` in app/formats/import-source.ts; docs/reliability.md, "Memory
 * bounded by the longest line"): the records read again are handed on in batches while they are those the first
 * pass checked; any difference — a record changed, added, removed or unreadable, or other bytes — is FileChangedError.
 */
import { describe, expect, it } from "vitest";
import { FileChangedError, secondPass, textSource, type PassKey } from "~/formats/import-source";

const records = (text: string) => () =>
  [...textSource(text).jsonlLines()]
    .filter((l) => l.text !== "")
    .map((l) => JSON.parse(l.text) as { id: string; v: number });
const keyOf = (r: { id: string; v: number }): PassKey => ({ key: r.id, hash: String(r.v) });
const TEXT = Array.from({ length: 7 }, (_, i) => JSON.stringify({ id: `k${i}`, v: i })).join("\n") + "\n";
const first = records(TEXT)().map(keyOf);
const sha = textSource(TEXT).sha256();

function run(text: string, firstSha = sha) {
  return [
    ...secondPass({
      source: textSource(text),
      records: records(text),
      keyOf,
      first,
      firstSha256: firstSha,
      batchSize: 3,
    }),
  ];
}

describe("secondPass", () => {
  it("hands the records on in batches when the input is the one checked", () => {
    expect(run(TEXT).map((b) => b.map((r) => r.id))).toEqual([["k0", "k1", "k2"], ["k3", "k4", "k5"], ["k6"]]);
  });

  it("refuses a record changed, added, removed, moved or unreadable, and other bytes", () => {
    const lines = TEXT.trimEnd().split("\n");
    const variants = [
      lines.map((l, i) => (i === 4 ? JSON.stringify({ id: "k4", v: 40 }) : l)),
      [...lines, JSON.stringify({ id: "k7", v: 7 })],
      lines.slice(0, 6),
      [lines[1], lines[0], ...lines.slice(2)],
      lines.map((l, i) => (i === 5 ? "{not json" : l)),
    ].map((ls) => ls.join("\n") + "\n");
    for (const text of variants) expect(() => run(text)).toThrow(FileChangedError);
    // The same records, other bytes (a blank line added): the sha256 differs.
    expect(() => run(TEXT + "\n")).toThrow(FileChangedError);
    expect(() => run(TEXT, "0".repeat(64))).toThrow(FileChangedError);
  });

  it("writes nothing past a changed record: the batches before it were handed on, the rest never read", () => {
    const text = TEXT.replace('{"id":"k4","v":4}', '{"id":"k4","v":44}');
    const handed: string[] = [];
    expect(() => {
      for (const batch of secondPass({
        source: textSource(text),
        records: records(text),
        keyOf,
        first,
        firstSha256: sha,
        batchSize: 3,
      }))
        handed.push(...batch.map((r) => r.id));
    }).toThrow(FileChangedError);
    expect(handed).toEqual(["k0", "k1", "k2"]);
  });
});
