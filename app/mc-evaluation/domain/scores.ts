/**
 * Scores of one run (docs/mc-evaluation.md, "MentalBench scores" and "MENTAT scores"). Only parsed answers are
 * scored; unparsed ones (ambiguous, refused, empty) are counted beside every accuracy, and `accuracy_all` shows the
 * papers' convention of counting them wrong.
 */
import type { ItemFacts, ScoredRecord } from "./records";
import type { ParseStatus } from "./parse";
import { topLetter } from "./prompts";
import { compareCodePoints } from "../../python-compat/text";

export type ParseCounts = Record<ParseStatus, number>;

export interface Accuracy {
  /** Items answered (responses recorded). */
  n: number;
  n_parsed: number;
  correct: number;
  /** correct / n_parsed; null when nothing parsed. */
  accuracy: number | null;
  /** correct / n: unparsed answers counted wrong, as both papers' code does. */
  accuracy_all: number | null;
  parse: ParseCounts;
}

const emptyCounts = (): ParseCounts => ({ parsed: 0, ambiguous: 0, refused: 0, empty: 0 });

export function accuracyOf(rows: readonly { status: ParseStatus; correct: boolean }[]): Accuracy {
  const parse = emptyCounts();
  let correct = 0;
  for (const r of rows) {
    parse[r.status]++;
    if (r.status === "parsed" && r.correct) correct++;
  }
  return {
    n: rows.length,
    n_parsed: parse.parsed,
    correct,
    accuracy: parse.parsed ? correct / parse.parsed : null,
    accuracy_all: rows.length ? correct / rows.length : null,
    parse,
  };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join();
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string | null): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const r of rows) {
    const k = key(r);
    if (k === null) continue;
    (groups.get(k) ?? groups.set(k, []).get(k)!).push(r);
  }
  return new Map([...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

type MentalBenchFacts = Extract<ItemFacts, { kind: "mentalbench" }>;
type MentatFacts = Extract<ItemFacts, { kind: "mentat" }>;

export interface MentalBenchRow {
  id: string;
  facts: MentalBenchFacts;
  status: ParseStatus;
  correct: boolean;
  /** MentalBench's own scoring: its reader's letter set equals the answer set (and is not empty). */
  reference_correct: boolean;
}

export interface MentalBenchGroup extends Accuracy {
  /** Accuracy by MentalBench's own reader and rule (every item in the denominator). */
  reference_accuracy: number | null;
}

export interface MentalBenchScores {
  by_type: Record<string, MentalBenchGroup>;
  by_disease: Record<string, MentalBenchGroup>;
  by_cluster: Record<string, MentalBenchGroup>;
  /** Σ n_type · accuracy_type / Σ n_type over the types present (the paper's Table 2 "Overall"). */
  overall: number | null;
  /** The same with accuracy_all and with reference_accuracy. */
  overall_all: number | null;
  overall_reference: number | null;
  /** Type III − Type IV accuracy (positive: over-diagnosis; negative: under-diagnosis); null without both. */
  gap_iii_iv: number | null;
  gap_iii_iv_reference: number | null;
  total: MentalBenchGroup;
}

/** The MentalBench answers of a run in item-id order (as mentatRows), so tables come out in the same order. */
export function mentalBenchRows(records: readonly ScoredRecord[]): MentalBenchRow[] {
  return [...records]
    .sort((a, b) => compareCodePoints(a.item_id, b.item_id))
    .flatMap((r) => {
      if (r.facts.kind !== "mentalbench") return [];
      const facts = r.facts;
      const reference = r.reference_letters ?? [];
      return [
        {
          id: r.item_id,
          facts,
          status: r.parse.status,
          correct: r.parse.status === "parsed" && sameSet(r.parse.letters, facts.answer),
          reference_correct: reference.length > 0 && sameSet(reference, facts.answer),
        },
      ];
    });
}

function mentalBenchGroup(rows: readonly MentalBenchRow[]): MentalBenchGroup {
  return {
    ...accuracyOf(rows),
    reference_accuracy: rows.length ? rows.filter((r) => r.reference_correct).length / rows.length : null,
  };
}

function weighted(
  groups: Record<string, MentalBenchGroup>,
  pick: (g: MentalBenchGroup) => number | null,
): number | null {
  let num = 0;
  let den = 0;
  for (const g of Object.values(groups)) {
    const v = pick(g);
    if (v === null) continue;
    num += g.n * v;
    den += g.n;
  }
  return den ? num / den : null;
}

export function mentalBenchScores(records: readonly ScoredRecord[]): MentalBenchScores {
  const rows = mentalBenchRows(records);
  const table = (key: (r: MentalBenchRow) => string | null) =>
    Object.fromEntries([...groupBy(rows, key)].map(([k, g]) => [k, mentalBenchGroup(g)]));
  const by_type = table((r) => r.facts.type);
  const gap = (pick: (g: MentalBenchGroup) => number | null) => {
    const iii = by_type.III ? pick(by_type.III) : null;
    const iv = by_type.IV ? pick(by_type.IV) : null;
    return iii !== null && iv !== null ? iii - iv : null;
  };
  return {
    by_type,
    by_disease: table((r) => r.facts.disease),
    by_cluster: table((r) => r.facts.cluster),
    overall: weighted(by_type, (g) => g.accuracy),
    overall_all: weighted(by_type, (g) => g.accuracy_all),
    overall_reference: weighted(by_type, (g) => g.reference_accuracy),
    gap_iii_iv: gap((g) => g.accuracy),
    gap_iii_iv_reference: gap((g) => g.reference_accuracy),
    total: mentalBenchGroup(rows),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// MENTAT

/** The floor inside the logarithm of MENTAT's cross-entropy (eval_openai.py: log(p_model + 1e-12)). */
export const CROSS_ENTROPY_EPS = 1e-12;

export interface MentatRow {
  id: string;
  facts: MentatFacts;
  status: ParseStatus;
  letter: string | null;
  /** The chosen option is the one with the highest label (the intended answer, or the experts' top preference). */
  correct: boolean;
  /** −Σ p_label · log(p_model + ε) with the model's distribution one-hot on its parsed letter; null if unparsed. */
  cross_entropy: number | null;
  /** The label probability of the chosen option (1 or 0 for intended answers); null if unparsed. */
  preference_mass: number | null;
}

/**
 * The MENTAT answers of a run in item-id order: every sum, mean and bootstrap over them is then the same whatever
 * order responses.jsonl holds them in (docs/mc-evaluation.md, "Demographic drift").
 */
export function mentatRows(records: readonly ScoredRecord[]): MentatRow[] {
  return [...records]
    .sort((a, b) => compareCodePoints(a.item_id, b.item_id))
    .flatMap((r) => {
      if (r.facts.kind !== "mentat") return [];
      const facts = r.facts;
      const letter = r.parse.status === "parsed" ? r.parse.letters[0]! : null;
      const index = letter === null ? -1 : "ABCDE".indexOf(letter);
      const cross =
        index < 0
          ? null
          : -facts.labels.reduce((sum, p, i) => sum + p * Math.log((i === index ? 1 : 0) + CROSS_ENTROPY_EPS), 0);
      return [
        {
          id: r.item_id,
          facts,
          status: r.parse.status,
          letter,
          correct: letter !== null && letter === topLetter(facts.labels),
          cross_entropy: cross,
          preference_mass: index < 0 ? null : facts.labels[index]!,
        },
      ];
    });
}

export interface MentatGroup extends Accuracy {
  mean_cross_entropy: number | null;
  mean_preference_mass: number | null;
  /** Items whose labels come from the experts' preference fit. */
  n_preference: number;
}

export function mentatGroup(rows: readonly MentatRow[]): MentatGroup {
  const scored = rows.filter((r) => r.cross_entropy !== null);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  return {
    ...accuracyOf(rows),
    mean_cross_entropy: mean(scored.map((r) => r.cross_entropy!)),
    mean_preference_mass: mean(scored.map((r) => r.preference_mass!)),
    n_preference: rows.filter((r) => r.facts.label_source === "preference").length,
  };
}

export interface MentatScores {
  /** Per domain on the base set (the paper's main table); `all` over every base item. */
  base_by_domain: Record<string, MentatGroup>;
  /** Per set (base, gender, age, race) over every domain. */
  by_set: Record<string, MentatGroup>;
}

export function mentatScores(records: readonly ScoredRecord[]): MentatScores {
  const rows = mentatRows(records);
  const base = rows.filter((r) => r.facts.dataset === "base");
  const base_by_domain = Object.fromEntries(
    [...groupBy(base, (r) => r.facts.domain)].map(([k, g]) => [k, mentatGroup(g)]),
  );
  if (base.length) base_by_domain.all = mentatGroup(base);
  return {
    base_by_domain,
    by_set: Object.fromEntries([...groupBy(rows, (r) => r.facts.dataset)].map(([k, g]) => [k, mentatGroup(g)])),
  };
}
