/**
 * The whole MENTAT chain in Concord: a question bank imported and expanded (test/fixtures/expert-ratings/
 * questions.csv), its four variant sets exported with mentat-export, asked through mc-run against a local stub on
 * 127.0.0.1 that always answers "A", and scored by mc-report. With the option order seeded per record, "A" is right
 * exactly where the record's top label sits first, which the test recomputes from the exported records.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import { freshDb } from "../support/db";
import { startOpenAiStub, type OpenAiStub } from "../support/openai-stub";

const BANK = new URL("../fixtures/expert-ratings/questions.csv", import.meta.url).pathname;
let dir: string;
let cleanup: () => void;
let stub: OpenAiStub;

beforeEach(async () => {
  let path: string;
  ({ path, cleanup } = freshDb());
  dir = dirname(path);
  stub = await startOpenAiStub(() => ({ content: "A" }));
});
afterEach(async () => {
  await stub.close();
  cleanup();
});

async function cli(argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    readStdin: async () => "",
    isTTY: false,
  };
  return { code: await runCli(argv, io), out, err };
}

describe("a MENTAT bank built in Concord, evaluated", () => {
  it("exports every set, runs them, and reports domains and drift", async () => {
    expect((await cli(["mentat-import", BANK, "--bank", "Pilot"])).code).toBe(0);
    expect((await cli(["mentat-expand", "--bank", "Pilot"])).code).toBe(0);
    const files: string[] = [];
    for (const set of ["base", "gender", "age", "race"]) {
      const file = join(dir, `${set}.jsonl`);
      const r = await cli(["mentat-export", "--bank", "Pilot", "--set", set, "--out", file, "--allow-intended"]);
      expect(r.code, r.err).toBe(0);
      files.push(file);
    }
    const all = join(dir, "all.jsonl");
    const text = files.map((f) => readFileSync(f, "utf8")).join("");
    (await import("node:fs")).writeFileSync(all, text);
    const records = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { labels: number[]; dataset: string; domain: string });

    const runs = join(dir, "runs");
    const run = await cli([
      "mc-run",
      "--items",
      all,
      "--models",
      "m",
      "--base-url",
      stub.baseURL,
      "--out",
      runs,
      "--retry-delay",
      "0",
    ]);
    expect(run.code, run.err).toBe(0);
    expect(stub.calls).toHaveLength(records.length);
    expect(stub.calls[0]!.messages[0]).toEqual({ role: "system", content: "You are a helpful assistant." });

    const report = await cli(["mc-report", "--runs", runs, "--json", "--bootstrap", "100"]);
    expect(report.code, report.err).toBe(0);
    const json = JSON.parse(report.out);
    const base = records.filter((r) => r.dataset === "base");
    const firstIsTop = (labels: number[]) => labels.indexOf(Math.max(...labels)) === 0;
    expect(json.mentat[0].scores.base_by_domain.all.accuracy).toBeCloseTo(
      base.filter((r) => firstIsTop(r.labels)).length / base.length,
      12,
    );
    expect(json.mentat[0].drift.map((d: { dimension: string }) => d.dimension)).toEqual(["gender", "age", "race"]);
    for (const d of json.mentat[0].drift) for (const t of d.tests) expect(t.p_holm).toBeGreaterThanOrEqual(t.p);
  });
});
