/**
 * The detector settings' files (docs/preparation.md, "Detectors"): a list file has one entry a line (blank lines
 * and lines starting with `#` left out); the score table is CSV (score-table.ts). Pure.
 */
export function parseListFile(text: string): string[] {
  return text
    .replace(/^\uFEFF/, "")
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}
