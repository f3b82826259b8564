/**
 * Label spelling for the `agreement` command (docs/statistics.md, "Label spellings"): one number written two ways
 * ("1" and "1.0") would be two categories to the nominal coefficients but the same value to the weighted ones, so
 * the command refuses it unless `--normalize` applies irrCAC's reading (trimmed, upper-cased text; numbers by value).
 */
import { isNumericLabel } from "./index";
import { minOf } from "./extremes";

/**
 * `util.parseArgs` takes a value that starts with "-" for an option (`--order -7,4,99`) as another option and
 * answers "argument is ambiguous"; for the given options a following token that is not a long option is joined to
 * it as `--order=-7,4,99`.
 */
export function joinDashValues(argv: readonly string[], options: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    const next = argv[i + 1];
    if (
      options.includes(token.replace(/^--/, "")) &&
      token.startsWith("--") &&
      next?.startsWith("-") &&
      !next.startsWith("--")
    ) {
      out.push(`${token}=${next}`);
      i++;
    } else out.push(token);
  }
  return out;
}

/** irrCAC's reading of a label: a number by its value (`1.0` → `1`), anything else trimmed and upper-cased. */
export function normalizeLabel(label: string): string {
  const trimmed = label.trim();
  return isNumericLabel(trimmed) ? String(Number(trimmed)) : trimmed.toUpperCase();
}

export interface SpellingIssue {
  line: number;
  message: string;
}

/**
 * Numbers spelled more than one way (refused: the coefficients would disagree about them) and text labels that
 * differ only in case (a warning: they are distinct categories unless `--normalize`).
 */
export function mixedSpellings(rows: readonly { label: string; line: number }[]): {
  errors: SpellingIssue[];
  warnings: SpellingIssue[];
} {
  const byValue = new Map<string, Map<string, number>>();
  const byFolded = new Map<string, Map<string, number>>();
  for (const r of rows) {
    const numeric = isNumericLabel(r.label);
    const groups = numeric ? byValue : byFolded;
    const key = numeric ? String(Number(r.label)) : r.label.toUpperCase();
    const spellings = groups.get(key) ?? new Map<string, number>();
    if (!spellings.has(r.label)) spellings.set(r.label, r.line);
    groups.set(key, spellings);
  }
  const describe = (spellings: Map<string, number>) =>
    [...spellings].map(([label, line]) => `"${label}" (first on line ${line})`).join(", ");
  const errors: SpellingIssue[] = [];
  const warnings: SpellingIssue[] = [];
  for (const [value, spellings] of byValue)
    if (spellings.size > 1)
      errors.push({
        line: minOf(spellings.values()),
        message: `the number ${value} is spelled ${spellings.size} ways: ${describe(spellings)}; write it one way, or give --normalize to read labels by value`,
      });
  for (const spellings of byFolded.values())
    if (spellings.size > 1)
      warnings.push({
        line: minOf(spellings.values()),
        message: `labels ${describe(spellings)} differ only in case and count as different categories; --normalize merges them (as irrCAC does)`,
      });
  return { errors, warnings };
}
