/**
 * `npm run concord -- stats --study NAME [--json | --md]` through runCli with a capturing io. The service is replaced
 * by the core report of the hand-worked study (test/fixtures/study-report), so this tests the command: options,
 * output forms and errors; test/integration/study-report.test.ts runs it against a database.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import { buildStudyReport, type StudyCaseRecord } from "../../app/study-report/domain/study-report";
import { ServiceError } from "../../app/platform/service-error";

const records: StudyCaseRecord[] = JSON.parse(
  readFileSync(new URL("../fixtures/study-report/study.json", import.meta.url), "utf8"),
);
const report = buildStudyReport(records, { study: { id: 3, name: "Hand study" } });

vi.mock("../../app/platform/db.server", () => ({ getDb: () => ({}) }));
vi.mock("../../app/study-report/study-report.server", () => ({
  requireStudyReportByName: (_db: unknown, name: string) => {
    if (name === "Hand study") return report;
    throw new ServiceError(`No study named "${name}". Known studies: "Hand study".`, "study", 404);
  },
}));

vi.mock("../../app/study-report/time-on-task.server", async () => {
  const { summariseTimeOnTask } = await import("../../app/study-report/domain/time-on-task");
  return {
    getTimeOnTask: () =>
      summariseTimeOnTask([
        { annotator: "alice", caseId: 1, externalId: "c1", activeMs: 90_000 },
        { annotator: "bruno", caseId: 1, externalId: "c1", activeMs: 30_000 },
      ]),
  };
});

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return { code, out, err };
}

describe("concord stats", () => {
  it("prints one JSON object with the documented keys and nothing else", async () => {
    const { code, out, err } = await run(["stats", "--study", "Hand study", "--json"]);
    expect(code).toBe(0);
    expect(err).toBe("");
    expect(out.endsWith("}\n")).toBe(true);
    expect(out.trimEnd().split("\n")).toHaveLength(1);
    const json = JSON.parse(out);
    expect(Object.keys(json)).toEqual([
      "study",
      "case_counts",
      "sufficiency",
      "earliest_section",
      "diagnosis",
      "per_diagnosis",
      "label_distributions",
      "reference_agreement",
      "raters",
      "reasons",
      "notes",
      "time_on_task",
    ]);
    expect(json.sufficiency.gwet_ac1.value).toBeCloseTo(10 / 13, 12);
    expect(Object.keys(json.earliest_section.weighted)).toEqual(["linear", "quadratic"]);
    expect(Object.keys(json.earliest_section.weighted.quadratic)).toEqual([
      "cohen_kappa_weighted",
      "cohen_kappa_weighted_ci95",
      "gwet_ac2",
    ]);
    expect(Object.keys(json.diagnosis)).toEqual(["n", "diagnosis_level", "category", "group"]);
  });

  it("prints Markdown with --md", async () => {
    const { code, out } = await run(["stats", "--study", "Hand study", "--md"]);
    expect(code).toBe(0);
    expect(out).toMatch(/^# Study report: Hand study\n/);
    expect(out).toContain("| Percent agreement | 83.3% (10/12) |  |  |");
    expect(out).toContain("| Group (WHO block) | 9 | 5 | 88.9% (8/9) | 0.836 | 0.866 | 0.136 | [0.552, 1.000] |");
  });

  it("prints a readable table by default", async () => {
    const { code, out } = await run(["stats", "--study", "Hand study"]);
    expect(code).toBe(0);
    expect(out).toMatch(/^Study report: Hand study\n=+\n/);
    expect(out).toMatch(/Cohen's kappa\s+0\.400\n/);
    expect(out).toMatch(/Final\s+0\s+8\s+2\s+10\n/);
    expect(out).toContain("2 annotations, median 1 min 00 s, total 2 min 00 s");
    expect(out).toContain("alice: 1 min 30 s over 1");
  });

  it("reports time on task in every form", async () => {
    const json = JSON.parse((await run(["stats", "--study", "Hand study", "--json"])).out);
    expect(json.time_on_task).toMatchObject({ n: 2, median_ms: 60_000, total_ms: 120_000 });
    const md = (await run(["stats", "--study", "Hand study", "--md"])).out;
    expect(md).toContain("## Time on task");
    expect(md).toContain("| bruno | 1 | 30 s | 30 s |");
  });

  it("refuses bad options and unknown studies with exit code 2", async () => {
    expect(await run(["stats"])).toMatchObject({ code: 2, err: expect.stringContaining("--study is required") });
    expect(await run(["stats", "--study", "Hand study", "--json", "--md"])).toMatchObject({
      code: 2,
      err: "concord stats: give --json or --md, not both\n",
    });
    expect(await run(["stats", "--study", "Hand study", "--csv"])).toMatchObject({
      code: 2,
      err: expect.stringContaining("See --help"),
    });
    expect(await run(["stats", "--study", "Other"])).toMatchObject({
      code: 2,
      out: "",
      err: 'concord stats: No study named "Other". Known studies: "Hand study".\n',
    });
  });

  it("has help and is listed in the overview", async () => {
    const help = await run(["stats", "--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toContain("Usage: npm run concord -- stats --study NAME [--json | --md]");
    const overview = await run(["--help"]);
    expect(overview.out).toMatch(/\n {2}stats\s+Study report/);
  });
});
