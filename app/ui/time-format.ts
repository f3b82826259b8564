/**
 * The one way a time is written on the pages (docs/architecture.md, "Times on the pages"): in the reader's locale and
 * time zone, with the zone named ("2 Dec 2026, 21:28 GMT-5", "Dec 2, 2026, 9:28 PM EST"), so a time is never read in
 * the wrong zone. The server, which knows neither, writes the same instant in UTC ("2026-12-02 02:28 UTC"); the
 * page replaces it once it runs in the browser (app/ui/time.tsx). Pure: locale and zone are passed in.
 */

export type TimeStyle = "datetime" | "date" | "time" | "seconds";

const OPTIONS: Record<TimeStyle, Intl.DateTimeFormatOptions> = {
  datetime: {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short",
  },
  date: { year: "numeric", month: "short", day: "numeric" },
  time: { hour: "numeric", minute: "2-digit", timeZoneName: "short" },
  seconds: { hour: "numeric", minute: "2-digit", second: "2-digit", timeZoneName: "short" },
};

/** `at` (ms since the epoch) in `locale` and `timeZone` (undefined: the runtime's own, i.e. the reader's browser). */
export function formatTime(
  at: number,
  style: TimeStyle = "datetime",
  where: { locale?: string; timeZone?: string } = {},
): string {
  return new Intl.DateTimeFormat(where.locale, { ...OPTIONS[style], timeZone: where.timeZone }).format(at);
}

/**
 * The server's text for `at`, the same on every machine: ISO date and 24-hour time in UTC, named as UTC (a date
 * alone has no zone). Also the text of `<time>` before the page runs.
 */
export function utcTime(at: number, style: TimeStyle = "datetime"): string {
  const iso = new Date(at).toISOString();
  const date = iso.slice(0, 10);
  if (style === "date") return date;
  const clock = style === "seconds" ? iso.slice(11, 19) : iso.slice(11, 16);
  return style === "datetime" ? `${date} ${clock} UTC` : `${clock} UTC`;
}
