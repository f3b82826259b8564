/**
 * Assigning cases to annotators (docs/safe-psych.md#assignment): every case to exactly two distinct annotators, load balanced,
 * reproducible from a seed. Pure: the caller passes the current state and gets the new assignments back.
 */
import { PyRandom } from "../../python-compat/random";

export const ANNOTATORS_PER_CASE = 2;

export interface AssignmentInput {
  /** Cases in study order, with the annotators already assigned to each. */
  cases: { caseId: number; assigned: string[] }[];
  /** The annotators to choose from (ids); order does not matter, the seed decides ties. */
  annotators: string[];
  /** Current number of assignments per annotator in this study (missing = 0). */
  load?: Record<string, number>;
  seed: number;
}

export type AssignmentPlan =
  | { ok: true; assignments: { caseId: number; annotatorId: string }[]; load: Record<string, number> }
  | { ok: false; error: string };

/**
 * Fills every case up to two annotators. Each slot goes to the eligible annotator (not already on the case) with the
 * smallest load; ties are broken by one seeded random order of the annotators (Python's `random.shuffle`, so a
 * seed gives the same plan in Concord and in a Python re-analysis). With equal starting loads, final loads differ by
 * at most one.
 */
export function planAssignments(input: AssignmentInput): AssignmentPlan {
  const annotators = [...new Set(input.annotators)].sort();
  if (annotators.length < ANNOTATORS_PER_CASE)
    return {
      ok: false,
      error: `choose at least ${ANNOTATORS_PER_CASE} annotators: each case goes to two different people.`,
    };
  const rng = new PyRandom(input.seed);
  const order = [...annotators];
  rng.shuffle(order);
  const rank = new Map(order.map((a, i) => [a, i]));
  const load: Record<string, number> = {};
  for (const a of annotators) load[a] = input.load?.[a] ?? 0;
  const assignments: { caseId: number; annotatorId: string }[] = [];
  for (const c of input.cases) {
    const on = new Set(c.assigned);
    for (let slot = on.size; slot < ANNOTATORS_PER_CASE; slot++) {
      let best: string | null = null;
      for (const a of annotators) {
        if (on.has(a)) continue;
        if (best === null || load[a]! < load[best]! || (load[a] === load[best] && rank.get(a)! < rank.get(best)!))
          best = a;
      }
      if (best === null) return { ok: false, error: `case ${c.caseId} has no eligible annotator left.` };
      on.add(best);
      load[best]! += 1;
      assignments.push({ caseId: c.caseId, annotatorId: best });
      // Rotate the tie-break order so equal loads do not always pair the same two people.
      rank.set(best, rank.get(best)! + annotators.length);
    }
  }
  return { ok: true, assignments, load };
}

/** Where an assignment's annotation stands, as the study page's assignments window filters it. */
export const ASSIGNMENT_STATES = ["unstarted", "draft", "done"] as const;
export type AssignmentState = (typeof ASSIGNMENT_STATES)[number];
