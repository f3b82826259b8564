/**
 * Screening review with concealed controls and recall rounds (docs/screening.md; the HealthBench-Psych paper): which items
 * a round reviews, the one seeded order shared by every reviewer, inclusion by majority with a consensus tier and a
 * modal category, relevance agreement (Gwet's AC1, overall and per reviewer pair), the control-inclusion rate and the
 * stop/continue decision. Pure: no database, clock or ambient randomness (the seed is an argument).
 *
 * The paper's figures, as the test corpus mirrors them: round 1 reviewed 641 screened-in items plus 150 controls; the
 * majority included 9 controls, 9/150 = 6.0% > 5%, so a recall round opened; round 2 reviewed 81 recall candidates
 * plus 25 fresh controls and included 1 control, 1/25 = 4.0% ≤ 5%, which ended the cycle.
 */
import { PyRandom } from "../../python-compat/random";
import { compareCodePoints } from "../../python-compat/text";
import { buildRatingTable, gwetAc1, percentAgreement, type RatingRow } from "../../stats";
import { maxOf } from "../../stats/extremes";

export const SCREEN_LABELS = ["relevant", "borderline", "not_relevant"] as const;
export type ScreenLabel = (typeof SCREEN_LABELS)[number];
export const RECALL_TIERS = ["clear", "possible", "no"] as const;
export type RecallTier = (typeof RECALL_TIERS)[number];
export const REVIEW_CONFIDENCES = ["low", "medium", "high"] as const;
export type ReviewConfidence = (typeof REVIEW_CONFIDENCES)[number];
export type ConsensusTier = "unanimous" | "majority";
export type RoundDecision = "stop" | "continue";

/** The label written for an included item whose reviewers did not agree on a category (the paper's Figure G1). */
export const NO_CATEGORY_MAJORITY = "no majority";

/** A starting vocabulary: the categories the HealthBench-Psych paper names (edit it per study). */
export const DEFAULT_SCREENING_CATEGORIES = [
  "perinatal mental health",
  "anxiety",
  "psychiatric medication",
  "mood disorders",
  "sleep",
  "cognitive–neurocognitive",
  "ADHD",
  "substance use",
  "suicidality/self-harm",
  "other",
] as const;

export interface ScreeningRule {
  /** Reviewers per round (3). */
  reviewersPerRound: number;
  /** Relevant votes that include an item (2, i.e. 2 of 3). */
  inclusionVotes: number;
  /** A control-inclusion rate above this continues with a recall round (0.05). */
  controlThreshold: number;
}

export const DEFAULT_RULE: ScreeningRule = { reviewersPerRound: 3, inclusionVotes: 2, controlThreshold: 0.05 };

/** The rule's problems, by field; empty when it is usable. */
export function checkRule(rule: ScreeningRule): Partial<Record<keyof ScreeningRule, string>> {
  const errors: Partial<Record<keyof ScreeningRule, string>> = {};
  if (!Number.isInteger(rule.reviewersPerRound) || rule.reviewersPerRound < 2 || rule.reviewersPerRound > 20)
    errors.reviewersPerRound = "a round needs 2 to 20 reviewers (agreement needs at least two).";
  if (!Number.isInteger(rule.inclusionVotes) || rule.inclusionVotes < 1)
    errors.inclusionVotes = "the inclusion threshold is a whole number of votes, at least 1.";
  else if (rule.inclusionVotes > rule.reviewersPerRound)
    errors.inclusionVotes = `the inclusion threshold (${rule.inclusionVotes} votes) cannot exceed the number of reviewers (${rule.reviewersPerRound}).`;
  if (!(rule.controlThreshold >= 0 && rule.controlThreshold < 1))
    errors.controlThreshold = "the control-inclusion threshold is a rate in [0, 1), e.g. 0.05.";
  return errors;
}

export interface PoolItem {
  /** The item's external id (HealthBench `prompt_id`). */
  id: string;
  screenLabel: ScreenLabel | null;
  /** True when any earlier round reviewed it (as a candidate or a control). */
  used: boolean;
  /** Its tier in the recall screen imported for this round (rounds 2+), if any. */
  tier: RecallTier | null;
}

