/**
 * Time on task (docs/architecture.md, "The work-item engine"): the time a person is actively working on an item —
 * the page focused and visible, and typing or clicking. Time between two activities counts when the gap is at most
 * IDLE_GAP_MS; a longer gap (a coffee, another window, a colleague at the door) counts for nothing, and so does the
 * time after the last activity. Pure: the page's clock readings are passed in.
 */

/** A gap between two activities longer than this is idle time, excluded whole. */
export const IDLE_GAP_MS = 60_000;

/** At most this much active time is accepted with one save (a page cannot have been worked on for longer). */
export const MAX_ACTIVE_MS_PER_SAVE = 12 * 60 * 60 * 1000;

export interface ActiveClock {
  /** Active time accrued and not yet sent. */
  pendingMs: number;
  /** When the last activity was, or null when the page was left (blurred, hidden) since. */
  lastAt: number | null;
}

export const START_CLOCK: ActiveClock = { pendingMs: 0, lastAt: null };

/** An activity at `now`: the time since the previous one counts unless it was an idle gap. */
export function recordActivity(clock: ActiveClock, now: number, idleGapMs = IDLE_GAP_MS): ActiveClock {
  if (clock.lastAt === null || now < clock.lastAt) return { ...clock, lastAt: now };
  const gap = now - clock.lastAt;
  return { pendingMs: clock.pendingMs + (gap <= idleGapMs ? gap : 0), lastAt: now };
}

/** The page was left (blurred or hidden): the time until the next activity counts for nothing. */
export function pause(clock: ActiveClock): ActiveClock {
  return { ...clock, lastAt: null };
}

/** The active time to send with a save, and the clock after sending it (still running from the last activity). */
export function takeActive(clock: ActiveClock): { ms: number; clock: ActiveClock } {
  return { ms: Math.round(clock.pendingMs), clock: { ...clock, pendingMs: 0 } };
}

/** The median of `values` (mean of the two middle values for an even count), or null for none. */
export function median(values: readonly number[]): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
