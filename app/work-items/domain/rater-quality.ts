/**
 * Rater-quality rules any blinded workspace can use (docs/rater-quality.md): which of a person's own items are drawn
 * for test–retest, when the wash-out allows one back into their queue, how many calibration items they get and which,
 * and where a new item takes its place in their list. Pure: the seed, the person and the clock are passed in, so the
 * same inputs give the same sample on every run.
 */

export const DAY_MS = 24 * 60 * 60 * 1000;

/** A uniform number in [0, 1) determined by the parts (FNV-1a over their text, then a 32-bit avalanche). */
export function seededUnit(...parts: (string | number)[]): number {
  let h = 0x811c9dc5;
  for (const ch of parts.join("\u0000")) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32;
}

/** How many of `n` items a share `rate` stands for: rounded half up, never more than the items there are. */
export function targetCount(rate: number, n: number): number {
  if (!(rate > 0) || n <= 0) return 0;
  return Math.min(n, Math.floor(rate * n + 0.5));
}

/**
 * The items drawn for test–retest from one person's assigned items: the `targetCount(fraction, n)` items with the
 * smallest seeded number for (seed, person, item). Each item's number does not depend on the other items, so adding
 * items later moves the sample only as far as their numbers say.
 */
export function retestSample(seed: number, person: string, itemIds: readonly number[], fraction: number): number[] {
  const k = targetCount(fraction, itemIds.length);
  return [...itemIds]
    .map((id) => ({ id, u: seededUnit("retest", seed, person, id) }))
    .sort((a, b) => a.u - b.u || a.id - b.id)
    .slice(0, k)
    .map((r) => r.id);
}

export interface WashOut {
  /** Other items the person has submitted since the first label. */
  items: number;
  /** Whole days since the first label. */
  days: number;
}

export interface Submission {
  itemId: number;
  submittedAt: number;
}

/**
 * The wash-out holds for `first` when the person has submitted at least `items` other items after it and at least
 * `days` days have passed since it (both conditions).
 */
export function washOutHolds(rule: WashOut, first: Submission, submissions: readonly Submission[], now: number) {
  const since = submissions.filter((s) => s.itemId !== first.itemId && s.submittedAt > first.submittedAt).length;
  return since >= rule.items && now - first.submittedAt >= rule.days * DAY_MS;
}

/**
 * The items to re-present now: drawn for the sample, submitted, past the wash-out, and not re-presented yet (each
 * item at most once). Nothing is due when the fraction is 0.
 */
export function dueRetests(input: {
  seed: number;
  person: string;
  fraction: number;
  washOut: WashOut;
  assigned: readonly number[];
  submissions: readonly Submission[];
  already: ReadonlySet<number>;
  now: number;
}): number[] {
  const sample = retestSample(input.seed, input.person, input.assigned, input.fraction);
  const byId = new Map(input.submissions.map((s) => [s.itemId, s]));
  return sample.filter((id) => {
    const first = byId.get(id);
    return first && !input.already.has(id) && washOutHolds(input.washOut, first, input.submissions, input.now);
  });
}

/**
 * The calibration items to add: enough to reach `targetCount(rate, assigned)`, drawn from `pool` in a seeded order
 * per person, skipping the ones already given and the ones the person may not get (e.g. a case they annotated).
 */
export function drawCalibration(input: {
  seed: number;
  person: string;
  rate: number;
  assigned: number;
  pool: readonly number[];
  given: ReadonlySet<number>;
  excluded: ReadonlySet<number>;
}): number[] {
  const want = targetCount(input.rate, input.assigned) - input.given.size;
  if (want <= 0) return [];
  return [...input.pool]
    .filter((id) => !input.given.has(id) && !input.excluded.has(id))
    .map((id) => ({ id, u: seededUnit("calibration", input.seed, input.person, id) }))
    .sort((a, b) => a.u - b.u || a.id - b.id)
    .slice(0, want)
    .map((r) => r.id);
}

/**
 * How many of the person's open items, after the item whose submission brought a new item, come before that new item
 * at least: the item "Next" leads to is never the new one, nor the one after it (docs/rater-quality.md, "Place").
 */
export const OPEN_AHEAD = 3;

/**
 * Where a new item goes in a person's list, as a sort key on the scale of the list's keys. The open items after
 * `from` (the place of the item just submitted; the top of the list when none was) are the candidates: the new item
 * goes just before one of them, skipping the first `OPEN_AHEAD`, or after the last item of the list, chosen with
 * the seed over (seed, person, item) — so it lands among the work still to do, like a newly assigned item, but never
 * where the person goes next, which would point at the submission that brought it. With `OPEN_AHEAD` or fewer open
 * items after `from`, it goes after the last item.
 */
export function placeAmongOpen(input: {
  seed: number;
  person: string;
  itemTag: string;
  openKeys: readonly number[];
  lastKey: number;
  from?: number;
}): number {
  const from = input.from ?? -Infinity;
  const slots = [...new Set(input.openKeys)].filter((k) => k > from).sort((a, b) => a - b);
  const u = seededUnit("place", input.seed, input.person, input.itemTag);
  const v = 0.25 + 0.5 * seededUnit("offset", input.seed, input.person, input.itemTag);
  const choices = Math.max(0, slots.length - OPEN_AHEAD);
  const at = OPEN_AHEAD + Math.floor(u * (choices + 1));
  if (at >= slots.length) return input.lastKey + v;
  // Strictly between the open item before and the chosen one (keys of cases are whole numbers one apart; a quality
  // item's key lies between two of them).
  const hi = slots[at]!;
  const lo = Math.max(slots[at - 1]!, hi - 1);
  return lo + (hi - lo) * v;
}
