/**
 * The report pages read at a glance (docs/statistics.md, "The study agreement report"; docs/rater-quality.md): on the
 * demo (three annotators, so the pooled Cohen's κ is n/a in every row) the statistics page leads with the headline
 * table — its first table — and says the reason for n/a once, the detail folded below; the progress page fits a
 * 390-pixel phone without sideways scrolling, in the page or in any of its tables; the judge set and bank pages fit
 * it without sideways scrolling of the page (their wide tables scroll in their own box).
 * Screenshots land in test/e2e/screenshots (not committed).
 */
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POOLED_COHEN_REASON } from "../../app/study-report/domain/study-report-raters";
import { launchBrowser, logIn } from "../support/browser";
import { startApp, type RunningApp } from "../support/server";

const SHOTS = process.env.CONCORD_SHOTS ?? "test/e2e/screenshots";
let app: RunningApp;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  app = await startApp({ demo: true });
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function adminPage(width: number): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width, height: 900 } })).newPage();
  await logIn(page, app.url, "admin", "concord-demo");
  return page;
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe("report pages at a glance", () => {
  it("the statistics page leads with the headline table and says each n/a reason once", async () => {
    const page = await adminPage(1280);
    await page.goto(`${app.url}/admin/studies/1/stats`);
    const first = page.locator("main table").first();
    expect(await first.getAttribute("data-testid")).toBe("headline-table");
    const rows = await first.locator("tbody tr").allInnerTexts();
    expect(rows.map((r) => r.split("\t")[0])).toEqual([
      "Sufficiency",
      "Diagnosis (code)",
      "Diagnosis category (3 characters)",
      "Diagnosis block (WHO group)",
      "Earliest sufficient section (linear weights: weighted κ, AC2)",
    ]);
    // Every row has its AC1 with an interval; κ is n/a with a note number, not the reason.
    for (const r of rows) expect(r).toMatch(/\d\.\d{3} \[[-\d.]+, [-\d.]+\]\s*$/);
    expect(rows[0]).toMatch(/n\/a\s*1/);
    // The reason is in the page's HTML once (as the note), not beside each of the six κ it explains.
    const text = await page.locator("main").innerText();
    expect(occurrences(text, POOLED_COHEN_REASON)).toBe(1);
    expect(await page.getByTestId("na-notes").innerText()).toContain(POOLED_COHEN_REASON);
    // The detail is folded: closed sections below the table, the page short.
    expect(await page.locator("details.fold").count()).toBeGreaterThanOrEqual(10);
    expect(await page.locator("details.fold[open]").count()).toBe(0);
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    expect(height).toBeLessThan(2000);
    await page.screenshot({ path: `${SHOTS}/stats-at-a-glance-1280.png`, fullPage: true });
    await page.context().close();
  });

  it("sends each chart of the statistics page once, as an image asked for when its fold opens", async () => {
    const page = await adminPage(1280);
    const charts: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/stats/charts/")) charts.push(new URL(r.url()).pathname);
    });
    const res = await page.goto(`${app.url}/admin/studies/1/stats`);
    const html = await res!.text();
    // No chart in the HTML nor in its loader data: the page is its tables (it was 775 KB at 1,000 cases with both).
    expect(html).not.toContain("<svg");
    expect(html.length).toBeLessThan(200_000);
    await page.waitForLoadState("networkidle");
    expect(charts).toEqual([]);
    // Opening a fold asks for its charts, each once; the image shows (a drawn SVG has a width).
    await page.locator("details#sufficiency > summary").click();
    const img = page.locator('[data-chart="sufficiency-matrix"] img');
    await expect
      .poll(() => img.evaluate((e: HTMLImageElement) => e.complete && e.naturalWidth > 0), { timeout: 20_000 })
      .toBe(true);
    expect(charts.filter((c) => c.endsWith("/sufficiency-matrix.svg"))).toHaveLength(1);
    await page.context().close();
  });

  for (const width of [1280, 390])
    for (const [name, path] of [
      ["stats", "/admin/studies/1/stats"],
      ["quality", "/admin/studies/1/quality"],
      ["progress", "/admin/studies/1/progress"],
    ] as const)
      it(`the ${name} page at ${width} px, every fold open, with its charts drawn`, async () => {
        const page = await adminPage(width);
        await page.goto(`${app.url}${path}`);
        await page.evaluate(() => document.querySelectorAll("details").forEach((d) => (d.open = true)));
        await page.waitForLoadState("networkidle");
        // Every chart image of the opened folds loaded (lazy images load as they come into view).
        const imgs = page.locator("figure[data-chart] img");
        for (let i = 0; i < (await imgs.count()); i++) {
          await imgs.nth(i).scrollIntoViewIfNeeded();
          await expect
            .poll(() => imgs.nth(i).evaluate((e: HTMLImageElement) => e.complete && e.naturalWidth > 0), {
              timeout: 20_000,
            })
            .toBe(true);
        }
        // The progress page fits a phone; the statistics and quality pages are screenshotted to be looked at.
        if (width === 390 && name === "progress")
          expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        await page.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
        await page.context().close();
      });

  it("the progress page fits 390 px without sideways scrolling", async () => {
    const page = await adminPage(390);
    await page.goto(`${app.url}/admin/studies/1/progress`);
    await page.getByTestId("progress-cases").waitFor();
    const overflow = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      boxes: [...document.querySelectorAll("main *")]
        .filter((e) => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== "visible")
        .map((e) => `${e.tagName}.${e.className}: ${e.scrollWidth} > ${e.clientWidth}`),
    }));
    expect(overflow.page).toBeLessThanOrEqual(390);
    expect(overflow.boxes).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/progress-390.png`, fullPage: true });
    await page.context().close();
  });

  for (const [what, list, link] of [
    ["judge set", "/admin/judge-validation", "[data-testid=judge-sets] tbody a"],
    ["bank", "/admin/expert-ratings", "[data-testid=banks] tbody a"],
  ] as const) {
    it(`the ${what} page fits 390 px without sideways scrolling (a wide table scrolls in its own box)`, async () => {
      const page = await adminPage(390);
      await page.goto(`${app.url}${list}`);
      await page.locator(link).first().click();
      await page.waitForLoadState("networkidle");
      // Every folded section open: what it holds must fit as well.
      await page.evaluate(() => document.querySelectorAll("details").forEach((d) => (d.open = true)));
      const overflow = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth,
        // What sticks out of the page: the elements whose right edge is past the viewport, outside a scrolling box.
        past: [...document.querySelectorAll("main *")]
          .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest(".table-scroll"))
          .map((e) => `${e.tagName}.${e.className}`)
          .slice(0, 10),
      }));
      expect({ what, ...overflow }).toEqual({ what, page: 390, past: [] });
      await page.screenshot({ path: `${SHOTS}/${what.replace(" ", "-")}-390.png`, fullPage: true });
      await page.context().close();
    });
  }
});
