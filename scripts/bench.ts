/**
 * `npm run bench [-- --json] [-- --only NAME] [-- --runs N]`: every performance target of the issues, measured on
 * this machine. Each benchmark module in scripts/bench/ exports `benchmarks`: a list of { name, run } where run()
 * resolves to figures { name: { value, unit, target, pass } } and may print detail to stderr.
 *
 * `--runs N` (N > 1) runs the selection N times, each run in its own process (this script again, with `--json`),
 * one after another, and reports per figure the median of the runs as its value, with the spread (least, greatest
 * and every run's value) printed beside it; a figure passes when it passed in most runs. The JSON shape is the same
 * as one run's. Generated data sets are kept between runs (scripts/bench/dataset-cache.ts).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { Benchmark, Figure, Figures } from "./bench/types";
import { benchmarks as all } from "./bench/index";

const { values } = parseArgs({
  options: {
    json: { type: "boolean", default: false },
    only: { type: "string" },
    runs: { type: "string", default: "1" },
  },
});

const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`bench: --runs takes a whole number of runs, at least 1, not "${values.runs}"`);
  process.exit(2);
}
const selected: Benchmark[] = values.only ? all.filter((b) => b.name === values.only) : all;
if (selected.length === 0) {
  console.error(`bench: no benchmark named "${values.only}". Known: ${all.map((b) => b.name).join(", ")}`);
  process.exit(2);
}

/** Per figure, its spread over the runs (`--runs`), for the summary. */
const spreads = new Map<string, string>();
const out = (line: string) => (values.json ? process.stderr : process.stdout).write(line + "\n");
const figures: Figures = runs === 1 ? await once() : repeated(runs);
if (values.json) {
  process.stdout.write(JSON.stringify(figures) + "\n");
} else {
  console.log("\nSummary");
  for (const [name, f] of Object.entries(figures)) {
    const target = f.target === null ? "" : ` (target ${f.target})`;
    const verdict = f.pass === null ? "" : f.pass ? "  PASS" : "  FAIL";
    console.log(`  ${name}: ${f.value} ${f.unit}${target}${verdict}${spreads.get(name) ?? ""}`);
  }
}

/** One run of the selection in this process. */
async function once(): Promise<Figures> {
  const result: Figures = {};
  for (const b of selected) {
    if (!values.json) console.log(`\n== ${b.name}`);
    Object.assign(result, await b.run({ log: out }));
  }
  return result;
}

/** `n` runs, each in its own process; the median of each figure, its spread, and the verdict of most runs. */
function repeated(n: number): Figures {
  const each: Figures[] = [];
  for (let k = 1; k <= n; k++) {
    out(`\n== run ${k} of ${n}`);
    const args = [fileURLToPath(import.meta.url), "--json", ...(values.only ? ["--only", values.only] : [])];
    const r = spawnSync(process.execPath, [...process.execArgv, ...args], {
      stdio: ["ignore", "pipe", "inherit"],
      encoding: "utf8",
      maxBuffer: 64 << 20,
    });
    if (r.status !== 0) {
      console.error(`bench: run ${k} of ${n} failed (exit ${r.status})`);
      process.exit(1);
    }
    each.push(JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Figures);
  }
  const result: Figures = {};
  for (const name of Object.keys(each[0]!)) {
    const seen = each.map((f) => f[name]).filter((f): f is Figure => f !== undefined);
    const sorted = seen.map((f) => f.value).sort((a, b) => a - b);
    // The middle run (the lower of the two middle ones for an even number of runs).
    const median = sorted[(sorted.length - 1) >> 1]!;
    const verdicts = seen.map((f) => f.pass).filter((p): p is boolean => p !== null);
    result[name] = {
      ...seen[0]!,
      value: median,
      pass: verdicts.length === 0 ? null : verdicts.filter(Boolean).length * 2 > verdicts.length,
    };
    const spread = `  [runs: ${seen.map((f) => f.value).join(" / ")}; spread ${sorted[0]}–${sorted.at(-1)}]`;
    spreads.set(name, spread);
    if (values.json) out(`  ${name}: median ${median} ${seen[0]!.unit}${spread}`);
  }
  return result;
}
