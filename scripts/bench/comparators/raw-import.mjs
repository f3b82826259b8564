/**
 * The floor for `npm run bench` (scripts/bench/bulk-import.ts): the least work that puts a released CSV's cases and
 * sections into SQLite with better-sqlite3 — read the file, split it into CSV records, insert with two prepared
 * statements in one transaction. No validation, no audit, no hashing: what any import costs at least.
 *
 * Usage: node raw-import.mjs DATA.csv DB
 */
import Database from "better-sqlite3";
import { readFileSync } from "node:fs";

const [src, dbPath] = process.argv.slice(2);
const text = readFileSync(src, "utf8");

function* records(s) {
  let row = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (quoted) {
      if (ch !== '"') field += ch;
      else if (s[i + 1] === '"') {
        field += '"';
        i++;
      } else quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      row.push(field);
      field = "";
    } else if (ch === "\n") {
      row.push(field);
      yield row;
      row = [];
      field = "";
    } else if (ch !== "\r") field += ch;
  }
  if (field || row.length) {
    row.push(field);
    yield row;
  }
}

const db = new Database(dbPath);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
db.exec(`create table cases (id integer primary key, external_id text unique, age_group text, sex text);
         create table case_sections (case_id integer, ord integer, kind text, content text, primary key (case_id, ord));`);
const insertCase = db.prepare("insert into cases (external_id, age_group, sex) values (?, ?, ?)");
const insertSection = db.prepare("insert into case_sections values (?, ?, ?, ?)");
const kinds = [
  "presenting_symptoms",
  "psychiatric_history",
  "psychiatric_exam",
  "psychological_exam",
  "secondary_diagnoses",
];
db.transaction(() => {
  let header = true;
  for (const r of records(text)) {
    if (header) {
      header = false;
      continue;
    }
    const id = Number(insertCase.run(r[0], r[1], r[2]).lastInsertRowid);
    let ord = 0;
    for (let k = 0; k < 5; k++) if (r[3 + k]?.trim()) insertSection.run(id, ++ord, kinds[k], r[3 + k].trim());
  }
})();
db.close();
