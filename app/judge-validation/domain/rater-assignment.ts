/**
 * Giving each sampled response of a judge-validation set to three raters (docs/judge-validation.md#raters: every sampled
 * response goes to three raters). Pure: the caller passes the items and the chosen raters and gets the assignments back.
 */
import { PyRandom } from "../../python-compat/random";

export const RATERS_PER_RESPONSE = 3;

export type RaterPlan =
  | { ok: true; assignments: { itemId: number; raterId: string }[]; load: Record<string, number> }
  | { ok: false; error: string };

/**
 * Every item to `perItem` distinct raters. Each slot goes to the rater with the smallest load so far; ties are broken
 * by one seeded random order of the raters (Python's `random.shuffle`), rotated after each pick so that equal loads
 * do not always put the same people together. Final loads differ by at most one. The same items, raters and seed
 * give the same plan.
 *
 * @example
 * planRaterAssignments({ itemIds: [1, 2], raterIds: ["a", "b", "c", "d"], seed: 1 }).load // two raters get 2, two get 1
 */
export function planRaterAssignments(input: {
  itemIds: readonly number[];
  raterIds: readonly string[];
  seed: number;
  perItem?: number;
}): RaterPlan {
  const perItem = input.perItem ?? RATERS_PER_RESPONSE;
  const raters = [...new Set(input.raterIds)].sort();
  if (raters.length < perItem)
    return {
      ok: false,
      error: `choose at least ${perItem} raters: each response goes to ${perItem} different people (${raters.length} chosen).`,
    };
  const order = [...raters];
  new PyRandom(input.seed).shuffle(order);
  const rank = new Map(order.map((r, i) => [r, i]));
  const load: Record<string, number> = Object.fromEntries(raters.map((r) => [r, 0]));
  const assignments: { itemId: number; raterId: string }[] = [];
  for (const itemId of input.itemIds) {
    const on = new Set<string>();
    for (let slot = 0; slot < perItem; slot++) {
      let best: string | null = null;
      for (const r of raters) {
        if (on.has(r)) continue;
        if (best === null || load[r] < load[best] || (load[r] === load[best] && rank.get(r)! < rank.get(best)!))
          best = r;
      }
      on.add(best!);
      load[best!] += 1;
      rank.set(best!, rank.get(best!)! + raters.length);
      assignments.push({ itemId, raterId: best! });
    }
  }
  return { ok: true, assignments, load };
}
