/**
 * The user guides in the browser (app/routes/help.tsx, app/routes/help_.guides.$guide.tsx): the help page links every
 * guide of docs/guides/, each link opens its guide, and a link inside a guide to another guide's heading opens that
 * guide at the heading.
 */
import { describe, expect, it } from "vitest";
import { GUIDES } from "../../app/help/domain/guides";
import { hydrated } from "../support/browser";
import { seededApp } from "../support/e2e-app";
import { seedStudy } from "../support/fixtures";

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
