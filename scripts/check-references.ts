/**
 * Docs that cannot drift (docs/checks.md, "References"): every file path the docs and the code's comments name must
 * exist, every `path:symbol` must name something that file defines, and every Markdown link between the docs must
 * reach a file and, with `#anchor`, one of its headings. Prints each broken reference as `FILE:LINE: reason` and
 * exits 1 when there is one, so the gate (`npm run lint`) fails.
 *
 * Run: `npm run lint:refs` (tsx scripts/check-references.ts). `findBrokenReferences` is the check itself, for its
 * test.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const ROOTS = ["app", "db", "docs", "scripts", "test", "server.js", "README.md"] as const;

/** Files whose comments are the check's own test data. */
const SKIPPED = new Set(["test/unit/check-references.test.ts"]);

export interface BrokenReference {
  file: string;
  line: number;
  reason: string;
}

/**
 * A repository path as the docs and comments write it: starts at one of the top folders, then path characters, and
 * ends in a file name with an extension or in a folder's `/`. Remix's route names carry `$`, `[.]`, `_` and `.`.
 */
const PATH =
  /(?<![\w./-])((?:app|db|docs|scripts|test)\/[\w$.[\]\-/]*?(?:\.(?:tsx?|mjs|cjs|js|md|json|sql|csv|jsonl|py|txt|sh)|\/))(?::([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)?))?(?![\w[\]$-])/g;

/** Markdown links: `[text](target)`, the target without a scheme. */
const LINK = /\]\(([^)\s]+)\)/g;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) fence = !fence;
    if (fence) continue;
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = headingAnchor(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Whether `symbol` (or, for `A.b`, `A`) is defined or at least named as a word in the file's text. */
function definesSymbol(text: string, symbol: string): boolean {
  const name = symbol.split(".")[0]!;
  const escaped = name.replace(/\$/g, "\\$");
  return new RegExp(`(?<![\\w$])${escaped}(?![\\w$])`).test(text);
}

/** The comment text of a source file, line by line (code lines blank), so paths in strings and imports are skipped. */
export function commentLines(source: string): string[] {
  const out: string[] = [];
  let inBlock = false;
  for (const line of source.split("\n")) {
    let comment = "";
    let rest = line;
    for (;;) {
      if (inBlock) {
        const end = rest.indexOf("*/");
        if (end < 0) {
          comment += rest;
          break;
        }
        comment += rest.slice(0, end);
        rest = rest.slice(end + 2);
        inBlock = false;
        continue;
      }
      const block = rest.indexOf("/*");
      const lineComment = rest.search(/(^|[^:"'`])\/\//);
      if (lineComment >= 0 && (block < 0 || lineComment < block)) {
        comment += rest.slice(rest.indexOf("//", lineComment) + 2);
        break;
      }
      if (block < 0) break;
      inBlock = true;
      rest = rest.slice(block + 2);
    }
    out.push(comment);
  }
  return out;
}

function trackedFiles(root: string): string[] {
  const out = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", ...ROOTS], {
    cwd: root,
    encoding: "utf8",
  });
  return out.split("\n").filter((f) => f !== "" && existsSync(join(root, f)));
}

/** Every broken reference under `root` (a checkout of the repository). */
export function findBrokenReferences(root: string): BrokenReference[] {
  const broken: BrokenReference[] = [];
  const textCache = new Map<string, string>();
  const textOf = (path: string) => {
    let t = textCache.get(path);
    if (t === undefined) textCache.set(path, (t = readFileSync(join(root, path), "utf8")));
    return t;
  };
  const exists = (path: string) => existsSync(join(root, path));

  for (const file of trackedFiles(root)) {
    const isDoc = file.endsWith(".md");
    const isSource = /\.(tsx?|mjs|cjs|js)$/.test(file);
    if (!isDoc && !isSource) continue;
    if (file.startsWith("test/fixtures/") || SKIPPED.has(file)) continue;
    const text = textOf(file);
    const lines = isDoc ? text.split("\n") : commentLines(text);
    let fence = false;
    lines.forEach((line, i) => {
      if (isDoc && /^\s*```/.test(line)) fence = !fence;
      for (const m of line.matchAll(PATH)) {
        const [, path, symbol] = m;
        // A placeholder such as app/<area>/ or a glob (db/schema*.ts) names no one file.
        if (/[<>*]/.test(line.slice(m.index!, m.index! + m[0].length + 1))) continue;
        // Python files under scripts/ are the papers' own code in their repositories (MentalBench's
        // scripts/eval_type12.py), which the docs cite by their path there; this repository has none.
        if (/^scripts\/.*\.py$/.test(path!)) continue;
        const clean = path!.replace(/[.]$/, "");
        if (!exists(clean)) {
          broken.push({ file, line: i + 1, reason: `${clean} does not exist` });
          continue;
        }
        if (symbol && statSync(join(root, clean)).isFile() && !definesSymbol(textOf(clean), symbol))
          broken.push({ file, line: i + 1, reason: `${clean} has no ${symbol}` });
      }
      if (!isDoc || fence) return;
      for (const m of line.matchAll(LINK)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const [pathPart, anchor] = target.split("#") as [string, string | undefined];
        const resolved = pathPart === "" ? file : normalize(join(dirname(file), pathPart));
        if (relative(root, join(root, resolved)).startsWith("..") || !exists(resolved)) {
          broken.push({ file, line: i + 1, reason: `link to ${target}: no such file` });
          continue;
        }
        if (anchor && resolved.endsWith(".md") && !anchorsOf(textOf(resolved)).has(anchor))
          broken.push({ file, line: i + 1, reason: `link to ${target}: ${resolved} has no heading #${anchor}` });
      }
    });
  }
  return broken;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = join(dirname(new URL(import.meta.url).pathname), "..");
  const broken = findBrokenReferences(root);
  for (const b of broken) process.stderr.write(`${b.file}:${b.line}: ${b.reason}\n`);
  if (broken.length > 0) {
    process.stderr.write(`${broken.length} broken reference(s): see docs/checks.md, "References".\n`);
    process.exit(1);
  }
  process.stdout.write("References: every path, path:symbol and docs link resolves.\n");
}
