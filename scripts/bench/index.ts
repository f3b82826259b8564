import { benchmarks as annotation } from "./annotation";
import { benchmarks as cli } from "./cli";
import { benchmarks as bulkImport } from "./bulk-import";
import { benchmarks as durability } from "./durability";
import { benchmarks as expertRatings } from "./expert-ratings";
import { benchmarks as mcEvaluation } from "./mc-evaluation";
import { benchmarks as grading } from "./grading";
import { benchmarks as importsMemory } from "./imports-memory";
import { benchmarks as runner } from "./runner";
import { benchmarks as pages } from "./pages";
import { benchmarks as evaluationPages } from "./evaluation-pages";
import { benchmarks as eventLoop } from "./event-loop";
import { benchmarks as stats } from "./stats";
import type { Benchmark } from "./types";

/** Every benchmark, in the order `npm run bench` runs them. */
export const benchmarks: Benchmark[] = [
  ...cli,
  ...stats,
  ...annotation,
  ...pages,
  ...evaluationPages,
  ...eventLoop,
  ...runner,
  ...expertRatings,
  ...durability,
  ...bulkImport,
  ...mcEvaluation,
  ...grading,
  ...importsMemory,
];
