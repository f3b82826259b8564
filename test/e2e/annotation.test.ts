import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { hydrated } from "../support/browser";
import { seedStudy } from "../support/fixtures";
import { seededApp } from "../support/e2e-app";

const e2e = seededApp((db) =>
  seedStudy(db, {
    cases: 8,
    users: [
      { username: "ann1", roles: ["annotator"] },
      { username: "ann2", roles: ["annotator"] },
    ],
    annotators: ["ann1", "ann2"],
  }),
);

const annotatorPage = (username: string): Promise<Page> => e2e.pageAs(username);

/**
 * After a client-side navigation the URL changes before React has rendered the new case (navigations are
 * transitions): wait for the workspace of the case named in the URL before pressing keys.
 */
async function caseShown(page: Page) {
  const id = new URL(page.url()).pathname.match(/\/annotate\/(\d+)$/)?.[1];
  if (!id) throw new Error(`not on a case page: ${page.url()}`);
  await page.locator(`section[data-case-id="${id}"]`).waitFor();
}

async function pickCode(page: Page, code: string) {
  await page.keyboard.press("/");
  await page.keyboard.type(code);
  await page.locator(".picker-results li").first().waitFor();
  await page.keyboard.press("Enter");
  await expect.poll(() => page.getByTestId("chosen-code").textContent()).toContain(code);
}

describe("annotation in the browser", () => {
  it("lets an annotator complete three cases with the keyboard alone", async () => {
    const page = await annotatorPage("ann1");
    await page.goto(`${e2e.app.url}/annotate`);
    await hydrated(page);
    const first = page.url();
    await page.keyboard.press("j");
    await page.waitForURL((u) => u.href !== first);
    await caseShown(page);

    // Case 1: sufficient, F20.0, from section 2.
    let url = page.url();
    await page.keyboard.press("s");
    await pickCode(page, "F20.0");
    await page.keyboard.press("2");
    await page.keyboard.press("Control+Enter");
    await page.waitForURL((u) => u.href !== url);

    // Case 2: insufficient, first missing-information label.
    await caseShown(page);
    url = page.url();
    await page.keyboard.press("i");
    await page.keyboard.press("m");
    await page.keyboard.press("Space");
    await page.keyboard.press("Control+Enter");
    await page.waitForURL((u) => u.href !== url);

    // Case 3: sufficient, found by words, from section 1.
    await caseShown(page);
    url = page.url();
    await page.keyboard.press("s");
    await page.keyboard.press("/");
    await page.keyboard.type("moderate depressive episode");
    await page.locator(".picker-results li").first().waitFor();
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByTestId("chosen-code").textContent()).toMatch(/F3[23]\.1/);
    await page.keyboard.press("1");
    await page.keyboard.press("Control+Enter");
    await page.waitForURL((u) => u.href !== url);

    await page.goto(`${e2e.app.url}/annotate`);
    expect(await page.getByTestId("progress").textContent()).toContain("3 of");
    expect(await page.locator('tr[data-state="submitted"]').count()).toBe(3);
    await page.context().close();
  });

  it("keeps a draft across a page reload", async () => {
    const page = await annotatorPage("ann2");
    await page.goto(`${e2e.app.url}/annotate`);
    await page.getByTestId("next-case").click();
    await page.waitForURL(/\/annotate\/\d+$/);
    await caseShown(page);
    await page.keyboard.press("s");
    await pickCode(page, "F41.1");
    await page.keyboard.press("3");
    await expect.poll(() => page.getByTestId("save-state").textContent(), { timeout: 10_000 }).toContain("Saved");
    await page.reload();
    await hydrated(page);
    expect(await page.getByTestId("case-state").textContent()).toBe("draft");
    expect(await page.locator("input[name=sufficiency][value=sufficient]").isChecked()).toBe(true);
    expect(await page.getByTestId("chosen-code").textContent()).toContain("F41.1");
    expect(await page.locator('input[name=earliestSection][value="3"]').isChecked()).toBe(true);
    await page.context().close();
  });

  it("refuses a code outside WHO chapter V with a message at the field", async () => {
    const page = await annotatorPage("ann2");
    await page.goto(`${e2e.app.url}/annotate`);
    await page.locator('tr[data-state="not_started"] a').first().click();
    await page.waitForURL(/\/annotate\/\d+$/);
    await caseShown(page);
    const url = page.url();
    await page.keyboard.press("s");
    await page.keyboard.press("/");
    await page.keyboard.type("F32.A");
    await page.keyboard.press("Enter");
    await page.keyboard.press("1");
    await page.keyboard.press("Control+Enter");
    const alert = page.locator(".icd10-picker .field-error");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("F32.A");
    expect(await alert.textContent()).toMatch(/not .*chapter V/);
    expect(page.url()).toBe(url);
    expect(await page.getByTestId("case-state").textContent()).not.toBe("submitted");
    await page.context().close();
  });
});
