/**
 * Long texts in the browser: a 5,000-character word in a note wraps instead of widening the page (app/styles.css),
 * on the annotator's workspace and the admin's case page, and the notes field shows its counter near the limit and
 * a field-level error over it while the text stays in the page and nothing over the limit is saved.
 */
import { eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotations, caseSections, cases } from "../../db/schema";
import { openDatabase } from "../../app/platform/db.server";
import { launchBrowser, logIn } from "../support/browser";
import { PASSWORD, seedStudy } from "../support/fixtures";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

let app: RunningApp;
let browser: Browser;
let dbPath: string;
let caseId: number;
const LONG_WORD = "x".repeat(5_000);

beforeAll(async () => {
  const t = tempDbPath();
  dbPath = t.dbPath;
  const db = openDatabase(dbPath);
  const { study } = await seedStudy(db, {
    cases: 2,
    users: [
      { username: "ann1", roles: ["annotator"] },
      { username: "ann2", roles: ["annotator"] },
      { username: "boss", roles: ["admin"] },
    ],
    annotators: ["ann1", "ann2"],
  });
  caseId = db.select({ id: cases.id }).from(cases).where(eq(cases.studyId, study.id)).orderBy(cases.position).get()!.id;
  db.update(caseSections)
    .set({ content: `The patient wrote ${LONG_WORD} in the referral.` })
    .where(eq(caseSections.caseId, caseId))
    .run();
  db.$client.close();
  app = await startApp({ dbPath });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function pageAs(username: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await logIn(page, app.url, username, PASSWORD);
  return page;
}

const widths = (page: Page) =>
  page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, viewport: window.innerWidth }));

describe("long words", () => {
  it("a 5,000-character word in a note keeps the workspace within the viewport", async () => {
    const page = await pageAs("ann1");
    await page.goto(`${app.url}/annotate/${caseId}`);
    await page.locator(`section[data-case-id="${caseId}"]`).waitFor();
    const w = await widths(page);
    expect(w.scroll).toBeLessThanOrEqual(w.viewport);
  });

  it("and the admin's case page too, with its annotation tables", async () => {
    const page = await pageAs("boss");
    await page.goto(`${app.url}/admin/cases/${caseId}`);
    await page.locator("h1").waitFor();
    const w = await widths(page);
    expect(w.scroll).toBeLessThanOrEqual(w.viewport);
  });
});

describe("the notes limit", () => {
  it("shows a counter near the limit and an error over it, keeps the text and saves nothing over the limit", async () => {
    const page = await pageAs("ann2");
    await page.goto(`${app.url}/annotate/${caseId}`);
    await page.locator(`section[data-case-id="${caseId}"]`).waitFor();
    await page.fill("#notes", "a".repeat(8_500));
    await expect.poll(() => page.getByTestId("notes-count").textContent()).toBe("8,500 / 10,000 characters");
    await expect.poll(() => page.getByTestId("notes-error").count()).toBe(0);
    const over = `${"b".repeat(10_040)} words after`;
    await page.fill("#notes", over);
    await expect
      .poll(() => page.getByTestId("notes-error").textContent())
      .toBe("Notes have at most 10,000 characters (52 too many).");
    expect(await page.locator("#notes").getAttribute("aria-invalid")).toBe("true");
    // The autosave is refused (422); the text is still in the page, whole.
    await page.waitForTimeout(1_500);
    expect(await page.locator("#notes").inputValue()).toBe(over);
    const db = openDatabase(dbPath);
    const saved = db.select({ notes: annotations.notes }).from(annotations).where(eq(annotations.caseId, caseId)).all();
    db.$client.close();
    expect(saved.every((r) => r.notes.length <= 10_000)).toBe(true);
    await page.screenshot({ path: "/tmp/i13-notes-limit.png", fullPage: false });
  });
});
