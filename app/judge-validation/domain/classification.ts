/**
 * Classification scores of a candidate judge (or a rater) against reference labels, as the reference's
 * `evaluate_judges_against_consensus.py` computes them with scikit-learn (docs/judge-validation.md#consensus-and-the-report), and the majority consensus
 * of three raters that gives the reference labels (docs/judge-validation.md#consensus-and-the-report).
 *
 * Labels are strings; `truth` is the reference (the human majority), `predicted` the judge. Unless said otherwise,
 * the label set is scikit-learn's default: every label seen in truth or predictions, sorted. A score that is
 * undefined for the data (no items; κ when both sides use one and the same label) is null where the reference's
 * script has NaN, as the statistics module reports undefined values.
 */

function requirePairs(name: string, truth: readonly string[], predicted: readonly string[]): void {
  if (truth.length !== predicted.length) {
    throw new RangeError(
      `${name} requires as many predicted labels as true labels, got ${truth.length} and ${predicted.length}`,
    );
  }
}

/** Labels seen in truth or predictions, sorted (scikit-learn's `unique_labels`). */
export function labelsOf(truth: readonly string[], predicted: readonly string[]): string[] {
  return [...new Set([...truth, ...predicted])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Counts of (true, predicted) pairs as `{true: {predicted: count}}`, every label of `labelsOf` on both axes.
 *
 * @example
 * confusionMatrix(["a", "a", "b"], ["a", "b", "b"]); // { a: { a: 1, b: 1 }, b: { a: 0, b: 1 } }
 */
export function confusionMatrix(
  truth: readonly string[],
  predicted: readonly string[],
): Record<string, Record<string, number>> {
  requirePairs("confusionMatrix", truth, predicted);
  const labels = labelsOf(truth, predicted);
  const matrix: Record<string, Record<string, number>> = {};
  for (const t of labels) matrix[t] = Object.fromEntries(labels.map((p) => [p, 0]));
  truth.forEach((t, i) => (matrix[t][predicted[i]] += 1));
  return matrix;
}

/** Share of items whose predicted label equals the true label (`accuracy_score`). */
export function accuracy(truth: readonly string[], predicted: readonly string[]): number | null {
  requirePairs("accuracy", truth, predicted);
  if (truth.length === 0) return null;
  return truth.filter((t, i) => t === predicted[i]).length / truth.length;
}

export interface LabelScores {
  /** tp / (tp + fp), 0 when the label is never predicted (zero_division=0). */
  precision: number;
  /** tp / (tp + fn), 0 when the label never occurs in truth. */
  recall: number;
  /** 2·tp / (2·tp + fp + fn) = 2PR/(P + R), 0 when undefined. */
  f1: number;
  /** Number of items whose true label is this one. */
  support: number;
}

const ratio = (numerator: number, denominator: number) => (denominator === 0 ? 0 : numerator / denominator);

/**
 * Precision, recall, F1 and support per label (`precision_recall_fscore_support(…, zero_division=0)`, as printed
 * by `classification_report`), for every label of `labelsOf`.
 */
export function scoresByLabel(truth: readonly string[], predicted: readonly string[]): Record<string, LabelScores> {
  const matrix = confusionMatrix(truth, predicted);
  const labels = Object.keys(matrix);
  const scores: Record<string, LabelScores> = {};
  for (const label of labels) {
    const tp = matrix[label][label];
    const support = labels.reduce((sum, p) => sum + matrix[label][p], 0);
    const predictedCount = labels.reduce((sum, t) => sum + matrix[t][label], 0);
    const fn = support - tp;
    const fp = predictedCount - tp;
    scores[label] = {
      precision: ratio(tp, tp + fp),
      recall: ratio(tp, tp + fn),
      f1: ratio(2 * tp, 2 * tp + fp + fn),
      support,
    };
  }
  return scores;
}

/**
 * Macro-F1: the unweighted mean of the per-label F1 over every label seen in truth or predictions
 * (`f1_score(average="macro", zero_division=0)`). A label the judge invents counts with F1 = 0.
 *
 * @example
 * // scikit-learn's f1_score documentation: [0, 1, 2, 0, 1, 2] vs [0, 2, 1, 0, 0, 1] → 0.2666…
 * macroF1(["0", "1", "2", "0", "1", "2"], ["0", "2", "1", "0", "0", "1"]); // 0.26666666666666666
 */
export function macroF1(truth: readonly string[], predicted: readonly string[]): number | null {
  const scores = Object.values(scoresByLabel(truth, predicted));
  if (scores.length === 0) return null;
  return scores.reduce((sum, s) => sum + s.f1, 0) / scores.length;
}

/** F1 averaged over labels weighted by their support (`f1_score(average="weighted", zero_division=0)`). */
export function weightedF1(truth: readonly string[], predicted: readonly string[]): number | null {
  const scores = Object.values(scoresByLabel(truth, predicted));
  const total = scores.reduce((sum, s) => sum + s.support, 0);
  if (total === 0) return null;
  return scores.reduce((sum, s) => sum + s.f1 * s.support, 0) / total;
}

/**
 * Balanced accuracy: the mean recall over the labels present in truth (`balanced_accuracy_score`); labels that
 * only the judge uses do not enter the mean.
 *
 * @example
 * // scikit-learn's balanced_accuracy_score documentation: → 0.625
 * balancedAccuracy(["0", "1", "0", "0", "1", "0"], ["0", "1", "0", "0", "0", "1"]); // 0.625
 */
export function balancedAccuracy(truth: readonly string[], predicted: readonly string[]): number | null {
  const present = Object.values(scoresByLabel(truth, predicted)).filter((s) => s.support > 0);
  if (present.length === 0) return null;
  return present.reduce((sum, s) => sum + s.recall, 0) / present.length;
}

/**
 * Cohen's κ of two label sequences (`cohen_kappa_score`, unweighted): κ = (pₒ − pₑ)/(1 − pₑ), pₑ from each side's
 * own label frequencies (Cohen 1960). Null when pₑ = 1 (both sides use one and the same label: scikit-learn's NaN).
 *
 * @example
 * // 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 (pₒ = 0.7, pₑ = 0.5) → κ = 0.4
 */
export function cohenKappa(truth: readonly string[], predicted: readonly string[]): number | null {
  requirePairs("cohenKappa", truth, predicted);
  const n = truth.length;
  if (n === 0) return null;
  const matrix = confusionMatrix(truth, predicted);
  const labels = Object.keys(matrix);
  const observed = labels.reduce((sum, l) => sum + matrix[l][l], 0) / n;
  const chance = labels.reduce((sum, l) => {
    const trueShare = labels.reduce((s, p) => s + matrix[l][p], 0) / n;
    const predictedShare = labels.reduce((s, t) => s + matrix[t][l], 0) / n;
    return sum + trueShare * predictedShare;
  }, 0);
  if (chance === 1) return null;
  return (observed - chance) / (1 - chance);
}

export interface ClassificationReport {
  /** Pairs scored: items where both sides have a label. */
  n: number;
  labels: string[];
  accuracy: number | null;
  balancedAccuracy: number | null;
  macroF1: number | null;
  weightedF1: number | null;
  cohenKappa: number | null;
  perLabel: Record<string, LabelScores>;
  confusion: Record<string, Record<string, number>>;
}

/**
 * Every score of one task (action, primary_answer or info_request) of docs/judge-validation.md#consensus-and-the-report, over the items where both the
 * reference and the prediction have a label (null = missing, dropped pairwise as the reference's `dropna`).
 */
export function classificationReport(
  truth: readonly (string | null)[],
  predicted: readonly (string | null)[],
): ClassificationReport {
  if (truth.length !== predicted.length) {
    throw new RangeError(
      `classificationReport requires one prediction per reference label, got ${truth.length} and ${predicted.length}`,
    );
  }
  const t: string[] = [];
  const p: string[] = [];
  truth.forEach((label, i) => {
    const prediction = predicted[i];
    if (label !== null && prediction !== null) {
      t.push(label);
      p.push(prediction);
    }
  });
  return {
    n: t.length,
    labels: labelsOf(t, p),
    accuracy: accuracy(t, p),
    balancedAccuracy: balancedAccuracy(t, p),
    macroF1: macroF1(t, p),
    weightedF1: weightedF1(t, p),
    cohenKappa: cohenKappa(t, p),
    perLabel: scoresByLabel(t, p),
    confusion: confusionMatrix(t, p),
  };
}

export type MajorityOutcome<L extends string> =
  | { status: "majority"; label: L; votes: number }
  | { status: "tie"; label: null; votes: number }
  | { status: "too_few_votes"; label: null; votes: number };

/**
 * The consensus of several votes on one item (docs/judge-validation.md#consensus-and-the-report): the label with at least `minVotes` votes
 * (2 of 3 raters by default) and more votes than any other. Missing votes (null) are not counted. A 1-1-1 split
 * is a `tie`; fewer than `minVotes` votes cast is `too_few_votes`. Either way there is no consensus: the item is
 * reported and left out of the scores.
 *
 * @example
 * majorityVote(["CLARIFY", "CLARIFY", "ABSTAIN"]); // { status: "majority", label: "CLARIFY", votes: 2 }
 * majorityVote(["CLARIFY", "DIAGNOSE", "ABSTAIN"]); // { status: "tie", label: null, votes: 3 }
 */
export function majorityVote<L extends string>(
  votes: readonly (L | null)[],
  options: { minVotes?: number } = {},
): MajorityOutcome<L> {
  const minVotes = options.minVotes ?? 2;
  const cast = votes.filter((v): v is L => v !== null);
  if (cast.length < minVotes) return { status: "too_few_votes", label: null, votes: cast.length };
  const counts = new Map<L, number>();
  for (const v of cast) counts.set(v, (counts.get(v) ?? 0) + 1);
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  const [top, count] = ranked[0];
  if (count >= minVotes && (ranked.length === 1 || ranked[1][1] < count)) {
    return { status: "majority", label: top, votes: cast.length };
  }
  return { status: "tie", label: null, votes: cast.length };
}

export interface Consensus<L extends string> {
  /** Item id → majority label, or null without consensus; ids in input order. */
  majority: Record<string, L | null>;
  /** Items whose votes split with no label reaching the threshold (the 1-1-1 split of three raters). */
  ties: string[];
  /** Items with fewer votes than the threshold. */
  tooFewVotes: string[];
}

/** `majorityVote` for every item. */
export function majorityConsensus<L extends string>(
  items: Iterable<readonly [id: string, votes: readonly (L | null)[]]>,
  options: { minVotes?: number } = {},
): Consensus<L> {
  const result: Consensus<L> = { majority: {}, ties: [], tooFewVotes: [] };
  for (const [id, votes] of items) {
    const outcome = majorityVote(votes, options);
    result.majority[id] = outcome.label;
    if (outcome.status === "tie") result.ties.push(id);
    if (outcome.status === "too_few_votes") result.tooFewVotes.push(id);
  }
  return result;
}
