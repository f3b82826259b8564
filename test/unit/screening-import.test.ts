import { describe, expect, it } from "vitest";
import { parseItemsFile, parseLabelsFile, parseTiersFile, parseVocabulary } from "~/screening/domain/screening-import";

const enc = (s: string) => new TextEncoder().encode(s);

const healthbench = (id: string, text: string) =>
  JSON.stringify({
    prompt: [
      { role: "user", content: text },
      { role: "assistant", content: "Could you tell me more?" },
      { role: "user", content: "It has been two weeks." },
    ],
    completion: [],
    prompt_id: id,
    example_tags: ["theme:context_seeking"],
    rubrics: [{ criterion: "SECRET-RUBRIC advises seeing a clinician", points: 5, tags: ["axis:accuracy"] }],
  });

describe("parseItemsFile", () => {
  it("reads HealthBench JSONL conversations, keeping the whole record for the release", () => {
    const r = parseItemsFile(
      enc(`${healthbench("p-1", "I cannot sleep")}\n\n${healthbench("p-2", "My knee hurts")}\n`),
      { filename: "hb.jsonl" },
    );
    expect(r.errors).toEqual([]);
    expect(r.items.map((i) => [i.line, i.id, i.kind, i.messages.length, i.tags])).toEqual([
      [1, "p-1", "conversation", 3, ["theme:context_seeking"]],
      [3, "p-2", "conversation", 3, ["theme:context_seeking"]],
    ]);
    expect(JSON.parse(r.items[0]!.source).rubrics[0].criterion).toContain("SECRET-RUBRIC");
    expect(r.items[0]!.messages[0]).toEqual({ role: "user", content: "I cannot sleep" });
  });

  it("reads plain-text items from JSONL and CSV (with ; separated tags)", () => {
    const jsonl = parseItemsFile(enc('{"id": 7, "text": "  Worried all the time  "}\n'), { filename: "t.jsonl" });
    expect(jsonl.items).toMatchObject([
      { id: "7", kind: "text", messages: [{ role: "text", content: "Worried all the time" }] },
    ]);
    const csv = parseItemsFile(enc('id,text,tags,extra\na,"Line one\nline two",x;y,\nb,Second,,\n'), {
      filename: "t.csv",
    });
    expect(csv.errors).toEqual([]);
    expect(csv.warnings).toEqual([{ line: 1, message: 'column "extra" not used.' }]);
    expect(csv.items.map((i) => [i.line, i.id, i.messages[0]!.content, i.tags])).toEqual([
      [2, "a", "Line one\nline two", ["x", "y"]],
      [4, "b", "Second", []],
    ]);
    expect(JSON.parse(csv.items[0]!.source)).toEqual({ id: "a", text: "Line one\nline two", example_tags: ["x", "y"] });
  });

  it("reports every bad line with its number and returns no items", () => {
    const text = [
      healthbench("ok", "fine"),
      "{not json",
      JSON.stringify({ prompt_id: "no-content" }),
      JSON.stringify({ prompt_id: "bad-msg", prompt: [{ role: "user" }] }),
      healthbench("ok", "again"),
      JSON.stringify({ text: "no id" }),
      "[1, 2]",
    ].join("\n");
    const r = parseItemsFile(enc(text), { filename: "x.jsonl" });
    expect(r.items).toEqual([]);
    expect(r.errors.map((e) => e.line)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(r.errors[1]!.message).toMatch(/needs "prompt"/);
    expect(r.errors[2]!.message).toMatch(/message 1 of "prompt"/);
    expect(r.errors[3]!.message).toBe('duplicate id "ok" (first on line 1).');
    expect(r.errors[4]!.message).toMatch(/missing id/);
  });

  it("names a CSV without the needed columns, and an unknown format", () => {
    expect(parseItemsFile(enc("id,body\na,b\n"), { filename: "x.csv" }).errors).toEqual([
      { line: 1, message: 'missing column "text".' },
    ]);
    expect(parseItemsFile(enc("x"), { filename: "x.txt" }).errors[0]!.message).toMatch(/cannot tell the format/);
    expect(parseItemsFile(enc(""), { filename: "x.jsonl" }).errors[0]!.message).toMatch(/empty/);
  });
});

describe("parseLabelsFile", () => {
  const options = { filename: "labels.csv", knownIds: new Set(["a", "b", "c"]), vocabulary: ["anxiety", "Sleep"] };

  it("reads labels, normalising spellings and the category's case", () => {
    const r = parseLabelsFile(
      enc(
        "prompt_id,label,category,confidence,rationale\na,Relevant,ANXIETY,0.9,mentions panic\nb,not relevant,,high,\nc,Borderline,sleep,,\n",
      ),
      options,
    );
    expect(r.errors).toEqual([]);
    expect(r.labels).toEqual([
      { line: 2, id: "a", label: "relevant", category: "anxiety", confidence: "0.9", rationale: "mentions panic" },
      { line: 3, id: "b", label: "not_relevant", category: null, confidence: "high", rationale: "" },
      { line: 4, id: "c", label: "borderline", category: "Sleep", confidence: null, rationale: "" },
    ]);
  });

  it("refuses unknown items, labels and categories, and duplicates, each with its line", () => {
    const r = parseLabelsFile(
      enc("id,label,category\na,relevant,\nz,relevant,\nb,maybe,\nc,relevant,psychosis\na,relevant,\n"),
      options,
    );
    expect(r.labels).toEqual([]);
    expect(r.errors).toEqual([
      { line: 3, message: 'no item "z" in the study: import the items first.' },
      { line: 4, message: 'label "maybe" is not one of relevant, borderline, not_relevant.' },
      { line: 5, message: 'category "psychosis" is not in the study\'s vocabulary (anxiety; Sleep).' },
      { line: 6, message: 'duplicate id "a" (first on line 2).' },
    ]);
  });

  it("reads JSONL labels", () => {
    const r = parseLabelsFile(enc('{"prompt_id":"a","label":"borderline","confidence":0.5}\n'), {
      ...options,
      filename: "l.jsonl",
    });
    expect(r.labels).toEqual([
      { line: 1, id: "a", label: "borderline", category: null, confidence: "0.5", rationale: "" },
    ]);
  });
});

describe("parseTiersFile", () => {
  it("accepts clear / possible / no for eligible items and says why others are refused", () => {
    const ineligible = (id: string) => (id === "used" ? 'item "used" was reviewed in round 1 as a control' : null);
    const r = parseTiersFile(enc("id,tier,rationale\na,clear,postpartum\nb,Possible,\nused,no,\nc,perhaps,\n"), {
      filename: "t.csv",
      ineligible,
    });
    expect(r.tiers).toEqual([]);
    expect(r.errors).toEqual([
      { line: 4, message: 'item "used" was reviewed in round 1 as a control' },
      { line: 5, message: 'tier "perhaps" is not one of clear, possible, no.' },
    ]);
    const ok = parseTiersFile(enc("id,tier\na,clear\nb,Possible\nc,NO\n"), { filename: "t.csv", ineligible });
    expect(ok.tiers.map((t) => [t.id, t.tier])).toEqual([
      ["a", "clear"],
      ["b", "possible"],
      ["c", "no"],
    ]);
  });
});

describe("parseVocabulary", () => {
  it("splits on lines or semicolons, trims, drops blanks and case-insensitive repeats", () => {
    expect(parseVocabulary(" anxiety \nSleep; sleep\n\nADHD;")).toEqual(["anxiety", "Sleep", "ADHD"]);
  });
});
