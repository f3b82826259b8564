/**
 * `mc-import-mentalbench` on a slice of MentalBench's released data set folder (test/fixtures/mentalbench-release/,
 * see its README): every case becomes an item that mc-run reads, with the answer letters MentalBench's own scoring
 * takes and the prompt MentalBench's own scripts send — both from expected.json, which reference_release.py made by
 * running MentalBench's code (generate_gt, get_eval_prompt_single, get_eval_prompt) on the same files. Bad folders are
 * refused as FILE:LINE with exit 2 and nothing written.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import { parseItems, type MentalBenchItem } from "../../app/mc-evaluation/domain/items";
import { buildMessages } from "../../app/mc-evaluation/domain/prompts";
import { loadMcPrompts } from "../../app/mc-evaluation/prompt-files";

const FIX = "test/fixtures/mentalbench-release";
const expected = JSON.parse(readFileSync(join(FIX, "expected.json"), "utf8")) as Record<
  string,
  { letters: string[]; prompt: string }
>;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "concord-mbrel-"));
  dirs.push(d);
  return d;
}

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    readStdin: async () => "",
    isTTY: false,
  };
  const code = await runCli(argv, io);
  return { code, out, err };
}

function readOut(file: string) {
  const lines = readFileSync(file, "utf8").trim().split("\n");
  const raw = lines.map((l) => JSON.parse(l) as { id: string; source: string; generator: string });
  const parsed = parseItems(readFileSync(file, "utf8"), { csv: false });
  expect(parsed.errors).toEqual([]);
  expect(parsed.format).toBe("mentalbench");
  return { raw, items: parsed.items as MentalBenchItem[] };
}

describe("mc-import-mentalbench", () => {
  it("turns every main_ case into an item with MentalBench's own answer letters and prompt", async () => {
    const out = join(tempDir(), "items.jsonl");
    const r = await cli(["mc-import-mentalbench", "--from", join(FIX, "dataset"), "--out", out]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("Wrote 30 items from 15 files");
    const { raw, items } = readOut(out);
    expect(items).toHaveLength(Object.keys(expected).length);
    const texts = loadMcPrompts().texts;
    for (const [i, item] of items.entries()) {
      const key = `${raw[i]!.source}#${item.id.split("/")[0]}`;
      const want = expected[key];
      expect(want, key).toBeDefined();
      expect(item.answer, key).toEqual(want!.letters);
      const [message] = buildMessages(item, texts, { style: "paper", fewShot: [] });
      expect(message!.content, key).toBe(want!.prompt);
    }
    // Types, diseases and clusters as the release's folders give them; the features/ file is not read.
    const byId = new Map(items.map((i) => [i.id, i]));
    expect(byId.get("D001_l001/gpt5")).toMatchObject({ type: "I", disease: "D001", cluster: "neurodevelopmental" });
    expect(byId.get("D001_m001/qwen235")).toMatchObject({ type: "II", disease: "D001" });
    expect(byId.get("D001-D005_h001/gemini")).toMatchObject({ type: "III", disease: "D001-D005" });
    expect(byId.get("D001-D005_h001/a/gpt5")).toMatchObject({ type: "IV", disease: "D001-D005" });
    expect(byId.get("D001-D005_h001/b/gpt5")).toMatchObject({ type: "IV", disease: "D001-D005" });
    expect(raw.some((x) => x.source.includes("features"))).toBe(false);
    expect(r.out).toMatch(/I\s+2\s+2\s+2\s+6/);
    expect(r.out).toMatch(/IV\s+4\s+4\s+4\s+12/);
  });

  it("keeps only the chosen types and generators, and reads the repository root as well as its dataset folder", async () => {
    const repo = tempDir();
    cpSync(join(FIX, "dataset"), join(repo, "resources", "dataset"), { recursive: true });
    const out = join(tempDir(), "items.jsonl");
    const r = await cli([
      "mc-import-mentalbench",
      "--from",
      repo,
      "--out",
      out,
      "--types",
      "1,IV",
      "--generators",
      "gemini,gpt5",
      "--no-clusters",
    ]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const { items } = readOut(out);
    expect(new Set(items.map((i) => i.type))).toEqual(new Set(["I", "IV"]));
    expect(items.filter((i) => i.type === "I")).toHaveLength(4);
    expect(items.filter((i) => i.type === "IV")).toHaveLength(8);
    expect(items.every((i) => !i.id.endsWith("/qwen235") && i.cluster === null)).toBe(true);
  });

  it("refuses a damaged folder with FILE:LINE and writes nothing", async () => {
    const dataset = join(tempDir(), "dataset");
    cpSync(join(FIX, "dataset"), dataset, { recursive: true });
    const broken = join(dataset, "low", "D001", "main_gpt5.json");
    const cases = JSON.parse(readFileSync(broken, "utf8")) as Record<string, Record<string, string>>;
    cases["D001_l002"]!.answer = "the first one";
    writeFileSync(broken, JSON.stringify(cases, null, 4));
    const notJson = join(dataset, "medium", "D001", "main_gemini.json");
    writeFileSync(notJson, '{\n    "D001_m001": {\n        "question": "x",\n    }\n}\n');
    const out = join(tempDir(), "items.jsonl");
    const r = await cli(["mc-import-mentalbench", "--from", dataset, "--out", out]);
    expect(r.code).toBe(2);
    const answerLine =
      readFileSync(broken, "utf8")
        .split("\n")
        .findIndex((l) => l.includes('"D001_l002"')) + 1;
    expect(r.err).toContain(`${broken}:${answerLine}: answer "the first one" names no option letter`);
    expect(r.err).toMatch(new RegExp(`${notJson.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:4: not JSON`));
    expect(r.err).toContain("nothing was written");
    expect(r.err).not.toMatch(/\n\s+at /);
    expect(existsSync(out)).toBe(false);
  });

  it("names what is wrong with the options", async () => {
    const empty = tempDir();
    const a = await cli(["mc-import-mentalbench", "--from", empty, "--out", join(empty, "x.jsonl")]);
    expect(a.code).toBe(2);
    expect(a.err).toContain("holds none of MentalBench's case files");
    const b = await cli([
      "mc-import-mentalbench",
      "--from",
      join(FIX, "dataset"),
      "--out",
      join(empty, "x.jsonl"),
      "--generators",
      "anthropic",
    ]);
    expect(b.code).toBe(2);
    expect(b.err).toContain("--generators: anthropic not in");
    expect(b.err).toContain("gemini, gpt5, qwen235");
    const c = await cli(["mc-import-mentalbench", "--from", join(FIX, "dataset")]);
    expect(c.code).toBe(2);
    expect(c.err).toContain("--out is required");
    expect(existsSync(join(empty, "x.jsonl"))).toBe(false);
  });
});
