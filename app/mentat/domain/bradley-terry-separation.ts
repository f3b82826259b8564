/**
 * When MENTAT's Bradley–Terry objective has no finite minimum (docs/mentat.md, "Separation").
 *
 * Without a ridge on the strengths, the likelihood of one question's wins has a finite maximum exactly when its
 * comparison graph (an edge i → j for every win of i over j, any rater) is strongly connected over the options that
 * were compared (Zermelo 1929; Ford 1957, "Solution of a ranking problem from binary comparisons"). Otherwise some
 * set of options is never beaten by the others — for example an option that wins every comparison it is in, or one
 * that loses every one — and raising that set's strengths always lowers the objective, so the optimiser stops
 * wherever its tolerance says and the label reflects the stopping rule, not the data. The rater slopes and offsets
 * do not change this: slopes are bounded above zero and an offset adds the same amount to every win.
 */
import type { PairwiseData } from "./bradley-terry";

/** Options never compared (every rating tied them with everything) are left out; no comparison at all is fine. */
export function separatedQuestions(data: PairwiseData): boolean[] {
  const k = data.nOptions;
  const edges = Array.from({ length: data.nQuestions }, () =>
    Array.from({ length: k }, () => new Array<boolean>(k).fill(false)),
  );
  for (const w of data.wins) if (w.count > 0) edges[w.question][w.winner][w.loser] = true;
  return edges.map((adjacent) => !stronglyConnected(adjacent));
}

/** Whether every compared option reaches every other along wins and is reached back. */
function stronglyConnected(adjacent: boolean[][]): boolean {
  const k = adjacent.length;
  const compared = Array.from({ length: k }, (_, i) => adjacent[i].some(Boolean) || adjacent.some((row) => row[i]));
  const nodes = compared.flatMap((c, i) => (c ? [i] : []));
  if (nodes.length <= 1) return true;
  const reach = (forward: boolean) => {
    const seen = new Set([nodes[0]]);
    const stack = [nodes[0]];
    while (stack.length) {
      const i = stack.pop()!;
      for (let j = 0; j < k; j++)
        if (!seen.has(j) && (forward ? adjacent[i][j] : adjacent[j][i])) {
          seen.add(j);
          stack.push(j);
        }
    }
    return seen.size === nodes.length;
  };
  return reach(true) && reach(false);
}
