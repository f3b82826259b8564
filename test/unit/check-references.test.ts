/**
 * The references check (scripts/check-references.ts, docs/checks.md "References"): a small repository with one
 * reference of each kind, good and broken, and the exact list of what it reports.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { commentLines, findBrokenReferences, headingAnchor } from "../../scripts/check-references";

const root = mkdtempSync(join(tmpdir(), "concord-refs-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, text: string) {
  mkdirSync(join(root, path, ".."), { recursive: true });
  writeFileSync(join(root, path), text);
}

describe("findBrokenReferences", () => {
  it("reports missing files and folders, missing symbols and broken links and anchors, and nothing else", () => {
    write("app/formats/csv.ts", "export function formatCsv() {}\n// see app/formats/gone.ts and app/old-folder/\n");
    write(
      "app/routes/admin.studies.$studyId._index.tsx",
      '// app/formats/csv.ts:formatCsv writes it; app/formats/csv.ts:parseCsv does not\nconst s = "app/not-checked.ts";\n',
    );
    write(
      "docs/a.md",
      [
        "# Title",
        "## Some `code` heading, with punctuation",
        "See `app/formats/csv.ts:formatCsv`, `app/routes/admin.studies.$studyId._index.tsx`, `app/<area>/domain/`.",
        "Missing: `docs/b.md` and `app/stats/gone.ts:x`; MentalBench's scripts/eval_type12.py is theirs.",
        "[ok](a.md#some-code-heading-with-punctuation) [self](#title) [bad anchor](a.md#nope) [bad](../docs/c.md)",
        "```",
        "[inside a fence](nowhere.md)",
        "```",
      ].join("\n"),
    );
    execFileSync("git", ["init", "-q"], { cwd: root });
    const broken = findBrokenReferences(root).map((b) => `${b.file}:${b.line}: ${b.reason}`);
    expect(broken.sort()).toEqual(
      [
        "app/formats/csv.ts:2: app/formats/gone.ts does not exist",
        "app/formats/csv.ts:2: app/old-folder/ does not exist",
        "app/routes/admin.studies.$studyId._index.tsx:1: app/formats/csv.ts has no parseCsv",
        "docs/a.md:4: docs/b.md does not exist",
        "docs/a.md:4: app/stats/gone.ts does not exist",
        "docs/a.md:5: link to a.md#nope: docs/a.md has no heading #nope",
        "docs/a.md:5: link to ../docs/c.md: no such file",
      ].sort(),
    );
  });
});

describe("helpers", () => {
  it("makes GitHub's anchors", () => {
    expect(headingAnchor("Some `code` heading, with punctuation")).toBe("some-code-heading-with-punctuation");
    expect(headingAnchor("What Concord is")).toBe("what-concord-is");
  });
  it("keeps only comments, not strings or URLs", () => {
    expect(commentLines('const u = "http://x"; // note\n/* a\n b */ x')).toEqual([" note", " a", " b "]);
  });
});
