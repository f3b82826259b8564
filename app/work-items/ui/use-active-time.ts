/**
 * Measures time on task in the page (rules: app/work-items/domain/active-time.ts): typing, clicking and pointer use
 * while the page is focused and visible count, idle gaps and time away do not. `take()` hands over the time accrued
 * since the last take, for the next save to carry as `activeMs`.
 */
import { useCallback, useEffect, useRef } from "react";
import { pause, recordActivity, START_CLOCK, takeActive, type ActiveClock } from "../domain/active-time";

const ACTIVITY_EVENTS = ["keydown", "pointerdown", "input", "wheel"] as const;

export function useActiveTime(): { take: () => number } {
  const clock = useRef<ActiveClock>(START_CLOCK);

  useEffect(() => {
    const active = () => {
      if (document.visibilityState === "visible" && document.hasFocus())
        clock.current = recordActivity(clock.current, Date.now());
    };
    const away = () => {
      // The time up to leaving counts as if leaving were an activity; after it, nothing until the next activity.
      if (clock.current.lastAt !== null) clock.current = pause(recordActivity(clock.current, Date.now()));
    };
    const onVisibility = () => (document.visibilityState === "hidden" ? away() : undefined);
    for (const e of ACTIVITY_EVENTS) window.addEventListener(e, active, { capture: true, passive: true });
    window.addEventListener("blur", away);
    document.addEventListener("visibilitychange", onVisibility);
    return () => {
      for (const e of ACTIVITY_EVENTS) window.removeEventListener(e, active, { capture: true });
      window.removeEventListener("blur", away);
      document.removeEventListener("visibilitychange", onVisibility);
    };
  }, []);

  const take = useCallback(() => {
    const { ms, clock: next } = takeActive(clock.current);
    clock.current = next;
    return ms;
  }, []);
  return { take };
}
