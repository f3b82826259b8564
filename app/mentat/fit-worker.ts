/**
 * The worker thread of the Bradley–Terry fits (docs/mentat.md, "Fits in the background"): runs the full-data fit
 * and the bootstrap refits it is sent, one message at a time, with the same pure functions as the one-thread path
 * (domain/bradley-terry.ts). Compiled to build/workers/mentat-fit.js by `npm run build:cli`; started by
 * parallel-fit.server.ts. Holds no database handle and logs nothing.
 */
import { parentPort } from "node:worker_threads";
import {
  bootstrapDraws,
  planPreferenceFit,
  refitReplicate,
  type AnnotationRow,
  type PreferenceFitPlan,
  type PreferenceLabelOptions,
} from "./domain/bradley-terry";

export type FitWorkerRequest =
  | { type: "plan"; rows: AnnotationRow[]; nOptions: number; options: Omit<PreferenceLabelOptions, "onReplicate"> }
  | { type: "init"; plan: PreferenceFitPlan; draws: Int32Array }
  | { type: "refit"; replicates: number[] };

export type FitWorkerReply =
  | { type: "plan"; plan: PreferenceFitPlan; draws: Int32Array }
  | { type: "ready" }
  | { type: "outcomes"; replicates: number[]; outcomes: ReturnType<typeof refitReplicate>[] }
  | { type: "error"; message: string };

const port = parentPort;
if (port) {
  let plan: PreferenceFitPlan | null = null;
  let draws: Int32Array | null = null;
  port.on("message", (request: FitWorkerRequest) => {
    const reply = (message: FitWorkerReply) => port.postMessage(message);
    try {
      if (request.type === "plan") {
        plan = planPreferenceFit(request.rows, request.nOptions, request.options);
        // Drawn into shared memory, so the other workers read the same resamples without a copy each.
        const shared = new Int32Array(new SharedArrayBuffer(plan.replicates * plan.rows.length * 4));
        shared.set(bootstrapDraws(plan));
        draws = shared;
        reply({ type: "plan", plan, draws });
      } else if (request.type === "init") {
        plan = request.plan;
        draws = request.draws;
        reply({ type: "ready" });
      } else {
        if (!plan || !draws) throw new Error("fit worker: refit before plan or init");
        const p = plan;
        const d = draws;
        reply({
          type: "outcomes",
          replicates: request.replicates,
          outcomes: request.replicates.map((b) => refitReplicate(p, d, b)),
        });
      }
    } catch (e) {
      reply({ type: "error", message: e instanceof Error ? e.message : String(e) });
    }
  });
}
