/**
 * The one keymap in the browser (docs/architecture.md, "Keymap"): on the annotator's list and workspace, J opens the
 * next item and K the previous one, N records nothing and goes nowhere, H opens the help page, and the workspace's
 * shortcut card shows the keymap's keys.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { hydrated } from "../support/browser";
import { seedStudy } from "../support/fixtures";
import { seededApp } from "../support/e2e-app";

const e2e = seededApp((db) =>
  seedStudy(db, {
    cases: 3,
    users: [
      { username: "ann1", roles: ["annotator"] },
      { username: "ann2", roles: ["annotator"] },
    ],
    annotators: ["ann1", "ann2"],
  }),
);

async function shown(page: Page): Promise<string> {
  const id = new URL(page.url()).pathname.match(/\/annotate\/(\d+)$/)![1]!;
  await page.locator(`section[data-case-id="${id}"]`).waitFor();
  return id;
}

describe("the keymap", () => {
  it("J / K walk through the cases from the list and the workspace; N does nothing; H opens the help page", async () => {
    const page = await e2e.pageAs("ann1");
    await page.goto(`${e2e.app.url}/annotate`);
    await hydrated(page);
    expect(await page.getByTestId("next-case").textContent()).toContain("J");
    await page.keyboard.press("j");
    await page.waitForURL(/\/annotate\/\d+$/);
    const first = await shown(page);
    const card = await page.getByTestId("shortcuts").textContent();
    for (const k of ["next case, without submitting", "previous case, without submitting", "the study's guidelines"])
      expect(card).toContain(k);
    // N is no longer "next": the page stays, and nothing is recorded.
    await page.keyboard.press("n");
    await page.waitForTimeout(300);
    expect(await shown(page)).toBe(first);
    expect(await page.getByTestId("save-state").textContent()).toBe("Drafts save automatically");
    await page.keyboard.press("j");
    await page.waitForURL((u) => !u.pathname.endsWith(`/${first}`));
    const second = await shown(page);
    await page.keyboard.press("k");
    await page.waitForURL((u) => u.pathname.endsWith(`/annotate/${first}`));
    expect(await shown(page)).toBe(first);
    expect(second).not.toBe(first);
    await page.keyboard.press("h");
    await page.waitForURL(/\/help$/);
    // The URL changes before the help page has rendered: wait for its list.
    await expect.poll(() => page.locator("[data-workspace]").count()).toBe(9);
    await page.context().close();
  });
});
