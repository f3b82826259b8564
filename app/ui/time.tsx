/**
 * `<Time at={ms} />`: a time as every page writes it (app/ui/time-format.ts). The server's page and the browser's
 * first render write it in UTC, so hydration finds the same text; after hydration it is rewritten in the reader's
 * locale and zone, with the zone named. The machine-readable instant is in `dateTime`, the UTC text in `title`.
 */
import { useEffect, useState } from "react";
import { formatTime, utcTime, type TimeStyle } from "./time-format";

/** False on the server and in the first client render, true once the page has hydrated. */
function useHydrated(): boolean {
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return hydrated;
}

export function Time({ at, style = "datetime" }: { at: number; style?: TimeStyle }) {
  const hydrated = useHydrated();
  const utc = utcTime(at, style);
  return (
    <time dateTime={new Date(at).toISOString()} title={utc}>
      {hydrated ? formatTime(at, style) : utc}
    </time>
  );
}