export interface PoolEntry {
  id: string;
  /** The label or tier that put the item where it is. */
  stratum: ScreenLabel | RecallTier;
}

export interface RoundPool {
  candidates: PoolEntry[];
  /** Where the concealed controls are drawn from. */
  controlPool: PoolEntry[];
  /** Items the round's screen says nothing about: unlabelled items (round 1), unused items without a tier (later). */
  unscreened: string[];
}

/**
 * The items a round draws from (HealthBench-Psych §2). Round 1: candidates are the screen's relevant and borderline
 * items, controls come from its not_relevant ones. A recall round looks only at items no earlier round used (the
 * screen's exclusions that were not controls): candidates are the recall screen's clear and possible items, and its
 * controls come from the recall screen's `no` tier, so they "re-apply the recovery decision rule" and are fresh.
 */
export function roundPool(roundNumber: number, items: readonly PoolItem[]): RoundPool {
  const candidates: PoolEntry[] = [];
  const controlPool: PoolEntry[] = [];
  const unscreened: string[] = [];
  for (const item of items) {
    if (roundNumber === 1) {
      if (item.screenLabel === null) unscreened.push(item.id);
      else if (item.screenLabel === "not_relevant") controlPool.push({ id: item.id, stratum: "not_relevant" });
      else candidates.push({ id: item.id, stratum: item.screenLabel });
    } else {
      if (item.used) continue;
      if (item.tier === null) unscreened.push(item.id);
      else if (item.tier === "no") controlPool.push({ id: item.id, stratum: "no" });
      else candidates.push({ id: item.id, stratum: item.tier });
    }
  }
  return { candidates, controlPool, unscreened };
}

export interface OrderedEntry extends PoolEntry {
  isControl: boolean;
  /** 1-based place in the shared order. */
  position: number;
}

export type DrawResult = { ok: true; order: OrderedEntry[] } | { ok: false; error: string };

/**
 * Draws `controls` concealed controls from the pool and interleaves them with the candidates in one seeded random
 * order, the order every reviewer of the round sees. Uses CPython's generator, so Python replays it exactly:
 *
 *     rng = random.Random(seed)
 *     pool = sorted(control_pool_ids)          # code-point order
 *     rng.shuffle(pool)
 *     controls = pool[:n]
 *     order = sorted(candidate_ids + controls)
 *     rng.shuffle(order)                       # position i + 1 = order[i]
 */
export function drawRound(input: {
  candidates: readonly PoolEntry[];
  controlPool: readonly PoolEntry[];
  controls: number;
  seed: number;
}): DrawResult {
  const { controls, seed } = input;
  if (!Number.isSafeInteger(seed) || seed < 0) return { ok: false, error: "the seed must be a whole number ≥ 0." };
  if (!Number.isInteger(controls) || controls < 1)
    return {
      ok: false,
      error: "a round needs at least one concealed control: the controls measure what the screen missed.",
    };
  if (input.candidates.length === 0)
    return { ok: false, error: "there are no candidate items to review in this round." };
  if (controls > input.controlPool.length)
    return {
      ok: false,
      error: `${controls} controls were asked for but only ${input.controlPool.length} items can serve as controls.`,
    };
  const byId = new Map<string, PoolEntry & { isControl: boolean }>();
  for (const c of input.candidates) byId.set(c.id, { ...c, isControl: false });
  for (const c of input.controlPool) {
    if (byId.has(c.id)) return { ok: false, error: `item "${c.id}" is both a candidate and a possible control.` };
    byId.set(c.id, { ...c, isControl: true });
  }
  const rng = new PyRandom(seed);
  const pool = input.controlPool.map((c) => c.id).sort(compareCodePoints);
  rng.shuffle(pool);
  const drawn = pool.slice(0, controls);
  const order = [...input.candidates.map((c) => c.id), ...drawn].sort(compareCodePoints);
  rng.shuffle(order);
  return {
    ok: true,
    order: order.map((id, i) => {
      const e = byId.get(id)!;
      return { id, stratum: e.stratum, isControl: e.isControl, position: i + 1 };
    }),
  };
}

