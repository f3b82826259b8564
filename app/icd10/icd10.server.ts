import { readFileSync } from "node:fs";
import { parseIcd10Table, type Icd10Index } from "./icd10";
import { fromRoot } from "../platform/paths.server";

let index: Icd10Index | undefined;

/** The WHO ICD-10 chapter V table shipped in app/data (see its README for provenance). */
export function icd10Index(): Icd10Index {
  return (index ??= parseIcd10Table(readFileSync(fromRoot("app", "data", "icd10-who-chapter-v.csv"), "utf8")));
}

/** The canonical code when `code` is a WHO chapter V category or subcategory, else null. */
export function canonicalChapterVCode(code: string): string | null {
  const check = icd10Index().checkDiagnosisCode(code);
  return check.ok ? check.entry.code : null;
}
