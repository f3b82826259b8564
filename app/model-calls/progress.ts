/**
 * Progress of a run on stderr: a bar redrawn in place with rate and ETA on a terminal, a plain line every 10% (or
 * every 30 s) otherwise. Only counts are shown, never case content.
 */
export interface ProgressState {
  /** Finished trajectories, including those finished in earlier sessions. */
  finished: number;
  total: number;
  /** Calls answered in this session (model and judge). */
  calls: number;
  retries: number;
  /** Calls recorded as failures (empty after retries, rejected by the server). */
  failures: number;
  /** What `finished` and `total` count; "trajectories" when absent. */
  unit?: string;
}

export interface ProgressSink {
  start(state: ProgressState): void;
  update(state: ProgressState): void;
  finish(state: ProgressState): void;
}

/** A sink that shows nothing (benchmarks, tests). */
export const silentProgress: ProgressSink = { start() {}, update() {}, finish() {} };

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h > 0) return `${h}h${String(m).padStart(2, "0")}m`;
  if (m > 0) return `${m}m${String(r).padStart(2, "0")}s`;
  return `${r}s`;
}

export function progressLine(
  state: ProgressState,
  startFinished: number,
  elapsedSeconds: number,
  width = 24,
  unit = "trajectories",
): string {
  const fraction = state.total > 0 ? state.finished / state.total : 1;
  const filled = Math.round(fraction * width);
  const bar = "█".repeat(filled) + "░".repeat(width - filled);
  const rate = elapsedSeconds > 0 ? state.calls / elapsedSeconds : 0;
  const doneNow = state.finished - startFinished;
  const eta = doneNow > 0 ? ((state.total - state.finished) * elapsedSeconds) / doneNow : Infinity;
  const extras = [
    state.retries > 0 ? `${state.retries} retries` : "",
    state.failures > 0 ? `${state.failures} failed calls` : "",
  ].filter(Boolean);
  return (
    `[${bar}] ${state.finished}/${state.total} ${state.unit ?? unit} ${(100 * fraction).toFixed(0)}% · ` +
    `${rate.toFixed(1)} calls/s · ETA ${state.finished === state.total ? "0s" : formatDuration(eta)}` +
    (extras.length ? ` · ${extras.join(", ")}` : "")
  );
}

export function createProgress(
  write: (text: string) => void,
  isTTY: boolean,
  now: () => number,
  unit = "trajectories",
): ProgressSink {
  let startedAt = 0;
  let startFinished = 0;
  let lastDraw = -Infinity;
  let lastTenth = -1;
  let lastPrinted = -1;
  const elapsed = () => (now() - startedAt) / 1000;
  const draw = (state: ProgressState, force: boolean) => {
    const t = now();
    if (isTTY) {
      if (!force && t - lastDraw < 100) return;
      lastDraw = t;
      write(`\r\x1b[2K${progressLine(state, startFinished, elapsed(), 24, unit)}`);
      return;
    }
    const tenth = state.total > 0 ? Math.floor((10 * state.finished) / state.total) : 10;
    if (force || tenth > lastTenth || t - lastDraw >= 30_000) {
      lastTenth = tenth;
      if (state.finished === lastPrinted && t - lastDraw < 30_000) return;
      lastPrinted = state.finished;
      lastDraw = t;
      write(`progress: ${progressLine(state, startFinished, elapsed(), 0, unit).replace(/^\[\] /, "")}\n`);
    }
  };
  return {
    start(state) {
      startedAt = now();
      startFinished = state.finished;
      lastTenth = state.total > 0 ? Math.floor((10 * state.finished) / state.total) : 10;
      draw(state, true);
    },
    update(state) {
      draw(state, false);
    },
    finish(state) {
      draw(state, true);
      if (isTTY) write("\n");
    },
  };
}