export interface ReviewVote {
  item: string;
  reviewer: string;
  relevant: boolean;
  /** A vocabulary term; only relevant votes carry one. */
  category: string | null;
  confidence?: ReviewConfidence | null;
}

export interface ItemTally {
  yes: number;
  no: number;
  included: boolean;
  /** Unanimous when every vote agrees, majority otherwise. Null without votes. */
  consensusTier: ConsensusTier | null;
  /** The category at least `inclusionVotes` reviewers chose (a unique one), else NO_CATEGORY_MAJORITY. */
  modalCategory: string;
}

/**
 * The category chosen by at least `inclusionVotes` reviewers, the same majority that includes an item (2 of 3);
 * when no category, or more than one, reaches it: NO_CATEGORY_MAJORITY.
 *
 * @example modalCategory(["anxiety", "anxiety", null], 2) // "anxiety"
 * @example modalCategory(["anxiety", "sleep", null], 2)   // "no majority"
 */
export function modalCategory(categories: readonly (string | null)[], inclusionVotes: number): string {
  const counts = new Map<string, number>();
  for (const c of categories) if (c) counts.set(c, (counts.get(c) ?? 0) + 1);
  const reaching = [...counts].filter(([, n]) => n >= inclusionVotes);
  if (reaching.length === 0) return NO_CATEGORY_MAJORITY;
  const top = maxOf(reaching.map(([, n]) => n));
  const best = reaching.filter(([, n]) => n === top);
  return best.length === 1 ? best[0]![0] : NO_CATEGORY_MAJORITY;
}

/** Majority inclusion of one item from its votes: included when relevant votes ≥ inclusionVotes. */
export function tallyItem(
  votes: readonly Pick<ReviewVote, "relevant" | "category">[],
  inclusionVotes: number,
): ItemTally {
  const yes = votes.filter((v) => v.relevant).length;
  const no = votes.length - yes;
  return {
    yes,
    no,
    included: yes >= inclusionVotes,
    consensusTier: votes.length === 0 ? null : yes === 0 || no === 0 ? "unanimous" : "majority",
    modalCategory: modalCategory(
      votes.map((v) => (v.relevant ? v.category : null)),
      inclusionVotes,
    ),
  };
}

/**
 * True when the control-inclusion rate includedControls / controls is above the threshold. Compared as
 * includedControls > threshold · controls with a tolerance, so that 1/20 = 0.05 is "at" a 5% threshold, not above it
 * by a rounding error.
 */
export function exceedsThreshold(includedControls: number, controls: number, threshold: number): boolean {
  return includedControls - threshold * controls > 1e-9 * Math.max(1, controls);
}

export interface Coefficient {
  value: number | null;
  se: number | null;
  ci95: [number, number] | null;
  /** Why the value (or its standard error) is undefined. */
  reason: string | null;
}

export interface PairAgreement {
  reviewers: [string, string];
  /** Items both reviewers voted on. */
  nItems: number;
  ac1: Coefficient;
  percentAgreement: number | null;
}

export interface StratumCount {
  stratum: string;
  isControl: boolean;
  n: number;
  included: number;
}

export interface ItemResult extends ItemTally {
  id: string;
  position: number;
  isControl: boolean;
  stratum: string;
  votes: ReviewVote[];
}

export interface RoundFigures {
  items: number;
  candidates: number;
  controls: number;
  votesExpected: number;
  votesIn: number;
  /** Every reviewer has voted on every item. */
  complete: boolean;
  included: number;
  includedCandidates: number;
  includedControls: number;
  byStratum: StratumCount[];
  /** includedControls / controls; null without controls. */
  controlInclusionRate: number | null;
  /** Null until the round is complete. */
  decision: RoundDecision | null;
  /** Gwet's AC1 on relevance (yes/no) across all reviewers, with standard error and 95% CI. */
  relevanceAc1: Coefficient;
  percentAgreement: number | null;
  pairwise: PairAgreement[];
  perItem: ItemResult[];
}

