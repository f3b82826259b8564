/** The idle-gap rule of time on task (app/work-items/domain/active-time.ts). */
import { describe, expect, it } from "vitest";
import {
  IDLE_GAP_MS,
  median,
  pause,
  recordActivity,
  START_CLOCK,
  takeActive,
  type ActiveClock,
} from "../../app/work-items/domain/active-time";
import { formatDuration, summariseTimeOnTask } from "../../app/study-report/domain/time-on-task";

const run = (times: number[], clock: ActiveClock = START_CLOCK) => times.reduce((c, t) => recordActivity(c, t), clock);

describe("active time", () => {
  it("counts the time between activities that are at most a minute apart", () => {
    expect(run([0, 1_000, 31_000, 91_000]).pendingMs).toBe(91_000);
  });

  it("excludes a gap over the idle limit whole, and counts again from the next activity", () => {
    expect(IDLE_GAP_MS).toBe(60_000);
    expect(run([0, 10_000, 10_000 + IDLE_GAP_MS + 1, 10_000 + IDLE_GAP_MS + 5_001]).pendingMs).toBe(15_000);
  });

  it("a gap of exactly the limit still counts", () => {
    expect(run([0, IDLE_GAP_MS]).pendingMs).toBe(IDLE_GAP_MS);
  });

  it("the first activity and the first after leaving the page count nothing", () => {
    const c = pause(run([0, 5_000]));
    expect(c.lastAt).toBeNull();
    expect(run([6_000, 8_000], c).pendingMs).toBe(7_000);
  });

  it("a clock that goes backwards restarts instead of subtracting", () => {
    expect(run([10_000, 5_000, 6_000]).pendingMs).toBe(1_000);
  });

  it("taking hands over the pending time once and keeps the clock running", () => {
    const { ms, clock } = takeActive(run([0, 2_000]));
    expect(ms).toBe(2_000);
    expect(clock).toEqual({ pendingMs: 0, lastAt: 2_000 });
    expect(recordActivity(clock, 3_000).pendingMs).toBe(1_000);
  });
});

describe("medians and their display", () => {
  it("median of odd and even counts, none for no values", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
  });

  it("an empty study has no median", () => {
    expect(summariseTimeOnTask([])).toEqual({ n: 0, median_ms: null, total_ms: 0, per_annotator: [], per_case: [] });
  });

  it("durations read as seconds, minutes or hours", () => {
    expect(formatDuration(12_400)).toBe("12 s");
    expect(formatDuration(245_000)).toBe("4 min 05 s");
    expect(formatDuration(3_720_000)).toBe("1 h 02 min");
    expect(formatDuration(null)).toBe("—");
  });
});
