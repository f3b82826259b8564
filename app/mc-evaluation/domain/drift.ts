/**
 * Demographic drift (docs/mc-evaluation.md, "Demographic drift"): MENTAT's accuracy per gender, age and race
 * condition with bootstrap intervals, and paired tests between conditions. The variants of one base question differ
 * only in the demographic words, so outcomes are paired by question: each pair of conditions is compared by the exact
 * McNemar test on the questions both answered (parsed), and the p-values of one dimension are adjusted together by
 * Holm–Bonferroni, so a reported difference is beyond chance at the family-wise level α.
 */
import { GENDERS } from "../../expert-panel/domain/expert-scales";
import { seedFromText } from "../../mentat/public";
import type { MentatRow } from "./scores";
import { bootstrapInterval, holmAdjust, mcnemarExact } from "./statistics";
import { compareCodePoints } from "../../python-compat/text";

export const DRIFT_DIMENSIONS = ["gender", "age", "race"] as const;
export type DriftDimension = (typeof DRIFT_DIMENSIONS)[number];

export interface DriftOptions {
  /** Bootstrap resamples (MENTAT: 1000). */
  reps: number;
  seed: number;
  /** Family-wise error rate of one dimension's tests. */
  alpha: number;
}

export const DEFAULT_DRIFT_OPTIONS: DriftOptions = { reps: 1000, seed: 0, alpha: 0.05 };

export interface ConditionAccuracy {
  condition: string;
  n: number;
  n_parsed: number;
  correct: number;
  accuracy: number | null;
  /** 95% percentile bootstrap over the condition's parsed answers. */
  ci95: [number, number] | null;
  /** Accuracy per domain (the paper's ablation table). */
  by_domain: Record<string, { n_parsed: number; accuracy: number | null }>;
}

export interface PairTest {
  first: string;
  second: string;
  /** Base questions both conditions answered (parsed). */
  n_pairs: number;
  accuracy_first: number | null;
  accuracy_second: number | null;
  /** accuracy_first − accuracy_second on the paired questions. */
  difference: number | null;
  /** 95% paired bootstrap interval of the difference (questions resampled). */
  difference_ci95: [number, number] | null;
  first_only: number;
  second_only: number;
  p: number;
  p_holm: number;
  significant: boolean;
}

export interface DimensionDrift {
  dimension: DriftDimension;
  conditions: ConditionAccuracy[];
  tests: PairTest[];
  alpha: number;
  /** Rows of this set without a condition (a question without the placeholder): not part of the comparison. */
  without_condition: number;
}

export function conditionOf(row: MentatRow, dimension: DriftDimension): string | null {
  const d = row.facts.demographics;
  const value = dimension === "gender" ? d.gender : dimension === "age" ? d.age : d.race;
  return value === null || value === undefined ? null : String(value);
}

function orderConditions(dimension: DriftDimension, conditions: string[]): string[] {
  const unique = [...new Set(conditions)];
  if (dimension === "gender") {
    const rank = (c: string) => {
      const i = (GENDERS as readonly string[]).indexOf(c);
      return i < 0 ? GENDERS.length : i;
    };
    return unique.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  }
  if (unique.every((c) => /^-?\d+(\.\d+)?$/.test(c))) return unique.sort((a, b) => Number(a) - Number(b));
  return unique.sort();
}

const rate = (xs: readonly boolean[]) => (xs.length ? xs.filter(Boolean).length / xs.length : null);

function conditionAccuracy(
  condition: string,
  all: readonly MentatRow[],
  options: DriftOptions,
  seedKey: string,
): ConditionAccuracy {
  // In item-id order before resampling: the interval depends on the answers only, not on the order they arrived in
  // (responses.jsonl is written as answers come back; docs/mc-evaluation.md, "Demographic drift").
  const parsed = all.filter((r) => r.status === "parsed").sort((a, b) => compareCodePoints(a.id, b.id));
  const outcomes = parsed.map((r) => r.correct);
  const domains = [...new Set(all.map((r) => r.facts.domain))].sort();
  return {
    condition,
    n: all.length,
    n_parsed: parsed.length,
    correct: outcomes.filter(Boolean).length,
    accuracy: rate(outcomes),
    ci95: bootstrapInterval(outcomes.length, (idx) => idx.reduce((s, i) => s + (outcomes[i] ? 1 : 0), 0) / idx.length, {
      reps: options.reps,
      seed: seedFromText(`${options.seed}:${seedKey}`),
    }),
    by_domain: Object.fromEntries(
      domains.map((domain) => {
        const d = parsed.filter((r) => r.facts.domain === domain).map((r) => r.correct);
        return [domain, { n_parsed: d.length, accuracy: rate(d) }];
      }),
    ),
  };
}

