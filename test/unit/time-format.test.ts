/**
 * One time format on every page (docs/architecture.md, "Times on the pages"): the reader's locale and zone with the
 * zone named; the server writes UTC, named as such, and that is also the first render in the browser, so hydration
 * finds the same text.
 */
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Time } from "../../app/ui/time";
import { formatTime, utcTime } from "../../app/ui/time-format";

// 2026-12-02 02:28:54 UTC: 21:28:54 the evening before in New York.
const AT = Date.UTC(2026, 11, 2, 2, 28, 54);

/** ICU writes some spaces as narrow no-break spaces ("9:28 PM"); compare the words. */
const plain = (text: string) => text.replace(/\s/g, " ");
const at = (style: Parameters<typeof formatTime>[1], locale: string, timeZone: string) =>
  plain(formatTime(AT, style, { locale, timeZone }));

describe("formatTime", () => {
  it("writes a time in the reader's locale and zone, naming the zone", () => {
    expect(at("datetime", "en-GB", "America/New_York")).toBe("1 Dec 2026, 21:28 GMT-5");
    expect(at("datetime", "en-US", "America/New_York")).toBe("Dec 1, 2026, 9:28 PM EST");
    expect(at("seconds", "en-GB", "Europe/London")).toBe("2:28:54 GMT");
    expect(at("time", "de-DE", "Europe/Berlin")).toBe("03:28 MEZ");
    // A date alone, in the reader's zone (the evening before in New York).
    expect(at("date", "en-GB", "America/New_York")).toBe("1 Dec 2026");
  });
});

describe("utcTime and <Time>", () => {
  it("writes the same UTC text on every machine", () => {
    expect(utcTime(AT)).toBe("2026-12-02 02:28 UTC");
    expect(utcTime(AT, "seconds")).toBe("02:28:54 UTC");
    expect(utcTime(AT, "time")).toBe("02:28 UTC");
    expect(utcTime(AT, "date")).toBe("2026-12-02");
  });

  it("renders UTC on the server (the browser's first render is the same), the instant in dateTime", () => {
    expect(renderToString(createElement(Time, { at: AT }))).toBe(
      '<time dateTime="2026-12-02T02:28:54.000Z" title="2026-12-02 02:28 UTC">2026-12-02 02:28 UTC</time>',
    );
  });
});
