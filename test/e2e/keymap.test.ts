/**
 * The one keymap in the browser (docs/architecture.md, "Keymap"): on the annotator's list and workspace, J opens the
 * next item and K the previous one, N records nothing and goes nowhere, H opens the help page, and the workspace's
 * shortcut card shows the keymap's keys.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../app/platform/db.server";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { PASSWORD, seedStudy } from "../support/fixtures";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

let app: RunningApp;
let browser: Browser;

beforeAll(async () => {
  const t = tempDbPath();
  const db = openDatabase(t.dbPath);
  await seedStudy(db, {
    cases: 3,
    users: [
      { username: "ann1", roles: ["annotator"] },
      { username: "ann2", roles: ["annotator"] },
    ],
    annotators: ["ann1", "ann2"],
  });
  db.$client.close();
  app = await startApp({ dbPath: t.dbPath });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function shown(page: Page): Promise<string> {
  const id = new URL(page.url()).pathname.match(/\/annotate\/(\d+)$/)![1]!;
  await page.locator(`section[data-case-id="${id}"]`).waitFor();
  return id;
}

describe("the keymap", () => {
  it("J / K walk through the cases from the list and the workspace; N does nothing; H opens the help page", async () => {
    const page = await (await browser.newContext()).newPage();
    await logIn(page, app.url, "ann1", PASSWORD);
    await page.goto(`${app.url}/annotate`);
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
    await expect.poll(() => page.locator("[data-workspace]").count()).toBe(6);
    await page.context().close();
  });
});
