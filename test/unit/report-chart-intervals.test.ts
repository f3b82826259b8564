/**
 * The report's coefficient charts (docs/statistics.md, "The study agreement report"): an interval is drawn within
 * the value axis — one that reaches 1 ends at 1, one below the axis's floor ends at the floor — and the legend lists
 * only the statistics the chart draws. Checked on the rendered SVG, the way a reader sees the chart.
 */
import type { TopLevelSpec } from "vega-lite";
import { describe, expect, it } from "vitest";
import { renderSvg } from "../../app/charts/charts.server";
import {
  drawnStatistics,
  groupedCoefficientChart,
  type ChartValue,
} from "../../app/study-report/domain/study-report-charts";

const STATS = ["Percent agreement", "Cohen's kappa", "Gwet's AC1"];

function row(group: string, statistic: string, value: number | null, ci: [number, number] | null) {
  return { group, statistic, value, se: null, ci_low: ci?.[0] ?? null, ci_high: ci?.[1] ?? null };
}

async function render(rows: Record<string, ChartValue>[]): Promise<string> {
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    data: { values: rows },
    ...groupedCoefficientChart("group", ["A", "B"], STATS, rows),
  } as unknown as TopLevelSpec;
  return renderSvg(spec);
}

/** The y coordinates (relative to the plot) of every rule mark's two ends in a Vega SVG. */
function ruleEnds(svg: string): number[] {
  const group = svg.match(/<g class="mark-rule role-mark[^"]*"[^>]*>(.*?)<\/g>/s)?.[1] ?? "";
  return [...group.matchAll(/transform="translate\(([-\d.]+),([-\d.]+)\)" x2="[-\d.]+" y2="([-\d.]+)"/g)].flatMap(
    (m) => [Number(m[2]), Number(m[2]) + Number(m[3])],
  );
}

describe("coefficient charts", () => {
  it("draws an interval that reaches or passes 1 up to 1 and no further, and one far below the floor to the floor", async () => {
    // The value axis runs from the lowest value or bound rounded down (here −0.5) to 1, over a 220-pixel plot.
    const rows = [
      row("A", "Percent agreement", 0.9, [0.8, 1]),
      row("A", "Cohen's kappa", 0.7, [0.4, 1.4]),
      row("A", "Gwet's AC1", 0.8, [0.6, 1]),
      row("B", "Percent agreement", 0.6, [0.3, 0.9]),
      row("B", "Cohen's kappa", -0.4, [-0.45, 0.2]),
      row("B", "Gwet's AC1", 0.5, [0.1, 0.9]),
    ];
    const ends = ruleEnds(await render(rows));
    expect(ends).toHaveLength(12);
    for (const y of ends) {
      expect(y).toBeGreaterThanOrEqual(0);
      expect(y).toBeLessThanOrEqual(220);
    }
    // The three intervals that reach 1 (one of them computed past it) end exactly at the top of the axis.
    expect(ends.filter((y) => y === 0)).toHaveLength(3);
  });

  it("lists in the legend only the statistics it draws; the others keep their colours", async () => {
    const rows = [
      row("A", "Percent agreement", 0.9, null),
      row("A", "Cohen's kappa", null, null),
      row("A", "Gwet's AC1", 0.8, [0.6, 1]),
      row("B", "Percent agreement", 0.6, null),
      row("B", "Cohen's kappa", null, null),
      row("B", "Gwet's AC1", 0.5, [0.1, 0.9]),
    ];
    expect(drawnStatistics(STATS, rows)).toEqual(["Percent agreement", "Gwet's AC1"]);
    const svg = await render(rows);
    const legend = svg.match(/<g class="mark-group role-legend"[^>]*>.*$/s)?.[0] ?? "";
    expect(legend).toContain("Percent agreement");
    expect(legend).toContain("AC1");
    expect(svg).not.toMatch(/Cohen(&#x27;|&#39;|')s kappa/);
    // Gwet's AC1 keeps the third colour of the palette although κ, the second, is not drawn.
    expect(svg).toContain("#9CC75B");
    expect(svg).not.toContain("#DD615D");
  });
});