/**
 * Accuracy in MENTAT's age bands (analysis_helper_functions.py, eval_model_by_column_binned: pandas.cut at 18, 33,
 * 49, 65, right-closed, lowest included), for the ablation table beside the per-age conditions. A band can hold
 * several variants of one question, so bands are described, not paired-tested.
 */
export const MENTAT_AGE_BANDS = [
  { label: "18-33 years", low: 18, high: 33 },
  { label: "33-49 years", low: 33, high: 49 },
  { label: "49-65 years", low: 49, high: 65 },
] as const;

export function ageBands(
  rows: readonly MentatRow[],
  options: DriftOptions = DEFAULT_DRIFT_OPTIONS,
): ConditionAccuracy[] {
  const aged = rows.filter((r) => r.facts.dataset === "age" && r.facts.demographics.age !== null);
  return MENTAT_AGE_BANDS.map((band, i) => {
    const inBand = aged.filter((r) => {
      const a = r.facts.demographics.age!;
      return (i === 0 ? a >= band.low : a > band.low) && a <= band.high;
    });
    return conditionAccuracy(band.label, inBand, options, `age-band:${band.label}`);
  }).filter((c) => c.n > 0);
}

export function dimensionDrift(
  rows: readonly MentatRow[],
  dimension: DriftDimension,
  options: DriftOptions = DEFAULT_DRIFT_OPTIONS,
): DimensionDrift {
  const mine = rows.filter((r) => r.facts.dataset === dimension);
  const withCondition = mine.filter((r) => conditionOf(r, dimension) !== null);
  const conditions = orderConditions(
    dimension,
    withCondition.map((r) => conditionOf(r, dimension)!),
  );
  const byCondition = new Map(conditions.map((c) => [c, withCondition.filter((r) => conditionOf(r, dimension) === c)]));

  const accuracies = conditions.map((condition) =>
    conditionAccuracy(condition, byCondition.get(condition)!, options, `${dimension}:${condition}`),
  );

  // One outcome per (condition, question): a question asked twice under one condition (two records) is not paired.
  const outcomeOf = new Map<string, Map<string, boolean | null>>();
  for (const c of conditions) {
    const m = new Map<string, boolean | null>();
    for (const r of byCondition.get(c)!) {
      if (r.status !== "parsed") continue;
      m.set(r.facts.question_id, m.has(r.facts.question_id) ? null : r.correct);
    }
    outcomeOf.set(c, m);
  }

  const raw: Omit<PairTest, "p_holm" | "significant">[] = [];
  for (let i = 0; i < conditions.length; i++) {
    for (let j = i + 1; j < conditions.length; j++) {
      const first = conditions[i]!;
      const second = conditions[j]!;
      const a = outcomeOf.get(first)!;
      const b = outcomeOf.get(second)!;
      const questions = [...a.keys()]
        .filter((q) => a.get(q) !== null && b.get(q) !== undefined && b.get(q) !== null)
        .sort();
      const pairs = questions.map((q) => [a.get(q)!, b.get(q)!] as const);
      const test = mcnemarExact(pairs);
      const accFirst = rate(pairs.map((p) => p[0]));
      const accSecond = rate(pairs.map((p) => p[1]));
      raw.push({
        first,
        second,
        n_pairs: pairs.length,
        accuracy_first: accFirst,
        accuracy_second: accSecond,
        difference: accFirst !== null && accSecond !== null ? accFirst - accSecond : null,
        difference_ci95: bootstrapInterval(
          pairs.length,
          (idx) => idx.reduce((s, k) => s + (pairs[k]![0] ? 1 : 0) - (pairs[k]![1] ? 1 : 0), 0) / idx.length,
          { reps: options.reps, seed: seedFromText(`${options.seed}:${dimension}:${first}|${second}`) },
        ),
        first_only: test.firstOnly,
        second_only: test.secondOnly,
        p: test.p,
      });
    }
  }
  const adjusted = holmAdjust(raw.map((t) => t.p));
  return {
    dimension,
    conditions: accuracies,
    tests: raw.map((t, k) => ({ ...t, p_holm: adjusted[k]!, significant: adjusted[k]! <= options.alpha })),
    alpha: options.alpha,
    without_condition: mine.length - withCondition.length,
  };
}

export function demographicDrift(
  rows: readonly MentatRow[],
  options: DriftOptions = DEFAULT_DRIFT_OPTIONS,
): DimensionDrift[] {
  return DRIFT_DIMENSIONS.map((d) => dimensionDrift(rows, d, options)).filter((d) => d.conditions.length > 0);
}
