/**
 * The login page's redirectTo after dot-segment removal (docs/security.md, "Open redirect"): a path such as
 * `/%2e%2e//evil.example` normalises to `//evil.example`, which a browser reads as another host. Only a path whose
 * normalised form starts with exactly one slash is kept.
 */
import { describe, expect, it } from "vitest";
import { safeRedirect } from "../../app/accounts/safe-redirect";

const HOSTILE = [
  "/%2e%2e//evil.example",
  "/.//x",
  "/a/..//x",
  "/%2e//x",
  "/%2E%2E//evil.example",
  "/.%2e//evil.example",
  "/%2e.//evil.example",
  "/a/%2e%2e//x",
  "/a/.%2E//x",
  "/..//x",
  "/./%2e//x",
  "/a/b/../..//x",
  "/%2e%2e/%2f/evil.example",
];

describe("safeRedirect refuses paths that normalise to another host", () => {
  it.each(HOSTILE)("sends %j home", (input) => {
    expect(safeRedirect(input)).toBe("/");
  });
  it.each(HOSTILE)("sends %j home when it arrives URL-encoded in the query string", (input) => {
    const query = new URLSearchParams({ redirectTo: input }).toString();
    expect(safeRedirect(new URLSearchParams(query).get("redirectTo"))).toBe("/");
  });
  it("keeps a double-encoded dot segment as the literal same-site path it is", () => {
    // %252e is "%2e" as text: browsers do not decode it again, so this stays a path on this site.
    expect(safeRedirect("/%252e%252e//evil.example")).toBe("/%252e%252e//evil.example");
  });
  it("still keeps ordinary paths, normalised", () => {
    expect(safeRedirect("/annotate/./12")).toBe("/annotate/12");
    expect(safeRedirect("/admin/../annotate?x=1")).toBe("/annotate?x=1");
  });
});
