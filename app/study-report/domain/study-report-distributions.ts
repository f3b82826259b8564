/** The study report's distributions of the gold labels, and the agreement flags imported with reference data. */
import { type ExpertAction, expertActionLabels } from "../../gold/public";
import { MISSING_INFO_KEYS } from "../../labels/labels";
import { parseIcd10 } from "../../icd10/icd10";
import {
  ACTION_COLUMNS_FINAL,
  type ActionLabelRow,
  type FlagAgreement,
  type GoldSource,
  type LabelDistributions,
  type ReferenceAgreement,
  type StudyCaseRecord,
  type StudyReportOptions,
} from "./study-report-types";
import { compareText, share, UNKNOWN_AGE } from "./study-report-agreement";
import { maxOf } from "../../stats/extremes";

/** Age groups in the order of their first number (18–27 … 78+), anything else after them, Unknown last. */
export function compareAgeGroups(a: string, b: string): number {
  const rank = (s: string) => (s === UNKNOWN_AGE ? Infinity : Number(/^\d+/.exec(s)?.[0] ?? NaN) || 1e9);
  return rank(a) - rank(b) || compareText(a, b);
}

export function tally<K>(keys: Iterable<K>): Map<K, number> {
  const counts = new Map<K, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}

export const byCountThenKey =
  <T extends { n: number }>(key: (x: T) => string) =>
  (x: T, y: T) =>
    y.n - x.n || compareText(key(x), key(y));

export function actionLabels(
  records: readonly StudyCaseRecord[],
  notes: string[],
): LabelDistributions["action_labels"] {
  const withGold = records.filter((r) => r.gold !== null);
  const maxSections = Math.max(0, maxOf(withGold.map((r) => r.numSections)));
  // docs/evaluation.md#expert-labels-script / paper Fig. 3: a case's last section goes to "Final", so T = 3 and T = 5 notes end together.
  const columns = [
    ...Array.from({ length: Math.max(0, maxSections - 1) }, (_, i) => `S${i + 1}`),
    ...(maxSections > 0 ? [ACTION_COLUMNS_FINAL] : []),
  ];
  const rows = columns.map((column): ActionLabelRow => ({ column, clarify: 0, diagnose: 0, abstain: 0, total: 0 }));
  const key: Record<ExpertAction, "clarify" | "diagnose" | "abstain"> = {
    Clarify: "clarify",
    Diagnose: "diagnose",
    Abstain: "abstain",
  };
  let skipped = 0;
  for (const r of withGold) {
    let labels: ExpertAction[];
    try {
      labels = expertActionLabels(r.gold!, r.numSections);
    } catch {
      skipped++;
      continue;
    }
    labels.forEach((action, i) => {
      const target = i === labels.length - 1 ? rows[rows.length - 1] : rows[i];
      target[key[action]]++;
      target.total++;
    });
  }
  if (skipped > 0)
    notes.push(`${skipped} gold label(s) have an earliest section outside 1..T: left out of the action labels`);
  return { columns, rows };
}

export function labelDistributions(
  records: readonly StudyCaseRecord[],
  options: StudyReportOptions,
  notes: string[],
): LabelDistributions {
  const title = options.categoryTitle ?? (() => null);
  const gold = records.filter((r) => r.gold !== null);
  const source: Record<GoldSource, number> = { agreed: 0, adjudicated: 0, reference: 0 };
  for (const r of gold) if (r.goldSource) source[r.goldSource]++;
  const sufficient = gold.map((r) => r.gold!).filter((g) => g.sufficiency === "sufficient");
  const insufficient = gold.map((r) => r.gold!).filter((g) => g.sufficiency === "insufficient");
  const parsed = sufficient.map((g) => parseIcd10(g.icd10));
  const codes = parsed.map((p, i) => (p.ok ? p.code : sufficient[i].icd10.trim().toUpperCase() || "(empty)"));
  const missing = tally(insufficient.flatMap((g) => g.missingInfo));

  return {
    source,
    n_gold: gold.length,
    sufficiency: { sufficient: sufficient.length, insufficient: insufficient.length },
    action_labels: actionLabels(records, notes),
    icd10_codes: [...tally(codes)].map(([code, n]) => ({ code, n })).sort(byCountThenKey((x) => x.code)),
    icd10_categories: [...tally(parsed.flatMap((p) => (p.ok ? [p.category] : [])))]
      .map(([category, n]) => ({ category, title: title(category), n }))
      .sort(byCountThenKey((x) => x.category)),
    icd10_groups: [...tally(parsed.flatMap((p) => (p.ok && p.block ? [p.block] : [])))]
      .map(([group, n]) => ({ group, n }))
      .sort((x, y) => compareText(x.group, y.group)),
    missing_info: MISSING_INFO_KEYS.filter((k) => missing.has(k)).map((key) => ({ key, n: missing.get(key)! })),
    age_groups: [...tally(records.map((r) => r.ageGroup.trim() || UNKNOWN_AGE))]
      .map(([age_group, n]) => ({ age_group, n }))
      .sort((x, y) => compareAgeGroups(x.age_group, y.age_group)),
    section_counts: [...tally(records.map((r) => r.numSections))]
      .map(([sections, n]) => ({ sections, n }))
      .sort((x, y) => x.sections - y.sections),
  };
}

export function referenceAgreement(records: readonly StudyCaseRecord[]): ReferenceAgreement | null {
  const flags = records.flatMap((r) => (r.referenceAgreement ? [r.referenceAgreement] : []));
  if (flags.length === 0) return null;
  const flag = (values: (boolean | null)[]): FlagAgreement => {
    const known = values.filter((v): v is boolean => v !== null);
    const agreed = known.filter(Boolean).length;
    return { n: known.length, n_agreed: agreed, percent_agreement: share(agreed, known.length) };
  };
  return {
    n: flags.length,
    sufficiency: flag(flags.map((f) => f.sufficiency)),
    diagnosis: flag(flags.map((f) => f.diagnosis)),
  };
}
