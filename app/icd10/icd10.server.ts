import { readFileSync } from "node:fs";
import { parseIcd10Table, type Icd10Index } from "./icd10";
import { parseIcd10Synonyms, type Icd10Synonym } from "./icd10-search";
import { fromRoot } from "../platform/paths.server";

let index: Icd10Index | undefined;
let synonyms: Icd10Synonym[] | undefined;

/** The WHO ICD-10 chapter V table shipped in app/data (see its README for provenance). */
export function icd10Index(): Icd10Index {
  return (index ??= parseIcd10Table(readFileSync(fromRoot("app", "data", "icd10-who-chapter-v.csv"), "utf8")));
}

/** The curated synonym table for the code search (docs/icd10.md#the-synonym-table), checked against the WHO table. */
export function icd10Synonyms(): Icd10Synonym[] {
  return (synonyms ??= parseIcd10Synonyms(
    readFileSync(fromRoot("app", "data", "icd10-synonyms.csv"), "utf8"),
    icd10Index(),
  ));
}

/** The canonical code when `code` is a WHO chapter V category or subcategory, else null. */
export function canonicalChapterVCode(code: string): string | null {
  const check = icd10Index().checkDiagnosisCode(code);
  return check.ok ? check.entry.code : null;
}
