/**
 * The keys keep their promise in every workspace (docs/architecture.md, "Keymap"), driven on the demo from one table:
 * a row per workspace. In each, the guidelines panel (open on a first visit) closes with Esc; typing in a text field
 * and pressing Esc leaves the field, so that `?` then opens the guidelines instead of being typed; Esc closes them
 * again. A seventh workspace is tested by adding a row.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { startApp, type RunningApp } from "../support/server";

const DEMO_PASSWORD = "concord-demo";

interface WorkspaceRow {
  workspace: string;
  user: string;
  /** The list page, and the prefix of its links to items. */
  list: string;
  itemPrefix: string;
  /** Brings the text field up when it is not there from the start. */
  prepare?: (page: Page) => Promise<void>;
  /** The text field typed into. */
  field: string;
}

const ROWS: WorkspaceRow[] = [
  { workspace: "annotation", user: "annotator1", list: "/annotate", itemPrefix: "/annotate/", field: "#notes" },
  {
    workspace: "adjudication",
    user: "adjudicator",
    list: "/adjudicate",
    itemPrefix: "/adjudicate/",
    // The independent judgement's only text field is the code search of a sufficient note.
    prepare: (page) => page.keyboard.press("s"),
    field: "#icd10-search",
  },
  {
    workspace: "judge validation",
    user: "rater1",
    list: "/judge-validation",
    itemPrefix: "/judge-validation/",
    field: "#notes",
  },
  { workspace: "screening", user: "rater1", list: "/screening", itemPrefix: "/screening/", field: "#notes" },
  { workspace: "MENTAT", user: "rater1", list: "/expert-ratings", itemPrefix: "/mentat/", field: "#comment" },
  { workspace: "case review", user: "rater1", list: "/expert-ratings", itemPrefix: "/case-review/", field: "#comment" },
];

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

async function firstItem(page: Page, prefix: string): Promise<string> {
  const hrefs = await page.$$eval(`a[href^="${prefix}"]`, (as) => as.map((a) => a.getAttribute("href") ?? ""));
  const found = hrefs.find((h) => h.length > prefix.length);
  if (!found) throw new Error(`no link ${prefix}… on ${page.url()}`);
  return found;
}

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
