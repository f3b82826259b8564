/**
 * The hierarchical Bradley–Terry label fit at MENTAT's size (57 questions, 8 experts, ~11.5 ratings per
 * question: 657 annotation rows) — one full fit, and the fit with 200 bootstrap refits that the admin page runs
 * synchronously (target ≤ 15 s, so an admin is not left waiting on a blocked server). Data from a seeded generator.
 */
import { performance } from "node:perf_hooks";
import {
  fitHierarchicalBradleyTerry,
  fitPreferenceLabels,
  sortAnnotationRows,
  winsFromAnnotations,
  type AnnotationRow,
} from "../../app/mentat/domain/bradley-terry";
import { PyRandom } from "../../app/python-compat/random";
import type { Benchmark } from "./types";

function mentatSized(seed: number): AnnotationRow[] {
  const rng = new PyRandom(seed);
  const rows: AnnotationRow[] = [];
  for (let q = 0; q < 57; q++) {
    const beta = Array.from({ length: 5 }, () => 2 * rng.random() - 1);
    for (let a = 0; a < 657 / 57; a++) {
      const rater = `expert-${rng.randbelow(8)}`;
      const scores = beta.map((b) => Math.max(0, Math.min(100, Math.round(50 + 30 * b + 25 * (rng.random() - 0.5)))));
      rows.push({ question: `q${String(q).padStart(3, "0")}`, rater, scores });
    }
  }
  return rows;
}

export const benchmarks: Benchmark[] = [
  {
    name: "expert-ratings",
    async run({ log }) {
      const rows = mentatSized(9);
      const sorted = sortAnnotationRows(rows);
      const questions = [...new Set(sorted.map((r) => r.question))];
      const raters = [...new Set(sorted.map((r) => r.rater))].sort();
      const data = winsFromAnnotations(sorted, questions, raters, 5);
      fitHierarchicalBradleyTerry(data); // warm-up
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        fitHierarchicalBradleyTerry(data);
        times.push(performance.now() - t0);
      }
      const single = times.sort((a, b) => a - b)[2]!;
      const t0 = performance.now();
      const labels = fitPreferenceLabels(rows, 5, { bootstrap: 200, seed: 1 });
      const withBootstrap = (performance.now() - t0) / 1000;
      log(
        `${rows.length} rows, ${data.wins.length} win records; ${labels.iterations} iterations; ${labels.bootstrap.notConverged} refits not converged`,
      );
      return {
        "hbt fit, MENTAT size": { value: Math.round(single * 10) / 10, unit: "ms", target: null, pass: null },
        "hbt fit + 200 bootstrap refits": {
          value: Math.round(withBootstrap * 100) / 100,
          unit: "s",
          target: "<= 15",
          pass: withBootstrap <= 15,
        },
      };
    },
  },
];
