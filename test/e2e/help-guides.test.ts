/**
 * The user guides in the browser (app/routes/help.tsx, app/routes/help_.guides.$guide.tsx): the help page links every
 * guide of docs/guides/, each link opens its guide, and a link inside a guide to another guide's heading opens that
 * guide at the heading. The help page and every guide have no serious or critical WCAG 2 A/AA violation (axe-core,
 * as test/e2e/accessibility.test.ts checks the other pages) and never scroll sideways on a phone.
 */
import axe from "axe-core";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { GUIDES } from "../../app/help/domain/guides";
import { hydrated, logIn } from "../support/browser";
import { seededApp } from "../support/e2e-app";
import { PASSWORD, seedStudy } from "../support/fixtures";

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

describe("the user guides", () => {
  it("are linked from the help page, each opens, and a link between guides opens the other at its heading", async () => {
    const page = await e2e.pageAs("ann1");
    await page.goto(`${e2e.app.url}/help`);
    await hydrated(page);
    const links = page.locator('[data-testid="guides"] a');
    expect(await links.allTextContents()).toEqual(GUIDES.map((g) => g.title));
    for (const g of GUIDES) {
      await page.goto(`${e2e.app.url}/help`);
      await hydrated(page);
      await Promise.all([
        page.waitForURL((u) => u.pathname === `/help/guides/${g.id}`),
        page.locator('[data-testid="guides"] a', { hasText: g.title }).click(),
      ]);
      await expect.poll(() => page.locator("article.guide h1").textContent()).toBe(g.title);
      expect(await page.locator("article.guide h2").count()).toBeGreaterThan(2);
    }
    // From the adjudicator's guide to the annotator's save states.
    await page.goto(`${e2e.app.url}/help/guides/adjudicator`);
    await hydrated(page);
    await Promise.all([
      page.waitForURL((u) => u.pathname === "/help/guides/annotator" && u.hash === "#save-states"),
      page.locator('article.guide a[href="/help/guides/annotator#save-states"]').first().click(),
    ]);
    await expect.poll(() => page.locator("article.guide h1").textContent()).toBe("Annotator's guide");
    expect(await page.locator("#save-states").textContent()).toBe("Save states");
    await page.context().close();
  });
});

/** The ids of the serious and critical WCAG 2 A/AA violations axe finds on the page. */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: axe.source });
  return page.evaluate(async () => {
    const run = (
      window as unknown as {
        axe: { run: (d: Document, o: object) => Promise<{ violations: { id: string; impact: string }[] }> };
      }
    ).axe.run;
    const r = await run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
      resultTypes: ["violations"],
    });
    return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id);
  });
}

describe("the help page and the guides", () => {
  it("pass axe-core and never scroll sideways on a phone", async () => {
    // The context bypasses the app's Content-Security-Policy, which rightly refuses the injected script.
    const context = await e2e.browser.newContext({ bypassCSP: true });
    const page = await context.newPage();
    await logIn(page, e2e.app.url, "ann1", PASSWORD);
    const found: Record<string, string[]> = {};
    for (const path of ["/help", ...GUIDES.map((g) => `/help/guides/${g.id}`)]) {
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 800 });
        await page.goto(e2e.app.url + path);
        await hydrated(page);
        const ids = await seriousViolations(page);
        const sideways = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        if (ids.length > 0 || sideways > 0)
          found[`${path} at ${width}px`] = [...ids, ...(sideways > 0 ? ["sideways"] : [])];
      }
    }
    expect(found).toEqual({});
    await context.close();
  });
});
