/**
 * The Bradley–Terry label fit on a pool of worker threads (docs/mentat.md, "Fits in the background"): the first
 * worker makes the full-data fit and draws every replicate's resample (bootstrapDraws, one seeded stream, in
 * replicate order); then every worker refits replicates handed out a few at a time, and the outcomes are put back
 * in replicate order. Each replicate's resample is fixed before any refit and a refit depends on nothing else, so
 * the labels are the same, to the last bit, for 1 worker or 16 — and the same as fitPreferenceLabels on one thread.
 * Nothing heavy runs on the calling thread: a server answering pages stays responsive during a fit.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import {
  assemblePreferenceLabels,
  CURRENT_MENTAT_FIT,
  MENTAT_FIT_VERSIONS,
  type AnnotationRow,
  type PreferenceFitPlan,
  type PreferenceLabelOptions,
  type PreferenceLabels,
  type ReplicateOutcome,
} from "./domain/bradley-terry";
import type { FitWorkerReply, FitWorkerRequest } from "./fit-worker";
import { workerScript } from "../platform/worker-script.server";

export interface ParallelFitOptions {
  /** Worker threads; default os.availableParallelism() (at most one per replicate, at least one). */
  workers?: number;
  /** After each batch of refits: replicates done so far, of the total. */
  onReplicate?: (done: number, total: number) => void;
  /** Aborting terminates the workers; the promise then rejects with FitCancelled. */
  signal?: AbortSignal;
}

export class FitCancelled extends Error {
  override name = "FitCancelled";
}

/** How many worker threads a fit uses by default: one per available core. */
export function defaultFitWorkers(): number {
  return Math.max(1, availableParallelism());
}

export async function fitPreferenceLabelsInWorkers(
  rows: readonly AnnotationRow[],
  nOptions: number,
  options: Omit<PreferenceLabelOptions, "onReplicate">,
  run: ParallelFitOptions = {},
): Promise<PreferenceLabels> {
  const script = await workerScript("mentat-fit");
  const replicates = options.bootstrap ?? MENTAT_FIT_VERSIONS[options.fitVersion ?? CURRENT_MENTAT_FIT].bootstrap;
  const count = Math.max(1, Math.min(run.workers ?? defaultFitWorkers(), replicates || 1));
  const workers: Worker[] = [];
  const stopAll = () => Promise.all(workers.map((w) => w.terminate())).then(() => undefined);
  try {
    return await new Promise<PreferenceLabels>((resolve, reject) => {
      let settled = false;
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        reject(e);
      };
      if (run.signal?.aborted) return fail(new FitCancelled("The fit was cancelled."));
      run.signal?.addEventListener("abort", () => fail(new FitCancelled("The fit was cancelled.")), { once: true });

      let plan: PreferenceFitPlan | null = null;
      let draws: Int32Array | null = null;
      const outcomes: ReplicateOutcome[] = new Array(replicates);
      let next = 0;
      let done = 0;
      // A few replicates per message: progress stays fine-grained and the last batches still balance the load.
      const batch = Math.max(1, Math.floor(replicates / (count * 16)));
      const send = (w: Worker, request: FitWorkerRequest) => w.postMessage(request);
      const finish = () => {
        if (settled || !plan) return;
        settled = true;
        try {
          resolve(assemblePreferenceLabels(plan, outcomes));
        } catch (e) {
          reject(e as Error);
        }
      };
      const dispatch = (w: Worker) => {
        if (settled) return;
        if (next >= replicates) return;
        const slice: number[] = [];
        while (slice.length < batch && next < replicates) slice.push(next++);
        send(w, { type: "refit", replicates: slice });
      };
      const start = (w: Worker, index: number) => {
        w.on("error", (e) => fail(e instanceof Error ? e : new Error(String(e))));
        w.on("exit", (code) => {
          if (code !== 0) fail(new Error(`A fit worker stopped (exit code ${code}).`));
        });
        w.on("message", (reply: FitWorkerReply) => {
          if (settled) return;
          if (reply.type === "error") return fail(new Error(reply.message));
          if (reply.type === "plan") {
            plan = reply.plan;
            draws = reply.draws;
            if (replicates === 0) return finish();
            for (let i = 1; i < count; i++) {
              const other = new Worker(script);
              workers.push(other);
              start(other, i);
              send(other, { type: "init", plan, draws });
            }
            return dispatch(w);
          }
          if (reply.type === "ready") return dispatch(w);
          reply.replicates.forEach((b, i) => (outcomes[b] = reply.outcomes[i]!));
          done += reply.replicates.length;
          run.onReplicate?.(done, replicates);
          if (done === replicates) return finish();
          dispatch(w);
        });
        if (index === 0) send(w, { type: "plan", rows: [...rows], nOptions, options });
      };
      const first = new Worker(script);
      workers.push(first);
      start(first, 0);
    });
  } finally {
    await stopAll();
  }
}
