/**
 * Guidelines seen per person (docs/guidelines.md, "In the workspaces"): the panel opens by itself on a person's
 * first visit to a study's workspace — in the page as the server sends it — and not again on another browser; the
 * record is written by a form post with the CSRF token.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { startApp, type RunningApp } from "../support/server";

let app: RunningApp;
let browser: Browser;

beforeAll(async () => {
  app = await startApp({ demo: true });
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

/** A fresh browser profile (no storage shared with another), logged in as annotator1, on their first case. */
async function firstCase() {
  const context = await browser.newContext();
  const page = await context.newPage();
  await logIn(page, app.url, "annotator1", "concord-demo");
  await page.goto(`${app.url}/annotate`);
  const href = await page.locator('a[href^="/annotate/"]').first().getAttribute("href");
  return { context, page, href: href! };
}

describe("guidelines seen per person", () => {
  it("opens on the first visit only, whichever browser comes next", async () => {
    const first = await firstCase();
    const recorded = first.page.waitForResponse((r) => r.url().endsWith("/guidelines/seen"), { timeout: 10_000 });
    const response = await first.page.goto(`${app.url}${first.href}`);
    // Open in the server's page, before any script runs.
    expect(await response!.text()).toMatch(/data-testid="guidelines-panel"(?![^>]*hidden)/);
    await hydrated(first.page);
    expect(await first.page.getByTestId("guidelines-panel").isVisible()).toBe(true);
    // The showing is recorded by a post once the page runs (its effect is checked from the second browser below).
    expect((await recorded).status()).toBe(200);
    await first.context.close();

    // Another browser (no local storage in common): the same person is not shown them again.
    const second = await firstCase();
    await second.page.goto(`${app.url}${second.href}`);
    await hydrated(second.page);
    expect(await second.page.getByTestId("guidelines-panel").isVisible()).toBe(false);
    await second.page.keyboard.press("?");
    await expect.poll(() => second.page.getByTestId("guidelines-panel").isVisible()).toBe(true);

    // The record is written only with the CSRF token.
    const refused = await second.page.request.post(`${app.url}/guidelines/seen`, {
      form: { scope: "safe_psych", scopeId: "1", version: "1" },
    });
    expect(refused.status()).toBe(403);
    await second.context.close();
  }, 60_000);
});
