/** The command line's shared file reading, problem listing and tables (app/cli/io.ts). */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CliError } from "../../app/cli/command";
import { issueLines, MAX_LISTED_ISSUES, readBytes, readText, table } from "../../app/cli/io";

describe("issueLines", () => {
  const issues = [
    { line: 0, message: "the file is empty" },
    { line: 4, message: "bad row" },
  ];
  it("writes FILE:LINE: reason (compiler style), errors and warnings", () => {
    expect(issueLines(issues, { file: "a.csv" })).toEqual(["a.csv: the file is empty", "a.csv:4: bad row"]);
    expect(issueLines(issues, { file: "a.csv", kind: "warning" })).toEqual([
      "warning: a.csv: the file is empty",
      "warning: a.csv:4: bad row",
    ]);
    expect(issueLines([issues[1]!], { file: "a.csv", prefix: "  " })).toEqual(["  a.csv:4: bad row"]);
  });
  it(`lists at most ${MAX_LISTED_ISSUES} and counts the rest`, () => {
    const many = Array.from({ length: MAX_LISTED_ISSUES + 3 }, (_, i) => ({ line: i + 1, message: "x" }));
    const lines = issueLines(many, { file: "a.csv" });
    expect(lines).toHaveLength(MAX_LISTED_ISSUES + 1);
    expect(lines.at(-1)).toBe("… and 3 more errors in a.csv");
  });
});

describe("readBytes and readText", () => {
  const dir = mkdtempSync(join(tmpdir(), "concord-cli-io-"));
  const path = join(dir, "f.txt");
  writeFileSync(path, "\uFEFFhé");
  it("reads a file, keeping a BOM for the reader", () => {
    expect(readText(path)).toBe("\uFEFFhé");
    expect(readBytes(path)).toHaveLength(6);
  });
  it("answers a missing file, a directory and a file over the limit with a usage error", () => {
    expect(() => readBytes(join(dir, "nope"))).toThrow(new CliError(`cannot read ${join(dir, "nope")}: no such file.`));
    expect(() => readText(dir)).toThrow(/^cannot read /);
    expect(() => readBytes(path, 3)).toThrow(`${path} is larger than ${3 / 1024 / 1024} MB.`);
  });
});

describe("table", () => {
  it("left-aligns the first column, right-aligns the others, trims trailing spaces", () => {
    expect(
      table([
        ["", "yes", "no"],
        ["rater A", "12", "3"],
      ]),
    ).toEqual(["           yes  no", "  rater A   12   3"]);
    expect(
      table(
        [
          ["a", "1"],
          ["bb", "22"],
        ],
        { indent: "", gap: 3 },
      ),
    ).toEqual(["a     1", "bb   22"]);
  });
});
