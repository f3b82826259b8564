/**
 * Targets (docs/statistics.md): all agreement coefficients on 100,000 two-rater items in <= 1 s, Krippendorff's alpha on
 * 10,000 items × 10 raters with 20% missing in <= 1 s, and linear growth from 10k to 100k items.
 * Each figure is the median of several runs after a warm-up, on data from a seeded generator.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseRatingsCsv, readCodedRatings } from "../../app/stats/ratings-csv";
import {
  buildCodedRatingTable,
  buildRatingTable,
  krippendorffAlpha,
  summariseAgreement,
  type RatingRow,
} from "../../app/stats/index";
import { readText, readTextChunks } from "../../app/cli/io";
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

/** A two-rater ratings CSV of `items` items written straight to disk (no object per rating in this process). */
function writeTwoRaterCsv(path: string, items: number): void {
  const random = prng(11);
  const fd = openSync(path, "w");
  let buffer = "item,rater,label\n";
  for (let i = 0; i < items; i++) {
    const truth = Math.floor(random() * 4);
    for (let r = 0; r < 2; r++) {
      if (random() < 0.05) continue;
      const label = random() < 0.8 ? truth : Math.floor(random() * 4);
      buffer += `item-${i},rater-${r},${label}\n`;
    }
    if (buffer.length > 1 << 20) {
      writeSync(fd, buffer);
      buffer = "";
    }
  }
  writeSync(fd, buffer);
  closeSync(fd);
}

/** Wall seconds and peak resident MiB of a child process (the exit hook reports the child's own peak). */
function measured(command: string, args: string[]): { seconds: number; mib: number; stdout: string } {
  const start = performance.now();
  const r = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 << 20 });
  const seconds = (performance.now() - start) / 1000;
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${r.stderr}`);
  const peak = /peak-rss-kib (\d+)/.exec(r.stderr);
  return { seconds, mib: peak ? Number(peak[1]) / 1024 : NaN, stdout: r.stdout };
}

const NODE_PEAK =
  "data:text/javascript,process.on('exit',()=>process.stderr.write('peak-rss-kib '+process.resourceUsage().maxRSS+'\\n'))";
const PYTHON_PEAK = (script: string, file: string) => [
  "-c",
  `import resource,runpy,sys,atexit\natexit.register(lambda: sys.stderr.write('peak-rss-kib %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\nsys.argv=['x',${JSON.stringify(file)}]\nrunpy.run_path(${JSON.stringify(script)}, run_name='__main__')`,
];

/**
 * `agreement` at scale (docs/statistics.md#at-scale): the compiled command on 1M two-rater items against the
 * numpy comparator in scripts/bench/comparators/agreement.py, run in the same invocation; peak memory of the command;
 * and the in-process time of read + table + coefficients from 10k to 1M items, which must grow linearly.
 */
async function atScale(log: (line: string) => void): Promise<Figures> {
  const figures: Figures = {};
  const dir = mkdtempSync(join(tmpdir(), "concord-bench-stats-"));
  try {
    const files: Record<number, string> = {};
    for (const items of [10_000, 100_000, 1_000_000]) {
      files[items] = join(dir, `ratings-${items}.csv`);
      writeTwoRaterCsv(files[items], items);
    }
    const inProcess: Record<number, number> = {};
    for (const items of [10_000, 100_000, 1_000_000]) {
      const path = files[items];
      inProcess[items] = medianMs(
        () => {
          const coded = readCodedRatings(readTextChunks(path), () => readText(path));
          summariseAgreement(buildCodedRatingTable(coded), { scale: "nominal" });
        },
        items === 1_000_000 ? 3 : 5,
      );
      log(`agreement in process (read, code, table, coefficients), ${items} two-rater items: ${inProcess[items]} ms`);
    }
    const perItem = (items: number) => inProcess[items] / items;
    const growth = Math.round((perItem(1_000_000) / perItem(10_000)) * 100) / 100;
    log(`time per item at 1M ÷ at 10k: ×${growth} (linear: ×1)`);
    figures["stats.agreement_per_item_growth_10k_to_1m"] = figure(growth, "x", "<= 1.5", growth <= 1.5);
    // The 10k run is mostly fixed costs; the last step shows whether the per-item cost itself grows.
    const lastStep = Math.round((perItem(1_000_000) / perItem(100_000)) * 100) / 100;
    log(`time per item at 1M ÷ at 100k: ×${lastStep} (linear: ×1)`);
    figures["stats.agreement_per_item_growth_100k_to_1m"] = figure(lastStep, "x", "<= 1.5", lastStep <= 1.5);

    const cli = fileURLToPath(new URL("../../build/cli/concord.js", import.meta.url));
    const ours = measured(process.execPath, [
      "--import",
      NODE_PEAK,
      cli,
      "agreement",
      "--ratings",
      files[1_000_000],
      "--json",
    ]);
    const ourValues = JSON.parse(ours.stdout) as { cohen_kappa: number };
    log(`concord agreement, 1M two-rater items: ${ours.seconds.toFixed(2)} s, peak ${ours.mib.toFixed(0)} MiB`);
    figures["stats.agreement_1m_items_s"] = figure(Math.round(ours.seconds * 100) / 100, "s", null, null);
    figures["stats.agreement_1m_items_peak_mib"] = figure(Math.round(ours.mib), "MiB", "<= 600", ours.mib <= 600);
    const small = measured(process.execPath, [
      "--import",
      NODE_PEAK,
      cli,
      "agreement",
      "--ratings",
      files[10_000],
      "--json",
    ]);
    const memoryGrowth = Math.round((ours.mib / small.mib) * 100) / 100;
    log(`peak memory 1M ÷ 10k items: ×${memoryGrowth} (${small.mib.toFixed(0)} MiB at 10k; ×100 items)`);

    const script = fileURLToPath(new URL("./comparators/agreement.py", import.meta.url));
    const probe = spawnSync("python3", ["-c", "import numpy"], { encoding: "utf8" });
    if (probe.status !== 0) {
      log("python3 with numpy is not available: the comparator is skipped");
    } else {
      const theirs = measured("python3", PYTHON_PEAK(script, files[1_000_000]));
      const theirValues = JSON.parse(theirs.stdout) as { cohen_kappa: number };
      if (Math.abs(theirValues.cohen_kappa - ourValues.cohen_kappa) > 1e-9)
        throw new Error(`the comparator's kappa ${theirValues.cohen_kappa} differs from ours ${ourValues.cohen_kappa}`);
      const ratio = Math.round((ours.seconds / theirs.seconds) * 100) / 100;
      log(
        `python3 + numpy comparator, same file: ${theirs.seconds.toFixed(2)} s, peak ${theirs.mib.toFixed(0)} MiB; ` +
          `concord ÷ comparator = ${ratio}`,
      );
      figures["stats.agreement_1m_vs_python_ratio"] = figure(ratio, "x", "<= 1", ratio <= 1);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}

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
      Object.assign(figures, await atScale(log));
      return figures;
    },
  },
];
