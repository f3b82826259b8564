/**
 * Saving keeps its promise in every workspace (docs/architecture.md, "The save-state machine"), driven on the demo
 * from the one table of workspaces (test/support/workspace-rows.ts): a draft is saved and is there after a reload;
 * two tabs on one item, the second to save is told of the conflict and keeps its input; submitted work changed on
 * the page is a revision, with Discard back to the submitted values. A seventh workspace is tested by adding a row.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { startApp, type RunningApp } from "../support/server";
import { DEMO_PASSWORD, firstItem, WORKSPACE_ROWS, type WorkspaceRow } from "../support/workspace-rows";

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

const state = (page: Page) => page.getByTestId("save-state").getAttribute("data-state");

async function open(page: Page, path: string) {
  await page.goto(`${app.url}${path}`);
  await hydrated(page);
  // The guidelines open on a first visit; Esc closes them, so the form is in view.
  await page.locator("body").click({ position: { x: 1, y: 1 } });
  await page.keyboard.press("Escape");
}

/** The saved text field of a row, brought up. */
async function savedField(page: Page, row: WorkspaceRow) {
  if (row.saved) await row.saved.prepare(page);
  return page.locator(row.saved?.field ?? row.field);
}

async function withUser<T>(row: WorkspaceRow, run: (context: BrowserContext, page: Page) => Promise<T>) {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await logIn(page, app.url, row.user, DEMO_PASSWORD);
    return await run(context, page);
  } finally {
    await context.close();
  }
}

/** Items already used by a test of this file, so that each test starts on work nobody touched. */
const used = new Set<string>();
async function unusedItem(page: Page, row: WorkspaceRow): Promise<string> {
  await page.goto(`${app.url}${row.list}`);
  await hydrated(page);
  if (row.itemPrefix === "/case-review/") {
    // The expert's list shows one bank or set at a time (docs/architecture.md, "Pages are windows").
    const set = await page.$eval("select[name=c] option[value^=s]", (o) => (o as HTMLOptionElement).value);
    await page.goto(`${app.url}${row.list}?c=${set}`);
    await hydrated(page);
  }
  const hrefs = await page.$$eval(`tr[data-state="not_started"] a[href^="${row.itemPrefix}"]`, (as) =>
    as.map((a) => a.getAttribute("href") ?? ""),
  );
  const fresh = hrefs.find((h) => h.length > row.itemPrefix.length && !used.has(h));
  const path = fresh ?? (await firstItem(page, row.itemPrefix));
  used.add(path);
  return path;
}

describe.each(WORKSPACE_ROWS)("$workspace", (row) => {
  it("saves a draft, which is there after a reload", async () => {
    await withUser(row, async (_context, page) => {
      const path = await unusedItem(page, row);
      await open(page, path);
      const field = await savedField(page, row);
      await field.fill(`draft of ${row.workspace}`);
      await expect.poll(() => state(page), { timeout: 10_000 }).toBe("saved");
      await open(page, path);
      expect(await (await savedField(page, row)).inputValue()).toBe(`draft of ${row.workspace}`);
    });
  }, 60_000);

  it("two tabs on one item: the second to save is told of the conflict and keeps its input", async () => {
    await withUser(row, async (context, a) => {
      const path = await unusedItem(a, row);
      const b = await context.newPage();
      await open(a, path);
      await open(b, path);
      await (await savedField(a, row)).fill("first tab");
      await expect.poll(() => state(a), { timeout: 10_000 }).toBe("saved");
      await (await savedField(b, row)).fill("second tab, not to be lost");
      await expect.poll(() => state(b), { timeout: 10_000 }).toBe("conflict");
      expect(await b.getByTestId("save-state").textContent()).toBe("Conflict: not saved");
      expect(await b.getByTestId("reload").isVisible()).toBe(true);
      expect(await (await savedField(b, row)).inputValue()).toBe("second tab, not to be lost");
    });
  }, 60_000);
});

// Adjudication records its steps instead of submitting and revising (its row has no `complete`).
describe.each(WORKSPACE_ROWS.filter((r) => r.complete !== null))("$workspace", (row) => {
  it("submitted work changed on the page is a revision, with Discard", async () => {
    await withUser(row, async (_context, page) => {
      const path = await unusedItem(page, row);
      await open(page, path);
      await row.complete!(page);
      await page.locator("body").click({ position: { x: 1, y: 1 } });
      await Promise.all([
        page.waitForURL((u) => u.pathname !== path, { timeout: 15_000 }),
        page.keyboard.press("Control+Enter"),
      ]);
      await open(page, path);
      expect(await page.getByTestId("submit").textContent()).toMatch(/^Save revision/);
      const field = page.locator(row.field);
      await field.fill("a second thought");
      expect(await state(page)).toBe("revising");
      await page.getByTestId("discard").click();
      expect(await field.inputValue()).toBe(row.submittedText ?? "");
      expect(await state(page)).toBe("saved");
    });
  }, 60_000);
});

// Adjudication's steps go through the same machine: a decision made in one tab is, in the other, a conflict said
// like every workspace's (in the footer, with Reload), in words that name the user's own other tab.
describe("adjudication", () => {
  const row = WORKSPACE_ROWS.find((r) => r.workspace === "adjudication")!;

  it("a decision made in another tab of the same adjudicator: the footer says it was their own other tab", async () => {
    await withUser(row, async (context, a) => {
      const path = await unusedItem(a, row);
      await open(a, path);
      await a.keyboard.press("i");
      await a.locator('input[name=missingInfo][value="collateral_history"]').check();
      await a.locator("body").click({ position: { x: 1, y: 1 } });
      await a.keyboard.press("Control+Enter");
      await a.getByTestId("differences").waitFor({ timeout: 15_000 });
      const b = await context.newPage();
      await open(b, path);
      await b.getByTestId("differences").waitFor();
      // The form starts from the independent judgement: deciding it needs no rationale.
      await a.locator("body").click({ position: { x: 1, y: 1 } });
      await Promise.all([
        a.waitForURL((u) => u.searchParams.has("decided"), { timeout: 15_000 }),
        a.keyboard.press("Control+Enter"),
      ]);
      await b.locator("body").click({ position: { x: 1, y: 1 } });
      await b.keyboard.press("Control+Enter");
      await expect.poll(() => state(b), { timeout: 10_000 }).toBe("conflict");
      expect(await b.getByTestId("save-state").textContent()).toBe("Conflict: not saved");
      expect(await b.getByTestId("save-problem").textContent()).toMatch(/^You decided this case in another tab/);
      expect(await b.getByTestId("reload").isVisible()).toBe(true);
    });
  }, 60_000);
});
