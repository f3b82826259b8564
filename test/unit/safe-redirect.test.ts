import { describe, expect, it } from "vitest";
import { safeRedirect } from "../../app/accounts/safe-redirect";

describe("safeRedirect (login redirectTo)", () => {
  it("keeps same-site paths with their query and fragment", () => {
    expect(safeRedirect("/annotate/12")).toBe("/annotate/12");
    expect(safeRedirect("/admin/studies/1?created=3#cases")).toBe("/admin/studies/1?created=3#cases");
  });
  it.each([
    ["//evil.example", "protocol-relative"],
    ["/\t/evil.example", "a tab that browsers drop (found by review)"],
    ["/\n/evil.example", "a newline"],
    ["/\\evil.example", "a backslash browsers read as a slash"],
    ["https://evil.example/", "absolute"],
    ["evil.example", "relative"],
    ["", "empty"],
  ])("sends %j home (%s)", (input) => {
    expect(safeRedirect(input)).toBe("/");
  });
  it("ignores a missing value", () => expect(safeRedirect(null)).toBe("/"));
});
