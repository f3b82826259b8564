/**
 * Workspaces skip the loader after a successful draft autosave (docs/architecture.md#the-work-item-engine) and
 * revalidate after anything else.
 */
import { describe, expect, it } from "vitest";
import { skipRevalidationAfterDraft } from "../../app/work-items/ui/should-revalidate";

function args(intent: string | null, actionResult: unknown) {
  const formData = new FormData();
  if (intent !== null) formData.set("intent", intent);
  const url = new URL("http://x/annotate/c1");
  return {
    currentUrl: url,
    nextUrl: url,
    currentParams: {},
    nextParams: {},
    formMethod: "POST" as const,
    formAction: "/annotate/c1",
    formEncType: "application/x-www-form-urlencoded" as const,
    formData,
    actionResult,
    defaultShouldRevalidate: true,
  };
}

describe("skipRevalidationAfterDraft", () => {
  it("does not revalidate after a saved draft", () => {
    expect(skipRevalidationAfterDraft(args("draft", { ok: true, version: 3 }))).toBe(false);
  });
  it("revalidates after a submit or a plain navigation, never after a refused or undelivered save", () => {
    // A refused or undelivered save changed nothing on the server; reloading offline would show an error page.
    expect(skipRevalidationAfterDraft(args("draft", { ok: false, message: "conflict" }))).toBe(false);
    expect(skipRevalidationAfterDraft(args("submit", { ok: false, status: 0, message: "unreachable" }))).toBe(false);
    expect(skipRevalidationAfterDraft(args("submit", { ok: true }))).toBe(true);
    expect(skipRevalidationAfterDraft({ ...args(null, undefined), formData: undefined })).toBe(true);
  });
});
