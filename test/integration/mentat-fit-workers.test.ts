/**
 * The Bradley–Terry fit on worker threads (docs/mentat.md, "Fits in the background"): the same labels, bit for bit,
 * with 1, 2 or 3 workers as on one thread (fitPreferenceLabels, itself checked against the Python reference in
 * test/unit/bradley-terry.test.ts), progress reported up to the total, bad input refused, and cancellation.
 * The rows come from a seeded generator (PyRandom), 40 questions × 8 experts, small enough to fit in a second.
 */
import { describe, expect, it } from "vitest";
import { fitPreferenceLabels, type AnnotationRow } from "../../app/mentat/domain/bradley-terry";
import { FitCancelled, fitPreferenceLabelsInWorkers } from "../../app/mentat/parallel-fit.server";
import { PyRandom } from "../../app/python-compat/random";

function rowsOf(seed: number, nQuestions: number): AnnotationRow[] {
  const rng = new PyRandom(seed);
  const rows: AnnotationRow[] = [];
  for (let q = 0; q < nQuestions; q++) {
    const beta = Array.from({ length: 5 }, () => 2 * rng.random() - 1);
    for (let a = 0; a < 8; a++) {
      const scores = beta.map((b) => Math.max(0, Math.min(100, Math.round(50 + 30 * b + 25 * (rng.random() - 0.5)))));
      rows.push({ question: `q${String(q).padStart(2, "0")}`, rater: `expert-${rng.randbelow(8)}`, scores });
    }
  }
  return rows;
}

describe("the fit on worker threads", () => {
  const rows = rowsOf(4, 40);
  const options = { bootstrap: 24, seed: 7 };

  it("gives the one-thread labels exactly, whatever the number of workers", async () => {
    const reference = fitPreferenceLabels(rows, 5, options);
    const progress: number[] = [];
    const one = await fitPreferenceLabelsInWorkers(rows, 5, options, { workers: 1 });
    const two = await fitPreferenceLabelsInWorkers(rows, 5, options, {
      workers: 2,
      onReplicate: (done, total) => {
        expect(total).toBe(24);
        progress.push(done);
      },
    });
    const three = await fitPreferenceLabelsInWorkers(rows, 5, options, { workers: 3 });
    expect(one).toEqual(reference);
    expect(two).toEqual(reference);
    expect(three).toEqual(reference);
    expect(progress.at(-1)).toBe(24);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    // The intervals are real: some width for every option of a question with disagreeing experts.
    expect(reference.questions.some((q) => q.upper.some((u, i) => u > q.lower[i]!))).toBe(true);
  });

  it("needs no worker beyond the first without bootstrap refits", async () => {
    expect(await fitPreferenceLabelsInWorkers(rows, 5, { bootstrap: 0 }, { workers: 2 })).toEqual(
      fitPreferenceLabels(rows, 5, { bootstrap: 0 }),
    );
  });

  it("passes the domain's refusal of bad rows on as an error", async () => {
    const bad = [{ question: "q", rater: "r", scores: [1, 2, 3] }];
    await expect(fitPreferenceLabelsInWorkers(bad, 5, options, { workers: 1 })).rejects.toThrow(
      /needs 5 finite scores/,
    );
  });

  it("stops the workers when cancelled", async () => {
    const controller = new AbortController();
    const pending = fitPreferenceLabelsInWorkers(
      rows,
      5,
      { bootstrap: 500, seed: 1 },
      {
        workers: 2,
        signal: controller.signal,
        onReplicate: (done) => done >= 4 && controller.abort(),
      },
    );
    await expect(pending).rejects.toBeInstanceOf(FitCancelled);
  });
});
