/**
 * `agreement` edges (docs/statistics.md, "Label spellings"): an --order list starting with "-", one number spelled
 * two ways, labels differing only in case, --normalize, and the one-category case.
 *
 * Expected values: test/fixtures/stats/normalize.py → normalize.json — the labels normalised as irrCAC reads them
 * (trim(toupper(x)) for text, numbers by value) and fed to reference.py's independent implementation of irrCAC's
 * formulas; irrCAC's 1.0 for a single category recorded beside Concord's null.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import { joinDashValues, normalizeLabel } from "../../app/stats/agreement-labels";

const expected = JSON.parse(readFileSync(new URL("../fixtures/stats/normalize.json", import.meta.url), "utf8"));
const dir = mkdtempSync(join(tmpdir(), "concord-agreement-labels-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(rows: [string, string, string][]): string {
  const path = join(dir, `r${++n}.csv`);
  writeFileSync(path, ["item,rater,label", ...rows.map((r) => r.join(","))].join("\n") + "\n");
  return path;
}

async function run(...argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(["agreement", ...argv], io);
  return { code, out, err };
}

describe("agreement label spellings", () => {
  it("accepts --order followed by a list starting with a minus sign", async () => {
    const path = file([
      ["a", "r1", "-7"],
      ["a", "r2", "4"],
      ["b", "r1", "99"],
      ["b", "r2", "99"],
    ]);
    const spaced = await run("--ratings", path, "--scale", "ordinal", "--order", "-7,4,99", "--json");
    expect(spaced).toMatchObject({ code: 0, err: "" });
    const joined = await run("--ratings", path, "--scale", "ordinal", "--order=-7,4,99", "--json");
    expect(spaced.out).toBe(joined.out);
    expect(JSON.parse(spaced.out).categories).toEqual(["-7", "4", "99"]);
    expect(joinDashValues(["--order", "-1,2", "--json"], ["order"])).toEqual(["--order=-1,2", "--json"]);
    expect(joinDashValues(["--order", "--json"], ["order"])).toEqual(["--order", "--json"]);
  });

  it("refuses one number spelled two ways, naming the lines, and reads it by value with --normalize", async () => {
    const path = file(expected.numbers.input);
    const refused = await run("--ratings", path, "--json");
    expect(refused.code).toBe(2);
    expect(refused.out).toBe("");
    expect(refused.err).toContain(
      `${path}:2: the number 1 is spelled 2 ways: "1" (first on line 2), "1.0" (first on line 3)`,
    );
    expect(refused.err).toContain("--normalize");
    expect(refused.err).not.toMatch(/\n\s+at /);

    const nominal = JSON.parse((await run("--ratings", path, "--normalize", "--json")).out);
    expect(nominal.categories).toEqual(expected.numbers.categories);
    expect(nominal.percent_agreement).toBeCloseTo(expected.numbers.percent_agreement, 12);
    expect(nominal.gwet_ac1.value).toBeCloseTo(expected.numbers.gwet, 12);
    expect(nominal.fleiss_kappa).toBeCloseTo(expected.numbers.fleiss, 12);
    expect(nominal.cohen_kappa).toBeCloseTo(expected.numbers.cohen, 12);
    const weighted = JSON.parse(
      (await run("--ratings", path, "--normalize", "--scale", "ordinal", "--weights", "quadratic", "--json")).out,
    );
    expect(weighted.gwet_ac2.value).toBeCloseTo(expected.numbers_quadratic.gwet, 12);
    expect(weighted.cohen_kappa_weighted).toBeCloseTo(expected.numbers_quadratic.cohen, 12);
  });

  it("warns about labels that differ only in case; --normalize merges them as irrCAC does", async () => {
    const path = file(expected.text.input);
    const plain = JSON.parse((await run("--ratings", path, "--json")).out);
    expect(plain.categories).toEqual(["NO", "No", "YES", "Yes", "no", "yes"]);
    expect(plain.warnings.join("\n")).toMatch(
      /"Yes" \(first on line 2\), "yes" \(first on line 3\), "YES" .* differ only in case/,
    );
    const merged = JSON.parse((await run("--ratings", path, "--normalize", "--json")).out);
    expect(merged.categories).toEqual(expected.text.categories);
    expect(merged.gwet_ac1.value).toBeCloseTo(expected.text.gwet, 12);
    expect(merged.fleiss_kappa).toBeCloseTo(expected.text.fleiss, 12);
    expect(merged.cohen_kappa).toBeCloseTo(expected.text.cohen, 12);
    expect(merged.warnings).toEqual([]);
    expect(normalizeLabel(" 2.50 ")).toBe("2.5");
    expect(normalizeLabel(" maybe ")).toBe("MAYBE");
  });

  it("keeps AC1 null for a single observed category, where irrCAC reports 1, and says why", async () => {
    expect(expected.one_category.irrcac_gwet_ac1).toBe(1);
    const s = JSON.parse((await run("--ratings", file(expected.one_category.input), "--json")).out);
    expect(s.gwet_ac1.value).toBeNull();
    expect(s.warnings.join("\n")).toMatch(/gwet_ac1: /);
    expect((await run("--help")).out).toContain("irrCAC substitutes 1e-15 for the chance agreement and reports 1");
  });
});
