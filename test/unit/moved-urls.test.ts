import { describe, expect, it } from "vitest";
import { movedUrl } from "../../app/platform/moved-urls";

// The URLs that moved when each protocol got its own prefix (docs/architecture.md, "URLs").
describe("moved URLs", () => {
  it.each([
    ["/rate", "/judge-validation"],
    ["/rate/12", "/judge-validation/12"],
    ["/review/3", "/screening/3"],
    ["/ratings", "/expert-ratings"],
    ["/ratings/mentat/7", "/mentat/7"],
    ["/ratings/cases/8", "/case-review/8"],
    ["/admin/judge/2/report", "/admin/judge-validation/2/report"],
    ["/admin/expert", "/admin/expert-ratings"],
    ["/admin/expert/mentat/4", "/admin/mentat/4"],
    ["/admin/expert/cases/5", "/admin/case-review/5"],
  ])("%s → %s", (from, to) => expect(movedUrl(from)).toBe(to));

  it("keeps the query and leaves other paths alone", () => {
    expect(movedUrl("/rate/1", "?x=1")).toBe("/judge-validation/1?x=1");
    expect(movedUrl("/rated")).toBeNull();
    expect(movedUrl("/reviews")).toBeNull();
    expect(movedUrl("/annotate/1")).toBeNull();
    expect(movedUrl("/nowhere")).toBeNull();
  });
});
