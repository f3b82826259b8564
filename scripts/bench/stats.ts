/**
 * Issue 5 targets: all agreement coefficients on 100,000 two-rater items in <= 1 s, Krippendorff's alpha on
 * 10,000 items × 10 raters with 20% missing in <= 1 s, and linear growth from 10k to 100k items.
 * Each figure is the median of several runs after a warm-up, on data from a seeded generator.
 */
import { performance } from "node:perf_hooks";
import { parseRatingsCsv } from "../../app/stats/ratings-csv";
import { buildRatingTable, krippendorffAlpha, summariseAgreement, type RatingRow } from "../../app/stats/index";
import type { Benchmark, Figures } from "./types";

/** mulberry32: a small seeded PRNG, good enough to make benchmark data reproducible. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Raters who agree with a latent label with probability `agreement`, else pick any of `categories` labels. */
function ratings(options: {
  items: number;
  raters: number;
  categories: number;
  missing: number;
  agreement: number;
  seed: number;
}): RatingRow[] {
  const random = prng(options.seed);
  const rows: RatingRow[] = [];
  for (let i = 0; i < options.items; i++) {
    const truth = Math.floor(random() * options.categories);
    for (let r = 0; r < options.raters; r++) {
      if (random() < options.missing) continue;
      const label = random() < options.agreement ? truth : Math.floor(random() * options.categories);
      rows.push({ item: `item-${i}`, rater: `rater-${r}`, label: String(label) });
    }
  }
  return rows;
}

function medianMs(run: () => void, repeats = 5): number {
  run(); // warm-up: JIT and allocation
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return Math.round(times[Math.floor(times.length / 2)] * 10) / 10;
}

/** Everything the `agreement` command computes, from rows: table, nominal summary, ordinal summary with weights. */
function allCoefficients(rows: RatingRow[]): void {
  const table = buildRatingTable(rows);
  summariseAgreement(table, { scale: "ordinal", weights: "quadratic" });
  krippendorffAlpha(table, "nominal");
  krippendorffAlpha(table, "interval");
}

const figure = (value: number, unit: string, target: string | null, pass: boolean | null) => ({
  value,
  unit,
  target,
  pass,
});

export const benchmarks: Benchmark[] = [
  {
    name: "stats",
    async run({ log }) {
      const figures: Figures = {};
      const twoRaters = (items: number) =>
        ratings({ items, raters: 2, categories: 4, missing: 0.05, agreement: 0.8, seed: 5 });

      const sizes = [10_000, 50_000, 100_000];
      const times: Record<number, number> = {};
      for (const items of sizes) {
        const rows = twoRaters(items);
        times[items] = medianMs(() => allCoefficients(rows));
        log(`all coefficients, ${items} two-rater items (${rows.length} ratings): ${times[items]} ms`);
        figures[`stats.all_coefficients_${items / 1000}k_items_ms`] =
          items === 100_000
            ? figure(times[items], "ms", "<= 1000", times[items] <= 1000)
            : figure(times[items], "ms", null, null);
      }
      // Linear time means ×10 from 10k to 100k items (less when fixed costs still weigh at 10k) and ×2 from 50k
      // to 100k; a quadratic step would show ×100 and ×4.
      const growth = Math.round((times[100_000] / times[10_000]) * 100) / 100;
      const lastDoubling = Math.round((times[100_000] / times[50_000]) * 100) / 100;
      log(`growth: ×${growth} from 10k to 100k items, ×${lastDoubling} from 50k to 100k (linear: ×10 and ×2)`);
      figures["stats.growth_10k_to_100k_items"] = figure(growth, "x", "<= 15", growth <= 15);
      figures["stats.growth_50k_to_100k_items"] = figure(lastDoubling, "x", "<= 3", lastDoubling <= 3);

      const multi = ratings({ items: 10_000, raters: 10, categories: 5, missing: 0.2, agreement: 0.7, seed: 7 });
      const alphaMs = medianMs(() => {
        const table = buildRatingTable(multi);
        for (const level of ["nominal", "ordinal", "interval"] as const) krippendorffAlpha(table, level);
      });
      log(
        `Krippendorff's alpha (nominal, ordinal and interval, table build included), 10k items × 10 raters, ` +
          `20% missing (${multi.length} ratings): ${alphaMs} ms`,
      );
      figures["stats.krippendorff_alpha_10k_x10_missing20_ms"] = figure(alphaMs, "ms", "<= 1000", alphaMs <= 1000);

      const text = ["item,rater,label", ...twoRaters(100_000).map((r) => `${r.item},${r.rater},${r.label}`)].join("\n");
      const parseMs = medianMs(() => parseRatingsCsv(text), 3);
      log(`parse a 100k-item ratings CSV (${(text.length / 1e6).toFixed(1)} MB): ${parseMs} ms`);
      figures["stats.parse_ratings_csv_100k_items_ms"] = figure(parseMs, "ms", null, null);
      return figures;
    },
  },
];