const RELEVANCE_CATEGORIES = ["no", "yes"] as const;

function coefficient(rows: RatingRow[]): { ac1: Coefficient; percent: number | null } {
  if (rows.length === 0) return { ac1: { value: null, se: null, ci95: null, reason: "no votes yet" }, percent: null };
  // Both categories are named so that AC1 stays defined (q = 2) when every vote is "yes" (Gwet 2008, §3).
  const table = buildRatingTable(rows, { categories: RELEVANCE_CATEGORIES });
  const ac1 = gwetAc1(table);
  const percent = percentAgreement(table);
  return {
    ac1: {
      value: ac1.value,
      se: ac1.standardError,
      ci95: ac1.confidenceInterval,
      reason: ac1.value === null ? (ac1.reason ?? null) : (ac1.standardErrorReason ?? null),
    },
    percent: percent.value,
  };
}

/**
 * Every figure of one round from its items (in the shared order) and its reviewers' submitted votes: inclusion by
 * majority per item, counts by stratum, the control-inclusion rate and decision (continue with a recall round when
 * the rate is above the threshold, stop otherwise), Gwet's AC1 on relevance for all reviewers and for each pair
 * (HealthBench-Psych reports AC1 0.79 in round 1, and a pair's AC1 to show one lenient reviewer in round 2).
 */
export function summariseRound(input: {
  items: readonly { id: string; position: number; isControl: boolean; stratum: string }[];
  reviewers: readonly string[];
  votes: readonly ReviewVote[];
  rule: Pick<ScreeningRule, "inclusionVotes" | "controlThreshold">;
}): RoundFigures {
  const { items, reviewers, rule } = input;
  const known = new Set(items.map((i) => i.id));
  const votesByItem = new Map<string, ReviewVote[]>();
  for (const v of input.votes) {
    if (!known.has(v.item))
      throw new RangeError(`summariseRound: a vote names item "${v.item}", which is not in the round`);
    const list = votesByItem.get(v.item) ?? [];
    list.push(v);
    votesByItem.set(v.item, list);
  }
  const reviewerRank = new Map(reviewers.map((r, i) => [r, i]));
  const perItem: ItemResult[] = [...items]
    .sort((a, b) => a.position - b.position)
    .map((item) => {
      const votes = (votesByItem.get(item.id) ?? []).sort(
        (a, b) => (reviewerRank.get(a.reviewer) ?? 1e9) - (reviewerRank.get(b.reviewer) ?? 1e9),
      );
      return { ...item, votes, ...tallyItem(votes, rule.inclusionVotes) };
    });

  const strata = new Map<string, StratumCount>();
  for (const r of perItem) {
    const key = `${r.isControl ? 1 : 0}:${r.stratum}`;
    const s = strata.get(key) ?? { stratum: r.stratum, isControl: r.isControl, n: 0, included: 0 };
    s.n++;
    if (r.included) s.included++;
    strata.set(key, s);
  }
  const strataOrder = ["relevant", "borderline", "clear", "possible", "not_relevant", "no"];
  const byStratum = [...strata.values()].sort(
    (a, b) =>
      Number(a.isControl) - Number(b.isControl) ||
      strataOrder.indexOf(a.stratum) - strataOrder.indexOf(b.stratum) ||
      compareCodePoints(a.stratum, b.stratum),
  );

  const controls = perItem.filter((r) => r.isControl);
  const includedControls = controls.filter((r) => r.included).length;
  const includedCandidates = perItem.filter((r) => !r.isControl && r.included).length;
  const votesExpected = items.length * reviewers.length;
  const votesIn = input.votes.length;
  const complete = votesExpected > 0 && votesIn >= votesExpected;
  const rate = controls.length ? includedControls / controls.length : null;

  const rows: RatingRow[] = input.votes.map((v) => ({
    item: v.item,
    rater: v.reviewer,
    label: v.relevant ? "yes" : "no",
  }));
  const overall = coefficient(rows);
  const pairwise: PairAgreement[] = [];
  for (let a = 0; a < reviewers.length; a++) {
    for (let b = a + 1; b < reviewers.length; b++) {
      const pair = [reviewers[a]!, reviewers[b]!] as [string, string];
      const both = new Set(
        perItem
          .filter((r) => r.votes.some((v) => v.reviewer === pair[0]) && r.votes.some((v) => v.reviewer === pair[1]))
          .map((r) => r.id),
      );
      const pairRows = rows.filter((row) => (row.rater === pair[0] || row.rater === pair[1]) && both.has(row.item));
      const c = coefficient(pairRows);
      pairwise.push({ reviewers: pair, nItems: both.size, ac1: c.ac1, percentAgreement: c.percent });
    }
  }

  return {
    items: items.length,
    candidates: items.length - controls.length,
    controls: controls.length,
    votesExpected,
    votesIn,
    complete,
    included: includedCandidates + includedControls,
    includedCandidates,
    includedControls,
    byStratum,
    controlInclusionRate: rate,
    decision:
      complete && controls.length
        ? exceedsThreshold(includedControls, controls.length, rule.controlThreshold)
          ? "continue"
          : "stop"
        : null,
    relevanceAc1: overall.ac1,
    percentAgreement: overall.percent,
    pairwise,
    perItem,
  };
}

