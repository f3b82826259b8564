/**
 * The stats page's agreement per pair and over time in Chromium (docs/statistics.md, "Agreement per pair and over
 * time"): the four-annotator study of test/fixtures/study-report/rater_agreement.py, the matrix and the tables with
 * the fixture's figures, the charts drawn, the batch size changed through the page's form and a refused one kept in
 * the field with its error. Screenshots go to $CONCORD_SCREENSHOTS (default: the system's temporary folder) for a
 * person to look at. Needs `npx remix vite:build` first.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../app/platform/db.server";
import { createUser } from "../../app/accounts/users.server";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { raterFixture, seedStudy } from "../support/rater-agreement";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

const PASSWORD = "rater-agreement-e2e-1";
const SHOTS = process.env.CONCORD_SCREENSHOTS || tmpdir();

let app: RunningApp;
let browser: Browser;
let page: Page;
let studyId: number;

beforeAll(async () => {
  const t = tempDbPath();
  const db = openDatabase(t.dbPath);
  const users = new Map<string, string>();
  for (const [u, roles] of [
    ["ana", ["annotator"]],
    ["ben", ["annotator"]],
    ["cleo", ["annotator"]],
    ["dev", ["annotator"]],
    ["boss", ["admin"]],
  ] as const)
    users.set(u, (await createUser(db, { username: u, password: PASSWORD, roles: [...roles], actorId: null })).id);
  studyId = seedStudy(db, "Four", raterFixture.four, users);
  db.$client.close();
  app = await startApp({ dbPath: t.dbPath });
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await logIn(page, app.url, "boss", PASSWORD);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

const cellText = (testId: string, row: number, column: number) =>
  page.locator(`[data-testid="${testId}"] tbody tr`).nth(row).locator("td").nth(column).innerText();

describe("agreement per pair and over time on the stats page", () => {
  it("shows the pair matrix, the tables and the charts with the fixture's figures", async () => {
    await page.goto(`${app.url}/admin/studies/${studyId}/stats`);
    await hydrated(page);
    // The page leads with its headline table; the detail is folded (docs/statistics.md): open the two sections.
    await page.locator("details#pairwise > summary").click();
    await page.locator("details#over-time > summary").click();
    const section = page.getByTestId("pairwise-agreement");
    await section.waitFor();
    // ana – ben, sufficiency: n and κ as rater_agreement.py computed them (3 decimals as shown).
    const anaBen = raterFixture.four.expected.pairs[0]!.sufficiency;
    expect(await cellText("pairwise-sufficiency", 0, 1)).toBe(String(anaBen.n));
    expect(await cellText("pairwise-sufficiency", 0, 3)).toContain(anaBen.cohen_kappa.value!.toFixed(3));
    // The matrix: ana's row, dev's column is the pair with no shared case.
    expect(
      await page
        .getByTestId("pairwise-matrix-sufficiency")
        .locator("tbody tr")
        .first()
        .locator("td")
        .nth(3)
        .innerText(),
    ).toBe("n/a / n/a (0)");
    // Each chart is an image of its SVG, loaded once its fold is open (docs/architecture.md, "Pages are windows").
    for (const chart of ["pairwise-sufficiency", "sufficiency-by-week", "diagnosis-by-batch"]) {
      const img = page.locator(`[data-chart="${chart}"] img`);
      await img.scrollIntoViewIfNeeded();
      await expect
        .poll(() => img.evaluate((e: HTMLImageElement) => e.complete && e.naturalWidth > 0), { timeout: 20_000 })
        .toBe(true);
    }
    await section.screenshot({ path: join(SHOTS, "rater-agreement-pairwise.png") });
    await page.getByTestId("agreement-over-time").screenshot({ path: join(SHOTS, "rater-agreement-over-time.png") });
  });

  it("changes the batch size through the form, and keeps a refused one with its error", async () => {
    const batches = page.locator('[data-testid="by-batch-sufficiency"] tbody tr');
    await page.fill('input[name="batch"]', "8");
    await page.click('form[aria-label="Batch size"] button[type="submit"]');
    await expect.poll(() => batches.count(), { timeout: 20_000 }).toBe(raterFixture.four.expected.by_batch.length);
    const first = raterFixture.four.expected.by_batch[0]!.sufficiency.gwet_ac1.value!;
    expect(await cellText("by-batch-sufficiency", 0, 6)).toContain(first.toFixed(3));
    expect(await page.locator('[data-chart="sufficiency-by-batch"] a', { hasText: "CSV" }).getAttribute("href")).toBe(
      `/admin/studies/${studyId}/stats/sufficiency-by-batch.csv?batch=8`,
    );

    // The field's own min stops the form; a hand-edited address reaches the server, which refuses it in words.
    await page.fill('input[name="batch"]', "1");
    await page.click('form[aria-label="Batch size"] button[type="submit"]');
    expect(await page.locator('input[name="batch"]').evaluate((e: HTMLInputElement) => e.validity.rangeUnderflow)).toBe(
      true,
    );
    await page.goto(`${app.url}/admin/studies/${studyId}/stats?batch=1`);
    await page.locator("#batch-error").waitFor();
    expect(await page.locator("#batch-error").innerText()).toMatch(/at least 2; showing the page's own batches/);
    expect(await page.inputValue('input[name="batch"]')).toBe("1");
    await page.locator("#batch-error").screenshot({ path: join(SHOTS, "rater-agreement-batch-error.png") });
  });
});
