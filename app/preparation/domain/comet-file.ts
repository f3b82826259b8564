/**
 * The COMET scores file (docs/preparation.md, "Quality"; docs/formats.md): one score per note and section, computed
 * elsewhere. CSV with the header `note_id,section,score`, or JSONL with those keys. `note_id` is the note's id as
 * imported (its external id); `section` the section's number in the note (0-based, as the translations number it)
 * or its kind ("mental_status"); `score` a number. This reads and checks the file alone; which notes and sections
 * exist is checked by the import, in its transaction (quality.server.ts:importCometScores).
 */
import { DuplicateRows, importIdProblem } from "../../formats/import-contract";
import { readCsv } from "../../formats/csv";
import { isJsonObject, readJsonl } from "../../formats/jsonl";

export interface CometRow {
  line: number;
  noteId: string;
  /** A section number, or a section's kind to look up. */
  section: number | string;
  score: number;
}

export interface CometIssue {
  line: number;
  message: string;
}

export const COMET_COLUMNS = ["note_id", "section", "score"] as const;

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function rowOf(line: number, raw: Record<string, unknown>, errors: CometIssue[]): CometRow | null {
  const problems: string[] = [];
  const id =
    typeof raw.note_id === "string" ? raw.note_id.trim() : typeof raw.note_id === "number" ? String(raw.note_id) : "";
  if (id === "") problems.push("note_id is empty");
  else {
    const p = importIdProblem(id, "note_id");
    if (p) problems.push(p);
  }
  let section: number | string | null = null;
  const rawSection = raw.section;
  if (typeof rawSection === "number" && Number.isInteger(rawSection) && rawSection >= 0) section = rawSection;
  else if (typeof rawSection === "string" && /^\d+$/.test(rawSection.trim())) section = Number(rawSection.trim());
  else if (typeof rawSection === "string" && /^[a-z_]{1,64}$/.test(rawSection.trim())) section = rawSection.trim();
  else problems.push("section must be a section's number (0, 1, …) or its kind");
  let score: number | null = null;
  const rawScore = raw.score;
  if (typeof rawScore === "number" && Number.isFinite(rawScore)) score = rawScore;
  else if (typeof rawScore === "string" && NUMBER.test(rawScore.trim())) score = Number(rawScore.trim());
  if (score === null || !Number.isFinite(score)) problems.push("score must be a number");
  if (problems.length) {
    errors.push({ line, message: problems.join("; ") });
    return null;
  }
  return { line, noteId: id, section: section!, score: score! };
}

/** The file's rows, or every problem by line; a note and section given twice is refused, naming both lines. */
export function parseCometFile(text: string, format: "csv" | "jsonl"): { rows: CometRow[]; errors: CometIssue[] } {
  const errors: CometIssue[] = [];
  const rows: CometRow[] = [];
  const take = (line: number, raw: Record<string, unknown>) => {
    const row = rowOf(line, raw, errors);
    if (row) rows.push(row);
  };
  if (format === "csv") {
    const read = readCsv(text);
    if ("error" in read)
      return { rows: [], errors: [{ line: read.error.line, message: `the CSV cannot be read: ${read.error.reason}` }] };
    const [header, ...records] = read.records;
    if (!header) return { rows: [], errors: [{ line: 0, message: "the file has no header" }] };
    const names = header.cells.map((c) => c.trim());
    const missing = COMET_COLUMNS.filter((c) => !names.includes(c));
    const extra = names.filter((c) => !(COMET_COLUMNS as readonly string[]).includes(c));
    if (missing.length || extra.length)
      return {
        rows: [],
        errors: [
          {
            line: header.line,
            message: `the header must name the columns ${COMET_COLUMNS.join(", ")}${missing.length ? `; missing: ${missing.join(", ")}` : ""}${extra.length ? `; unknown: ${extra.join(", ")}` : ""}`,
          },
        ],
      };
    if (records.length === 0)
      return { rows: [], errors: [{ line: header.line, message: "the file has a header and no scores" }] };
    for (const r of records) {
      if (r.cells.length !== names.length) {
        errors.push({ line: r.line, message: `expected ${names.length} cells, found ${r.cells.length}` });
        continue;
      }
      take(r.line, Object.fromEntries(names.map((n, i) => [n, r.cells[i]])));
    }
  } else {
    for (const entry of readJsonl(text)) {
      if ("invalid" in entry) errors.push({ line: entry.line, message: `not valid JSON: ${entry.invalid}` });
      else if (!isJsonObject(entry.value))
        errors.push({ line: entry.line, message: "each line must be a JSON object" });
      else {
        const extra = Object.keys(entry.value).filter((k) => !(COMET_COLUMNS as readonly string[]).includes(k));
        if (extra.length) errors.push({ line: entry.line, message: `unknown key ${extra.join(", ")}` });
        else take(entry.line, entry.value);
      }
    }
  }
  const seen = new DuplicateRows();
  for (const r of rows) {
    const key = `${r.noteId}\u0000${r.section}`;
    const dup = seen.see(key, r.line, String(r.score), "the note and section");
    if (dup)
      errors.push({
        line: r.line,
        message: `note ${JSON.stringify(r.noteId)} section ${r.section} is given twice: on line ${"repeat" in dup ? dup.repeat : firstLine(rows, r)} and on line ${r.line}`,
      });
  }
  errors.sort((a, b) => a.line - b.line);
  return { rows: errors.length ? [] : rows, errors };
}

function firstLine(rows: readonly CometRow[], r: CometRow): number {
  return rows.find((o) => o.noteId === r.noteId && o.section === r.section)!.line;
}
