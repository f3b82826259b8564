/**
 * The floor for export-gold in `npm run bench` (scripts/bench/bulk-import.ts): read a study's cases, sections and
 * reference labels with better-sqlite3 and write them as one indented JSON array — the least work an export of the
 * same records costs.
 *
 * Usage: node raw-export.mjs DB OUT.json
 */
import Database from "better-sqlite3";
import { writeFileSync } from "node:fs";

const [dbPath, out] = process.argv.slice(2);
const db = new Database(dbPath, { readonly: true });
const sections = db.prepare("select kind, content from case_sections where case_id = ? order by ord");
const records = db
  .prepare(
    "select c.id, c.external_id, c.age_group, c.sex, r.diagnosis_sufficiency, r.diagnosis from cases c left join reference_labels r on r.case_id = c.id order by c.position",
  )
  .all()
  .map((c) => ({ ...c, sections: sections.all(c.id) }));
writeFileSync(out, JSON.stringify(records, null, 2));
db.close();
