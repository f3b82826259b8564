/**
 * A fit in the background, in the browser (docs/mentat.md, "Fits in the background"): on a MENTAT-sized bank (57
 * questions, 8 experts, every question rated by each), the admin starts a fit with 1000 bootstrap refits; the page
 * answers at once with a progress bar that moves while the page polls, other pages answer meanwhile, and the fitted
 * labels appear when the job ends, without a reload by hand. Screenshots in the test's temporary folder.
 */
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../app/platform/db.server";
import { createUser } from "../../app/accounts/users.server";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { PASSWORD } from "../support/fixtures";
import { seedRatedBank } from "../support/rated-bank";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

let app: RunningApp;
let browser: Browser;
let bankId: number;
let shots: string;

beforeAll(async () => {
  const t = tempDbPath();
  shots = t.dir;
  const db = openDatabase(t.dbPath);
  const boss = await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  bankId = await seedRatedBank(db, {
    name: "Big bank",
    questions: 57,
    raters: 8,
    password: PASSWORD,
    adminId: boss.id,
  });
  db.$client.close();
  app = await startApp({ dbPath: t.dbPath });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("a fit in the background", () => {
  it("shows progress while the fit runs, then the labels", async () => {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await logIn(page, app.url, "boss", PASSWORD);
    await page.goto(`${app.url}/admin/mentat/${bankId}`);
    await hydrated(page);
    await expect.poll(() => page.getByText("No fit yet.").count()).toBe(1);
    await page.fill("#bootstrap", "1000");
    await page.getByRole("button", { name: "Fit labels" }).click();
    await expect.poll(() => page.getByTestId("action-result").textContent()).toMatch(/Fit started \(job \d+/);

    const bar = page.getByRole("progressbar", { name: "Bootstrap refits" });
    await bar.waitFor();
    expect(await page.getByRole("button", { name: "A fit is running…" }).isDisabled()).toBe(true);
    // The bar moves by polling alone: some refits done, not all.
    await expect
      .poll(async () => Number(await bar.getAttribute("aria-valuenow")), { timeout: 60_000 })
      .toBeGreaterThan(0);
    const done = Number(await bar.getAttribute("aria-valuenow"));
    expect(await bar.getAttribute("aria-valuemax")).toBe("1000");
    if (done < 1000) await page.screenshot({ path: join(shots, "fit-running.png"), fullPage: false });

    // Other pages answer while the workers fit.
    const t0 = Date.now();
    const other = await page.request.get(`${app.url}/admin/expert-ratings`);
    expect(other.status()).toBe(200);
    expect(Date.now() - t0).toBeLessThan(5_000);

    const summary = page.locator("p", { hasText: /^Fit \d+ of / });
    await expect.poll(() => summary.count(), { timeout: 110_000 }).toBe(1);
    expect(await summary.textContent()).toMatch(/456 ratings, slope\+offset, .*1000 bootstrap refits \(seed 0\)/);
    expect(await bar.count()).toBe(0);
    expect(await page.getByRole("button", { name: "Fit labels" }).isEnabled()).toBe(true);
    await page.screenshot({ path: join(shots, "fit-done.png"), fullPage: false });
    console.log(`screenshots: ${shots}`);
    await page.context().close();
  });
});