export type NextStep =
  | { kind: "import_items" }
  | { kind: "import_labels"; unlabelled: number }
  | { kind: "open_round"; round: number }
  | { kind: "in_review"; round: number }
  | { kind: "import_tiers"; round: number }
  | { kind: "final"; round: number };

/**
 * Where a study stands and what the admin does next: import the corpus and its screen labels, open round 1, wait
 * for the votes; after a round whose control-inclusion rate is above the threshold, import a recall screen's tiers
 * and open the recall round; after one at or below it, the included set is final.
 */
export function nextStep(input: {
  items: number;
  unlabelled: number;
  rounds: readonly { number: number; status: "open" | "closed"; decision: RoundDecision | null }[];
  tiersForNextRound: number;
}): NextStep {
  if (input.items === 0) return { kind: "import_items" };
  const last = [...input.rounds].sort((a, b) => a.number - b.number).at(-1);
  if (!last)
    return input.unlabelled > 0
      ? { kind: "import_labels", unlabelled: input.unlabelled }
      : { kind: "open_round", round: 1 };
  if (last.status === "open") return { kind: "in_review", round: last.number };
  if (last.decision === "stop") return { kind: "final", round: last.number };
  return input.tiersForNextRound > 0
    ? { kind: "open_round", round: last.number + 1 }
    : { kind: "import_tiers", round: last.number + 1 };
}

export interface VoteValues {
  relevant: "" | "yes" | "no";
  category: string;
  confidence: "" | ReviewConfidence;
  notes: string;
}

export const EMPTY_VOTE: VoteValues = { relevant: "", category: "", confidence: "", notes: "" };

/**
 * A submission's problems by field (empty when it can be submitted): relevance and confidence are required; a
 * relevant item needs a category from the study's vocabulary. Shared by the reviewer's page and the server.
 */
export function checkVote(
  values: VoteValues,
  vocabulary: readonly string[],
): Partial<Record<keyof VoteValues, string>> {
  const errors: Partial<Record<keyof VoteValues, string>> = {};
  if (values.relevant !== "yes" && values.relevant !== "no") errors.relevant = "Choose yes or no.";
  if (values.relevant === "yes") {
    if (!values.category) errors.category = "Choose the category of this relevant item.";
    else if (!vocabulary.includes(values.category))
      errors.category = `"${values.category}" is not in the study's categories.`;
  }
  if (!values.confidence) errors.confidence = "Choose how confident you are.";
  return errors;
}
