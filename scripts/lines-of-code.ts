/**
 * Lines of code per area, counted from the files git knows (docs/architecture.md, "Lines of code"): TypeScript and
 * JavaScript (`.ts`, `.tsx`, `.js`, `.cjs`, `.mjs`), every line including blanks and comments; migrations, data and
 * docs not counted. The docs quote no figure by hand: run `npm run -s loc` (`--json` for one object).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const root = join(dirname(new URL(import.meta.url).pathname), "..");
const files = execFileSync("git", ["ls-files"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((f) => /\.(tsx?|js|cjs|mjs)$/.test(f));

/** The area a file counts under: `app/<folder>/`, `app/ (root files)`, a top folder, or the top-level config. */
function areaOf(file: string): string {
  const parts = file.split("/");
  if (parts[0] === "app") return parts.length > 2 ? `app/${parts[1]}/` : "app/ (root files)";
  return parts.length > 1 ? `${parts[0]}/` : "(top-level config)";
}

const counts = new Map<string, number>();
for (const file of files) {
  const text = readFileSync(join(root, file), "utf8");
  const lines = text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  counts.set(areaOf(file), (counts.get(areaOf(file)) ?? 0) + lines);
}
const areas = [...counts.keys()].sort();
const appTotal = areas.filter((a) => a.startsWith("app/")).reduce((s, a) => s + counts.get(a)!, 0);
const total = areas.reduce((s, a) => s + counts.get(a)!, 0);

if (process.argv.includes("--json")) {
  process.stdout.write(
    JSON.stringify({ areas: Object.fromEntries(areas.map((a) => [a, counts.get(a)])), appTotal, total }) + "\n",
  );
} else {
  const width = Math.max(...areas.map((a) => a.length), 14);
  for (const a of areas) process.stdout.write(`${a.padEnd(width)}  ${String(counts.get(a)).padStart(7)}\n`);
  process.stdout.write(`${"app/ total".padEnd(width)}  ${String(appTotal).padStart(7)}\n`);
  process.stdout.write(`${"all code".padEnd(width)}  ${String(total).padStart(7)}\n`);
}
