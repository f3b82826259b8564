/**
 * Loaded into the production server by the event-loop benchmark only (`node --import <this> server.js`,
 * scripts/bench/event-loop.ts): the server's event-loop delay, sampled every millisecond. On SIGUSR2 it prints one
 * line `event-loop-delay {"max":…,"p99":…,"mean":…,"samples":…}` (milliseconds beyond the 1 ms sampling interval)
 * and starts a new histogram; on load it prints `event-loop-probe ready`. The app itself knows nothing of it.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";

const RESOLUTION_MS = 1;
const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
histogram.enable();
const ms = (ns) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 10) / 10);
process.on("SIGUSR2", () => {
  const figures = {
    max: ms(histogram.max),
    p99: ms(histogram.percentile(99)),
    mean: ms(histogram.mean),
    samples: histogram.count,
  };
  process.stdout.write(`event-loop-delay ${JSON.stringify(figures)}\n`);
  histogram.reset();
});
process.stdout.write("event-loop-probe ready\n");
