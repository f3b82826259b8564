/**
 * Every file a report's manifest lists can be downloaded from its page, and the manifest itself: top-level files,
 * runs/<file> and manifest.json (app/mc-evaluation/reports.server.ts; docs/mc-evaluation.md, "Browsing reports").
 * Nothing else: other folders, other names and path tricks get null (404 on the page).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildReport } from "../../app/mc-evaluation/report";
import { getMcReport, getMcReportFile } from "../../app/mc-evaluation/reports.server";

const root = mkdtempSync(join(tmpdir(), "mc-reports-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const dir = join(root, "r1");
mkdirSync(join(dir, "runs"), { recursive: true });
mkdirSync(join(dir, "other"), { recursive: true });
const files: Record<string, string> = {
  "scores.json": JSON.stringify(buildReport([], { reps: 10, seed: 0, alpha: 0.05 }, new Map(), "mentat")),
  "report.md": "# report\n",
  "runs/m_mentat_seed-0.csv": "item_id,status\nq1,parsed\n",
  "runs/m_mentat_seed-0.json": "{}\n",
  "other/secret.csv": "x\n",
  "unlisted.csv": "x\n",
};
for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
const listed = ["scores.json", "report.md", "runs/m_mentat_seed-0.csv", "runs/m_mentat_seed-0.json"];
writeFileSync(
  join(dir, "manifest.json"),
  JSON.stringify({
    format: "concord-mc-report/1",
    created_at: "2026-12-01T00:00:00Z",
    runs: [],
    files: Object.fromEntries(listed.map((f) => [f, "0".repeat(64)])),
  }),
);

describe("mc report downloads", () => {
  it("lists every manifest file, runs/ included, and the manifest, and names the reading", () => {
    const view = getMcReport("r1", root)!;
    expect(view.downloads).toEqual([...listed, "manifest.json"].sort());
    expect(view.reading).toBe("mentat");
  });

  it("serves each of them", () => {
    for (const f of [...listed, "manifest.json"]) {
      const got = getMcReportFile("r1", f, root);
      expect(got, f).not.toBeNull();
      if (f !== "manifest.json") expect(got!.body.toString("utf8")).toBe(files[f]);
    }
    expect(getMcReportFile("r1", "runs/m_mentat_seed-0.csv", root)!.contentType).toBe("text/csv; charset=utf-8");
  });

  it("serves nothing else", () => {
    for (const f of [
      "unlisted.csv",
      "other/secret.csv",
      "runs/../unlisted.csv",
      "runs/a/b.csv",
      "../r1/report.md",
      "runs",
      "",
    ])
      expect(getMcReportFile("r1", f, root), f).toBeNull();
    expect(getMcReportFile("..", "manifest.json", root)).toBeNull();
  });
});
