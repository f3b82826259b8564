import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import type { AgreementSummary } from "../../app/stats/index";
import { raw4raters, wikipediaCohen } from "../fixtures/stats/datasets";

const dir = mkdtempSync(join(tmpdir(), "concord-agreement-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
function file(text: string): string {
  const path = join(dir, `ratings-${++fileCount}.csv`);
  writeFileSync(path, text);
  return path;
}

function csv(rows: { item: string; rater: string; label: string }[]): string {
  return ["item,rater,label", ...rows.map((r) => `${r.item},${r.rater},${r.label}`)].join("\n") + "\n";
}

async function run(...argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(["agreement", ...argv], io);
  return { code, out, err };
}

async function json(...argv: string[]): Promise<AgreementSummary> {
  const { code, out, err } = await run(...argv, "--json");
  expect(err).toBe("");
  expect(code).toBe(0);
  expect(out.endsWith("\n")).toBe(true);
  expect(out.trimEnd().includes("\n")).toBe(false); // one JSON object and nothing else
  return JSON.parse(out) as AgreementSummary;
}

describe("agreement --json", () => {
  it("reports the documented keys for four raters with missing ratings (irrCAC cac.raw4raters values)", async () => {
    const summary = await json("--ratings", file(csv(raw4raters)));
    expect(Object.keys(summary)).toEqual([
      "n_items",
      "n_raters",
      "categories",
      "scale",
      "percent_agreement",
      "gwet_ac1",
      "fleiss_kappa",
      "krippendorff_alpha",
      "warnings",
    ]);
    expect(summary.n_items).toBe(12);
    expect(summary.n_raters).toBe(4);
    expect(summary.categories).toEqual(["1", "2", "3", "4", "5"]);
    expect(summary.scale).toBe("nominal");
    expect(summary.percent_agreement).toBeCloseTo(0.8181818, 7);
    // irrCAC README: gwet.ac1.raw(cac.raw4raters) 0.77544, se 0.14295, CI (0.461, 1)
    expect(summary.gwet_ac1.value).toBeCloseTo(0.77544, 5);
    expect(summary.gwet_ac1.se).toBeCloseTo(0.14295, 5);
    expect(summary.gwet_ac1.ci95![0]).toBeCloseTo(0.461, 3);
    expect(summary.gwet_ac1.ci95![1]).toBe(1);
    expect(summary.fleiss_kappa).toBeCloseTo(0.76117, 5);
    expect(summary.krippendorff_alpha).toBeCloseTo(0.743, 3); // Krippendorff (2011), nominal
    expect(summary.warnings).toEqual([]);
  });

  it("adds cohen_kappa and the confusion matrix for exactly two raters (Wikipedia's Cohen's kappa example)", async () => {
    const summary = await json("--ratings", file(csv(wikipediaCohen)));
    expect(summary.cohen_kappa).toBeCloseTo(0.4, 12);
    expect(summary.percent_agreement).toBeCloseTo(0.7, 12);
    expect(summary.confusion).toEqual({
      raters: ["A", "B"],
      categories: ["no", "yes"],
      counts: [
        [15, 10],
        [5, 20],
      ],
      n_items: 50,
    });
    expect(summary).not.toHaveProperty("gwet_ac2");
    expect(summary).not.toHaveProperty("cohen_kappa_weighted");
  });

  it("with --scale ordinal --weights linear adds weighted kappa and AC2 and computes ordinal alpha", async () => {
    const summary = await json("--ratings", file(csv(raw4raters)), "--scale", "ordinal", "--weights", "linear");
    expect(summary.weights).toBe("linear");
    expect(summary.krippendorff_alpha).toBeCloseTo(0.815, 3); // Krippendorff (2011), ordinal
    // irrCAC python port tests: gwet AC2 with linear weights on cac.raw4raters 0.859, se 0.117
    expect(summary.gwet_ac2!.value).toBeCloseTo(0.859, 3);
    expect(summary.gwet_ac2!.se).toBeCloseTo(0.117, 3);
    expect(summary).not.toHaveProperty("cohen_kappa_weighted"); // four raters
  });

  it("defaults to quadratic weights and takes the category order from --order", async () => {
    const path = file(
      csv([
        { item: "n1", rater: "A", label: "mild" },
        { item: "n1", rater: "B", label: "moderate" },
        { item: "n2", rater: "A", label: "severe" },
        { item: "n2", rater: "B", label: "severe" },
        { item: "n3", rater: "A", label: "none" },
        { item: "n3", rater: "B", label: "mild" },
      ]),
    );
    const summary = await json("--ratings", path, "--scale", "interval", "--order", "none,mild,moderate,severe");
    expect(summary.weights).toBe("quadratic");
    expect(summary.categories).toEqual(["none", "mild", "moderate", "severe"]);
    expect(typeof summary.cohen_kappa_weighted).toBe("number");
    expect(summary.gwet_ac2!.ci95).toHaveLength(2);
    expect(summary.confusion!.counts).toEqual([
      [0, 1, 0, 0],
      [0, 0, 1, 0],
      [0, 0, 0, 0],
      [0, 0, 0, 1],
    ]);
  });

  it("prints null with a warning for an undefined coefficient, and reports collapsed duplicates", async () => {
    const summary = await json("--ratings", file("item,rater,label\nn1,A,yes\nn1,B,yes\nn1,B,yes\nn2,A,yes\n"));
    expect(summary.cohen_kappa).toBeNull();
    expect(summary.fleiss_kappa).toBeNull();
    expect(summary.gwet_ac1).toEqual({ value: null, se: null, ci95: null });
    expect(summary.warnings[0]).toBe('line 4: duplicate of line 3 (item "n1", rater "B"): kept once');
    expect(summary.warnings.some((w) => w.startsWith("cohen_kappa: "))).toBe(true);
    expect(summary.warnings.some((w) => w.startsWith("gwet_ac1: "))).toBe(true);
  });
});

describe("agreement without --json", () => {
  it("prints a readable table with the confusion matrix", async () => {
    const { code, out } = await run("--ratings", file(csv(wikipediaCohen)));
    expect(code).toBe(0);
    expect(out).toContain("Agreement: 50 items, 2 raters, 2 categories (no, yes)");
    expect(out).toMatch(/Cohen's kappa\s+0\.400/);
    expect(out).toMatch(/Gwet's AC1\s+0\.406\s+0\.131\s+\[0\.142, 0\.670\]/);
    expect(out).toContain("Confusion matrix: rows A, columns B (50 items rated by both)");
  });
  it("lists warnings under the table", async () => {
    const { out } = await run("--ratings", file("item,rater,label\nn1,A,yes\nn1,B,yes\n"));
    expect(out).toMatch(/Cohen's kappa\s+undefined/);
    expect(out).toContain("Warnings:\n  - cohen_kappa: ");
  });
});

describe("agreement input errors exit with code 2 and a line-numbered message", () => {
  async function fails(argv: string[], message: string | RegExp) {
    const { code, out, err } = await run(...argv);
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toMatch(message);
  }
  it("a missing column", async () => {
    const path = file("item,coder,label\nn1,A,yes\n");
    await fails(
      ["--ratings", path],
      `concord agreement: ${path} is not a valid ratings file\n  ${path}:1: missing column rater`,
    );
  });
  it("a pair labelled twice with different labels", async () => {
    const path = file("item,rater,label\nn1,A,yes\nn1,B,no\nn1,A,no\n");
    await fails(["--ratings", path], `${path}:4: item "n1" rater "A" is labelled "no" here but "yes" on line 2`);
  });
  it("an empty file and a header without rows", async () => {
    await fails(["--ratings", file("")], /:1: the file is empty/);
    await fails(["--ratings", file("item,rater,label\n")], /:1: no ratings/);
  });
  it("an unreadable file", async () => {
    await fails(["--ratings", join(dir, "missing.csv")], /cannot read .*missing\.csv: no such file/);
    await fails(["--ratings", dir], /cannot read /);
  });
  it("non-numeric labels on an ordinal scale without --order, and labels missing from --order", async () => {
    const path = file("item,rater,label\nn1,A,1\nn1,B,high\n");
    await fails(["--ratings", path, "--scale", "ordinal"], `${path}:3: label "high" is not a number`);
    await fails(["--ratings", path, "--order", "1,2"], `${path}:3: label "high" is not in --order`);
  });
  it("bad options", async () => {
    const path = file(csv(wikipediaCohen));
    await fails(["--ratings", path, "--weights", "linear"], "--weights needs --scale ordinal or --scale interval");
    await fails(
      ["--ratings", path, "--scale", "ratio"],
      '--scale must be one of nominal, ordinal, interval, got "ratio"',
    );
    await fails(
      ["--ratings", path, "--scale", "ordinal", "--weights", "cubic"],
      "--weights must be linear or quadratic",
    );
    await fails(["--ratings", path, "--order", "yes,,no"], "--order has an empty category");
    await fails(["--ratings", path, "--order", "yes,no,yes"], '--order lists "yes" twice');
    await fails([], "--ratings is required");
    await fails(["--ratings", path, "--bogus"], /Unknown option '--bogus'/);
  });
});

describe("agreement --help", () => {
  it("documents the JSON keys", async () => {
    const { code, out } = await run("--help");
    expect(code).toBe(0);
    for (const key of [
      "n_items",
      "percent_agreement",
      "gwet_ac1",
      "ci95",
      "cohen_kappa_weighted",
      "gwet_ac2",
      "warnings",
    ]) {
      expect(out).toContain(key);
    }
  });
});
