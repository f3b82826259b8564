/**
 * Section kinds of a clinical note and the compacted numbering every section number in Concord uses
 * (docs/safe-psych.md#cases-and-sections: a section is present when its trimmed text is not empty; present sections
 * keep column order and are renumbered 1..T consecutively).
 */
import { pyStrip } from "../../python-compat/text";

export const SECTION_KINDS = [
  "presenting_symptoms",
  "psychiatric_history",
  "psychiatric_exam",
  "psychological_exam",
  "secondary_diagnoses",
] as const;

export type SectionKind = (typeof SECTION_KINDS)[number];

export const SECTION_TITLES: Record<SectionKind, string> = {
  presenting_symptoms: "Presenting symptoms",
  psychiatric_history: "Psychiatric history",
  psychiatric_exam: "Psychiatric examination",
  psychological_exam: "Psychological examination",
  secondary_diagnoses: "Secondary diagnoses",
};

export const MIN_SECTIONS = 3;
export const MAX_SECTIONS = 5;

export interface Section {
  /** 1..T, compacted. */
  order: number;
  kind: SectionKind;
  content: string;
}

/** Keeps the non-empty sections in column order and numbers them 1..T. */
export function compactSections(byKind: Partial<Record<SectionKind, string | null | undefined>>): Section[] {
  const sections: Section[] = [];
  for (const kind of SECTION_KINDS) {
    const content = pyStrip(byKind[kind] ?? "");
    if (content !== "") sections.push({ order: sections.length + 1, kind, content });
  }
  return sections;
}

export const AGE_GROUPS = ["18-27", "28-37", "38-47", "48-57", "58-67", "68-77", "78+"] as const;

/** Accepts the bins written with a hyphen or an en dash; returns null for anything else (kept verbatim, warned). */
export function normaliseAgeGroup(value: string): (typeof AGE_GROUPS)[number] | null {
  const v = value.replace(/[\u2013\u2014]/g, "-").replace(/\s+/g, "");
  return (AGE_GROUPS as readonly string[]).includes(v) ? (v as (typeof AGE_GROUPS)[number]) : null;
}
