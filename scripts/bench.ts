/**
 * `npm run bench [-- --json] [-- --only NAME]`: every performance target of the issues, measured on this machine.
 * Each benchmark module in scripts/bench/ exports `benchmarks`: a list of { name, run } where run() resolves to
 * figures { name: { value, unit, target, pass } } and may print detail to stderr.
 */
import { parseArgs } from "node:util";
import type { Benchmark, Figures } from "./bench/types";
import { benchmarks as all } from "./bench/index";

const { values } = parseArgs({
  options: { json: { type: "boolean", default: false }, only: { type: "string" } },
});

const selected: Benchmark[] = values.only ? all.filter((b) => b.name === values.only) : all;
if (selected.length === 0) {
  console.error(`bench: no benchmark named "${values.only}". Known: ${all.map((b) => b.name).join(", ")}`);
  process.exit(2);
}
const figures: Figures = {};
for (const b of selected) {
  if (!values.json) console.log(`\n== ${b.name}`);
  const result = await b.run({ log: (line) => (values.json ? process.stderr : process.stdout).write(line + "\n") });
  Object.assign(figures, result);
}
if (values.json) {
  process.stdout.write(JSON.stringify(figures) + "\n");
} else {
  console.log("\nSummary");
  for (const [name, f] of Object.entries(figures)) {
    const target = f.target === null ? "" : ` (target ${f.target})`;
    const verdict = f.pass === null ? "" : f.pass ? "  PASS" : "  FAIL";
    console.log(`  ${name}: ${f.value} ${f.unit}${target}${verdict}`);
  }
}
