/**
 * Neutralising spreadsheet formulas in the CSVs Concord writes for people to open in Excel, LibreOffice or Google
 * Sheets (docs/security.md, "Spreadsheet exports"). A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage
 * return is evaluated as a formula there (`=HYPERLINK(…)`, `=cmd|' /C calc'!A0`), and model output, note text, ids
 * and usernames flow into those files. OWASP's recipe (CSV Injection): prefix such a cell with a single quote, which
 * the spreadsheet shows as text and does not evaluate; the CSV writer quotes the cell when it needs quoting.
 *
 * Two refinements, both so the files stay usable: a plain number (a negative κ such as `-0.25`) is not a formula
 * and is left alone; and a cell that already starts with quotes before such a character gets one more, so that
 * `fromSpreadsheetCell` (used where Concord reads its own exports back) restores every value exactly.
 *
 * Every CSV goes through here: the one CSV writer (`formatCsv`, `formatCsvRecord` in csv-text.ts) applies it to every
 * cell. The reference-format files other programs read stay byte-exact: the CSVs among them are listed in
 * csv-text.ts (`REFERENCE_FORMAT_CSV_FILES`); JSON and JSONL files are not spreadsheets.
 */

const TRIGGER = /^'*[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** The one neutraliser: the cell as it is safe to write into a CSV meant for a spreadsheet. */
export function spreadsheetCell(value: string): string {
  if (!TRIGGER.test(value) || PLAIN_NUMBER.test(value)) return value;
  return "'" + value;
}

/** Undoes `spreadsheetCell`, for files Concord wrote and reads back (`judge-report --labels labels.csv`). */
export function fromSpreadsheetCell(value: string): string {
  return /^'+[=+\-@\t\r]/.test(value) && !PLAIN_NUMBER.test(value.slice(1)) ? value.slice(1) : value;
}

/**
 * Whether an imported value looks like a spreadsheet formula, for the import's warnings: it starts with `=`, or
 * with `+`, `-` or `@` followed without a space by a function call or a DDE link (`@SUM(`, `-2+3+cmd|`). A list
 * item such as "- low mood" or a negative number is not flagged.
 */
export function looksLikeFormula(value: string): boolean {
  const v = value.trimStart();
  if (v.startsWith("=")) return v.length > 1;
  return /^[+\-@]\S*?[A-Za-z_][A-Za-z0-9_.]*\s*[(|!]/.test(v) && !/^[+\-@]\s/.test(v);
}

/** A short, printable excerpt of a flagged value for a warning line. */
export function formulaExcerpt(value: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must not reach a terminal
  const v = value.trimStart().replace(/[\u0000-\u001f\u007f]/g, " ");
  return JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v);
}

/**
 * One warning for a record's formula-like values (`looksLikeFormula`), naming each field, or null when there are
 * none. The values are kept as given; the CSVs for spreadsheets quote them.
 */
export function formulaWarning(fields: Record<string, string | null | undefined>): string | null {
  const hits = Object.entries(fields).filter(
    (e): e is [string, string] => typeof e[1] === "string" && looksLikeFormula(e[1]),
  );
  if (hits.length === 0) return null;
  return (
    `${hits.map(([name, value]) => `${name} ${formulaExcerpt(value)}`).join(", ")} start${hits.length === 1 ? "s" : ""} ` +
    "like a spreadsheet formula: kept as given, and quoted in the CSVs meant for spreadsheets."
  );
}
