/**
 * Second chances in the browser (docs/safe-psych.md, "Second chances"), on a server started with a grace period of
 * a few seconds: the submission that completes a case's pair stays on the case with its final values and "Undo
 * submit"; undone within the period, the annotation is a draft again and can be edited and saved; left alone, the
 * pair locks when the period ends and the page says so.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { hydrated } from "../support/browser";
import { seedStudy } from "../support/fixtures";
import { seededApp } from "../support/e2e-app";
import { sufficient } from "../support/labels";
import { submitAnnotation } from "../../app/annotation/annotations.server";
import { assignments } from "../../db/schema";

const GRACE_SECONDS = 6;
let caseIds: number[] = [];

const e2e = seededApp(
  async (db) => {
    const { ids } = await seedStudy(db, {
      cases: 4,
      users: [
        { username: "ann1", roles: ["annotator"] },
        { username: "ann2", roles: ["annotator"] },
      ],
      annotators: ["ann1", "ann2"],
    });
    // Cases both annotators have; ann1 submits first (no grace period: the pair is not complete yet).
    const mine = (userId: string) =>
      new Set(
        db
          .select({ caseId: assignments.caseId, userId: assignments.annotatorId })
          .from(assignments)
          .all()
          .filter((a) => a.userId === userId)
          .map((a) => a.caseId),
      );
    const ann2 = mine(ids.ann2!);
    caseIds = [...mine(ids.ann1!)].filter((c) => ann2.has(c)).sort((a, b) => a - b);
    for (const caseId of caseIds.slice(0, 2)) {
      const r = submitAnnotation(db, { userId: ids.ann1!, caseId, values: sufficient("F32.1", 1), version: 0 });
      if (!r.ok) throw new Error(JSON.stringify(r));
    }
  },
  { env: { CONCORD_SUBMIT_GRACE_SECONDS: String(GRACE_SECONDS) } },
);

/** Opens the case as ann2 and submits an insufficient label with the keyboard: the second annotation of the pair. */
async function submitSecond(caseId: number): Promise<Page> {
  const page = await e2e.pageAs("ann2");
  await page.goto(`${e2e.app.url}/annotate/${caseId}`);
  await hydrated(page);
  await page.locator(`section[data-case-id="${caseId}"]`).waitFor();
  await page.locator("body").click({ position: { x: 1, y: 1 } });
  await page.keyboard.press("Escape");
  await page.keyboard.press("i");
  await page.locator('input[name=missingInfo][value="collateral_history"]').check();
  await page.locator("body").click({ position: { x: 1, y: 1 } });
  await page.keyboard.press("Control+Enter");
  await page.getByTestId("submit-grace").waitFor({ timeout: 10_000 });
  return page;
}

describe("the grace period after the second annotation of a pair", () => {
  it("stays on the case with its final values; Undo submit within the period makes it a draft again", async () => {
    expect(caseIds.length).toBeGreaterThanOrEqual(2);
    const page = await submitSecond(caseIds[0]!);
    expect(new URL(page.url()).pathname).toBe(`/annotate/${caseIds[0]}`);
    expect(await page.getByTestId("case-state").textContent()).toBe("submitted");
    expect(await page.locator('input[name=sufficiency][value="insufficient"]').isChecked()).toBe(true);
    await page.getByRole("button", { name: "Undo submit" }).click();
    await expect.poll(() => page.getByTestId("submit-grace").count(), { timeout: 10_000 }).toBe(0);
    await expect.poll(() => page.getByTestId("case-state").textContent()).toBe("draft");
    expect(await page.getByTestId("submit").textContent()).toMatch(/^Submit/);
    // Editing works again, drafts included, after the period would have ended.
    await page.waitForTimeout((GRACE_SECONDS + 1) * 1000);
    await page.fill("#notes", "second thoughts");
    await expect
      .poll(() => page.getByTestId("save-state").getAttribute("data-state"), { timeout: 10_000 })
      .toBe("saved");
    await page.reload();
    await hydrated(page);
    expect(await page.getByTestId("case-state").textContent()).toBe("draft");
    expect(await page.locator("#notes").inputValue()).toBe("second thoughts");
    await page.screenshot({ path: "/work/notes/shots-workspace/grace-undone-1280.png", fullPage: false });
  }, 60_000);

  it("left alone, the pair locks when the period ends and the page says so", async () => {
    const page = await submitSecond(caseIds[1]!);
    await page.screenshot({ path: "/work/notes/shots-workspace/grace-notice-1280.png", fullPage: false });
    expect(await page.getByTestId("case-state").textContent()).toBe("submitted");
    await expect
      .poll(() => page.getByTestId("case-state").textContent(), { timeout: (GRACE_SECONDS + 8) * 1000 })
      .toBe("locked");
    expect(await page.getByTestId("submit-grace").count()).toBe(0);
    expect(await page.getByText("Both annotations are in: this case is locked.").isVisible()).toBe(true);
    expect(await page.locator('input[name=sufficiency][value="insufficient"]').isDisabled()).toBe(true);
    // Undo is no longer offered, and a reload shows the same.
    await page.reload();
    await hydrated(page);
    expect(await page.getByTestId("case-state").textContent()).toBe("locked");
    expect(await page.getByRole("button", { name: "Undo submit" }).count()).toBe(0);
  }, 60_000);
});
