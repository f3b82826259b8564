/**
 * The report's tables from run records built here by hand: one row per model and seed, the mean over seeds after a
 * model's seeds, each paper's columns, percentages with two decimals.
 */
import { describe, expect, it } from "vitest";
import { parseItems } from "../../app/mc-evaluation/domain/items";
import { responseRecord } from "../../app/mc-evaluation/domain/records";
import {
  buildReport,
  parseClusters,
  reportMarkdown,
  reportTables,
  type LoadedRun,
} from "../../app/mc-evaluation/report";

const items = parseItems(
  [
    { id: "1", type: "I", answer: "A. w" },
    { id: "2", type: "III", answer: "A & B) w, x" },
    { id: "3", type: "IV", answer: "C. y" },
  ]
    .map((i) => JSON.stringify({ question: "q", options: ["w", "x", "y", "z"], disease: "MDD", ...i }))
    .join("\n"),
  { csv: false },
).items;

function run(model: string, seed: number, answers: string[]): LoadedRun {
  return {
    dir: `${model}-${seed}`,
    run: {
      format: "concord-mc-run/1",
      model: { name: model, key: model, base_url: "u" },
      items_format: "mentalbench",
      seed,
      decoding: { temperature: 0 },
      mentalbench_style: "paper",
      few_shot: null,
      prompts: {},
      num_items: 3,
      status: "complete",
      answered: 3,
    },
    records: items.map((it, i) => responseRecord(it, [], answers[i]!, 1, 0)),
    responsesSha256: "",
  };
}

describe("report tables", () => {
  const report = buildReport(
    [run("n", 0, ["B", "A", "C"]), run("m", 1, ["A", "A & B", "B"]), run("m", 0, ["A", "A", ""])],
    { reps: 10, seed: 0, alpha: 0.05 },
  );
  const table2 = reportTables(report).find((t) => t.name === "mentalbench-table2")!;

  it("one row per model and seed, sorted, and the mean of a model's seeds", () => {
    expect(table2.rows.map((r) => r.slice(0, 2))).toEqual([
      ["m", "0"],
      ["m", "1"],
      ["m", "mean of 2 seeds"],
      ["n", "0"],
    ]);
    // m seed 0: I right, III wrong ({A} ≠ {A, B}), IV unparsed (empty) → Overall (1·1 + 1·0) / 2 over the types
    // with a parsed answer (no Type II items here); seed 1: I, III right, IV wrong → 2/3.
    expect(table2.rows[0]!.slice(2, 8)).toEqual(["100.00", "—", "0.00", "—", "50.00", "—"]);
    expect(table2.rows[1]!.slice(2, 8)).toEqual(["100.00", "—", "100.00", "0.00", "66.67", "100.00"]);
    // The mean over the seeds with a value: Overall (50 + 66.67) / 2, unparsed (1 + 0) / 2; Type IV and the gap
    // only from seed 1.
    expect(table2.rows[2]!.slice(2, 9)).toEqual(["100.00", "—", "50.00", "0.00", "58.33", "100.00", "0.5"]);
  });

  it("the parse counts and the Markdown report", () => {
    const counts = reportTables(report).find((t) => t.name === "parse-counts")!;
    expect(counts.rows.find((r) => r[0] === "m" && r[1] === "0")!.slice(5, 9)).toEqual(["2", "0", "0", "1"]);
    expect(reportMarkdown(report)).toMatch(/## MentalBench: accuracy \(%, exact set match\) per case type/);
  });
});

describe("clusters from a disease,cluster file", () => {
  it("fill the cluster of items without one, and the file is validated by line", () => {
    const { clusters, errors } = parseClusters("disease,cluster\nMDD,depressive\n");
    expect(errors).toEqual([]);
    const report = buildReport([run("m", 0, ["A", "A & B", "C"])], { reps: 10, seed: 0, alpha: 0.05 }, clusters);
    expect(report.mentalbench[0]!.scores.by_cluster.depressive).toMatchObject({ n: 3, correct: 3, accuracy: 1 });
    expect(parseClusters("disease,cluster\nMDD,a\nMDD,b\n,c\n").errors).toEqual([
      { line: 3, message: "disease MDD listed twice" },
      { line: 4, message: "disease and cluster must not be empty" },
    ]);
    expect(parseClusters("name,group\n").errors[0]!.message).toMatch(/disease and cluster/);
  });
});
