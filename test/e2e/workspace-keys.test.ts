/**
 * The keys keep their promise in every workspace (docs/architecture.md, "Keymap"), driven on the demo from one table:
 * a row per workspace. In each, the guidelines panel (open on a first visit) closes with Esc; typing in a text field
 * and pressing Esc leaves the field, so that `?` then opens the guidelines instead of being typed; Esc closes them
 * again. A seventh workspace is tested by adding a row to test/support/workspace-rows.ts.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { startApp, type RunningApp } from "../support/server";
import { DEMO_PASSWORD, firstItem, WORKSPACE_ROWS as ROWS } from "../support/workspace-rows";

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

/** Whether the focus is in a field where letters are typed. */
function focusInTextField(page: Page): Promise<boolean> {
  return page.evaluate(() =>
    Boolean(document.activeElement?.closest("input[type=text], input[type=search], textarea, select")),
  );
}

describe("Esc and ? in every workspace", () => {
  for (const row of ROWS) {
    it(`${row.workspace}: Esc closes the guidelines and leaves a text field, so ? works again`, async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      try {
        await logIn(page, app.url, row.user, DEMO_PASSWORD);
        await page.goto(`${app.url}${row.list}`);
        await hydrated(page);
        if (row.itemPrefix === "/case-review/") {
          // The expert's list shows one bank or set at a time (docs/architecture.md, "Pages are windows").
          const set = await page.$eval("select[name=c] option[value^=s]", (o) => (o as HTMLOptionElement).value);
          await page.goto(`${app.url}${row.list}?c=${set}`);
          await hydrated(page);
        }
        await page.goto(`${app.url}${await firstItem(page, row.itemPrefix)}`);
        await hydrated(page);
        const panel = page.getByTestId("guidelines-panel");
        // A first visit opens the guidelines; Esc (outside a field) closes them.
        if (await panel.isVisible()) {
          await page.locator("body").click({ position: { x: 1, y: 1 } });
          await page.keyboard.press("Escape");
          await expect.poll(() => panel.isVisible()).toBe(false);
        }
        await row.prepare?.(page);
        const field = page.locator(row.field);
        await field.click();
        await page.keyboard.type("low mood");
        expect(await focusInTextField(page)).toBe(true);
        await page.keyboard.press("Escape");
        expect(await focusInTextField(page)).toBe(false);
        await page.keyboard.press("?");
        await expect.poll(() => panel.isVisible()).toBe(true);
        expect(await field.inputValue()).not.toContain("?");
        await page.keyboard.press("Escape");
        await expect.poll(() => panel.isVisible()).toBe(false);
      } finally {
        await context.close();
      }
    }, 60_000);
  }
});
