/**
 * Which of a case's two primary annotations the adjudicator sees as "Annotator A" (docs/safe-psych.md,
 * "Annotator A and B"). Random per case so that position carries no information about who wrote what, but drawn from
 * the study's recorded seed so that the same data always give the same order: Python replays it as
 * `random.Random(int(hashlib.sha256(f"{seed}:{case_id}".encode()).hexdigest()[:12], 16)).randrange(2)` — 0 keeps
 * the annotations in submission order, 1 swaps them.
 */
import { seedFromText } from "../../mentat/public";
import { PyRandom } from "../../python-compat/random";

/** The largest seed drawn for a study: a positive 31-bit integer, exact in SQLite, JSON and Python alike. */
export const MAX_ANNOTATOR_ORDER_SEED = 2 ** 31 - 1;

/**
 * The two annotation ids as [A, B]: `first` and `second` in submission order, swapped when the case's draw is 1.
 *
 * @example annotatorOrder(7, "case-12", [31, 40]) // [31, 40] or [40, 31], always the same for these inputs
 */
export function annotatorOrder<T>(seed: number, externalCaseId: string, [first, second]: readonly [T, T]): [T, T] {
  const swap = new PyRandom(seedFromText(`${seed}:${externalCaseId}`)).randbelow(2) === 1;
  return swap ? [second, first] : [first, second];
}
