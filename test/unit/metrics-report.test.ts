import { describe, expect, it } from "vitest";
import { computePaperMetrics } from "../../app/evaluation/domain/paper-metrics";
import { computeReferenceMetrics } from "../../app/evaluation/compat";
import { buildReport, formatMetric, metricsFigures } from "../../app/evaluation/domain/metrics-report";
import { renderSvg, svgToPng } from "../../app/charts/charts.server";
import { gold, record, runFile, s } from "../fixtures/runner/builders";

const GOLD = [
  gold({ id: "a", sufficient: true, code: "F32.1", tau: 2, T: 3 }),
  gold({ id: "b", sufficient: false, T: 3 }),
];
const files = [123, 42].flatMap((seed) => [
  runFile(
    [
      record("a", [s("Clarify"), s("Diagnose", "F32.1")], { strategy: "sequential_info_abstention_aware", seed, T: 3 }),
      record("b", [s(seed === 42 ? "Diagnose" : "Abstain", "F41.1")], {
        strategy: "sequential_info_abstention_aware",
        seed,
        T: 3,
      }),
    ],
    "m",
    "sequential_info_abstention_aware",
    seed,
  ),
  runFile(
    [
      record("a", [s("Diagnose", "F32.2")], { strategy: "full_info_abstention_aware", seed, T: 3 }),
      record("b", [s("Abstain")], { strategy: "full_info_abstention_aware", seed, T: 3 }),
    ],
    "m",
    "full_info_abstention_aware",
    seed,
  ),
]);

describe("the report", () => {
  it("formats metrics: mean ± s.d. [95% CI] over seeds, the scripts' two decimals in reference mode", () => {
    expect(formatMetric({ mean: 0.5, sd: 0.1, ci95: [0.2, 0.8], n: 2 }, "paper")).toBe("50.0% ± 10.0 [20.0–80.0]");
    expect(formatMetric({ mean: 1 / 3, sd: null, ci95: null, n: 1 }, "reference")).toBe("33.33%");
    expect(formatMetric(null, "paper")).toBe("—");
  });

  it("names its mode", () => {
    const paper = computePaperMetrics(GOLD, files);
    const text = buildReport(paper, {
      version: "0.1.0",
      goldPath: "data_gt.json",
      runs: ["runs"],
      figures: metricsFigures(paper),
    });
    expect(text).toMatch(/^# Concord evaluation metrics\n\n\*\*Mode: paper\*\*/);
    expect(text).toMatch(/\| m \| sequential_info_abstention_aware \| 2 \| 50\.0% ± 70\.7 \[/);
    expect(text).toMatch(/!\[Diagnostic accuracy\]\(figures\/accuracy\.svg\)/);
    const reference = computeReferenceMetrics(GOLD, files, files);
    expect(buildReport(reference, { version: "0.1.0", goldPath: "data_gt.json", runs: ["runs"], figures: [] })).toMatch(
      /\*\*Mode: reference\*\*/,
    );
  });

  it("draws the four figures deterministically, as SVG and PNG", async () => {
    const figures = metricsFigures(computePaperMetrics(GOLD, files));
    expect(figures.map((f) => f.id)).toEqual(["abstention-tradeoff", "timing", "cumulative", "accuracy"]);
    for (const f of figures) {
      const svg = await renderSvg(f.spec);
      expect(svg.startsWith("<svg")).toBe(true);
      expect(await renderSvg(f.spec)).toBe(svg);
      expect(svgToPng(svg).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    }
    // The scatter carries the 95% CI of both axes: under-abstention of seeds {123: 0, 42: 1} → 50% ± t₁·0.5·100.
    const scatter = figures[0].spec as unknown as { data: { values: Record<string, number | null>[] } };
    const seq = scatter.data.values.find((v) => String(v.strategy).startsWith("Sequential"))!;
    expect(seq.under).toBe(50);
    // 50 ± 635: the interval is clipped to the rate's range [0, 100] %, so it stays on the chart.
    expect([seq.under_low, seq.under_high]).toEqual([0, 100]);
  });

  it("draws the abstention scatter readably: a legend of the drawn models and strategies only, titled axes", async () => {
    const spec = metricsFigures(computePaperMetrics(GOLD, files))[0]!.spec as unknown as {
      layer: { encoding: Record<string, { title?: string; scale?: { domain: unknown[] } }> }[];
    };
    const points = spec.layer.at(-1)!.encoding;
    expect(points.color!.scale!.domain).toEqual(["m"]);
    // Two of the four strategies ran: the legend lists those two.
    expect(points.shape!.scale!.domain).toEqual(["Full info – abstention", "Sequential – abstention"]);
    expect(points.x!.title).toBe("Under-abstention (%): insufficient cases diagnosed");
    expect(points.y!.title).toBe("Over-abstention (%): sufficient cases not diagnosed");
    const svg = await renderSvg(metricsFigures(computePaperMetrics(GOLD, files))[0]!.spec);
    for (const text of ["Model", "Strategy", "Sequential – abstention", "Under-abstention (%)"])
      expect(svg).toContain(text);
    expect(svg).not.toContain("Sequential – no abstention");
  });

  it("leaves out figures it has nothing for", () => {
    expect(metricsFigures(computePaperMetrics(GOLD, []))).toEqual([]);
  });
});
