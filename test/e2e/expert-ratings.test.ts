/**
 * Expert ratings in the browser (docs/mentat.md): an expert rates the five answer options of one MENTAT question on the
 * 0–100 sliders with the keyboard alone (option order shuffled for them), with a comment, and reviews one generated
 * case on the three 5-point scales; the database then holds their submitted ratings in the original option order.
 * An admin's bank page shows the panel's progress and fits labels.
 */
import { readFileSync } from "node:fs";
import { and, eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mentatQuestions, mentatRatings, reviewItems, reviewJudgements } from "../../db/schema";
import { openDatabase } from "../../app/platform/db.server";
import { addReviewRaters, importReviewSet } from "../../app/case-review/case-review.server";
import { addBankRaters } from "../../app/mentat/panel.server";
import { importQuestionBank } from "../../app/mentat/banks.server";
import { createUser, type UserView } from "../../app/accounts/users.server";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { PASSWORD } from "../support/fixtures";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

const BANK = readFileSync(new URL("../fixtures/expert-ratings/questions.csv", import.meta.url), "utf8");
const CASES = readFileSync(new URL("../fixtures/expert-ratings/cases.csv", import.meta.url), "utf8");

let app: RunningApp;
let browser: Browser;
let expert: UserView;
let bankId: number;

beforeAll(async () => {
  const t = tempDbPath();
  const db = openDatabase(t.dbPath);
  await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  expert = await createUser(db, { username: "eva", password: PASSWORD, roles: ["rater"], actorId: null });
  const bank = importQuestionBank(db, { bankName: "Pilot bank", text: BANK, actorId: null });
  const set = importReviewSet(db, { setName: "Pilot cases", text: CASES, actorId: null });
  if (!bank.ok || !set.ok) throw new Error("fixture import failed");
  bankId = bank.bankId!;
  addBankRaters(db, { bankId, raterIds: [expert.id], actorId: null });
  addReviewRaters(db, { setId: set.setId!, raterIds: [expert.id], actorId: null });
  db.$client.close();
  app = await startApp({ dbPath: t.dbPath });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function pageFor(username: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await logIn(page, app.url, username, PASSWORD);
  return page;
}

function readDb() {
  return openDatabase(app.dbPath);
}

/** The list shows one bank or set at a time (docs/architecture.md, "Pages are windows"): choose the review set. */
async function openReviewSet(page: Page) {
  await hydrated(page);
  await page.getByLabel("Bank or set").selectOption({ label: "Pilot cases" });
  await page.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL(/[?&]c=s\d+/);
}

describe("expert ratings in the browser", () => {
  it("rates one question's five options with the keyboard, then one generated case", async () => {
    const page = await pageFor("eva");
    await page.goto(`${app.url}/expert-ratings`);
    await hydrated(page);
    expect(await page.getByTestId("progress").textContent()).toBe("0 of 9 submitted");
    await page.keyboard.press("j");
    await page.waitForURL(/\/mentat\/\d+$/);
    await hydrated(page);
    const questionUrl = page.url();
    const questionId = Number(questionUrl.split("/").pop());

    // An unrated slider has no value: no number, no thumb drawn (docs/mentat.md, "Option ratings"); the first
    // arrow gives it the middle, the next one moves it from there.
    expect(await page.getByTestId("score-1").inputValue()).toBe("");
    expect(await page.getByTestId("slider-1").evaluate((e) => getComputedStyle(e).appearance)).toBe("none");
    await page.keyboard.press("1");
    await page.keyboard.press("ArrowRight");
    expect(await page.getByTestId("score-1").inputValue()).toBe("50");
    await page.keyboard.press("ArrowRight");
    expect(await page.getByTestId("score-1").inputValue()).toBe("51");
    expect(await page.getByTestId("slider-1").evaluate((e) => getComputedStyle(e).appearance)).not.toBe("none");
    // 1–5 focus a slider; Home/End, arrows and PageUp/PageDown set it.
    await page.keyboard.press("End"); // 100
    await page.keyboard.press("2");
    await page.keyboard.press("Home"); // 0
    await page.keyboard.press("3");
    await page.keyboard.press("End");
    for (let i = 0; i < 3; i++) await page.keyboard.press("ArrowLeft"); // 97
    await page.keyboard.press("4");
    await page.keyboard.press("Home");
    await page.keyboard.press("PageUp"); // 10
    await page.keyboard.press("5");
    await page.keyboard.press("Home");
    for (let i = 0; i < 25; i++) await page.keyboard.press("ArrowRight"); // 25
    const expected = [100, 0, 97, 10, 25];
    for (const [i, v] of expected.entries())
      expect(await page.getByTestId(`score-${i + 1}`).inputValue()).toBe(String(v));
    expect(await page.getByTestId("rated-count").textContent()).toBe("5 of 5");
    await expect.poll(() => page.getByTestId("save-state").textContent(), { timeout: 10_000 }).toContain("Saved");

    await page.keyboard.press("c");
    await page.keyboard.type("Option 3 is acceptable if beds are short.");
    await page.keyboard.press("Control+Enter");
    await page.waitForURL((u) => u.href !== questionUrl);

    const db = readDb();
    const row = db
      .select()
      .from(mentatRatings)
      .where(and(eq(mentatRatings.questionId, questionId), eq(mentatRatings.raterId, expert.id)))
      .get()!;
    expect(row.status).toBe("submitted");
    expect(row.comment).toBe("Option 3 is acceptable if beds are short.");
    const order = row.optionOrder as number[];
    const scores = row.scores as number[];
    expected.forEach((v, shown) => expect(scores[order[shown]!]).toBe(v));
    // The page showed the options in this expert's order.
    const options = db
      .select({ o: mentatQuestions.options })
      .from(mentatQuestions)
      .where(eq(mentatQuestions.id, questionId))
      .get()!.o as string[];
    db.$client.close();
    await page.goto(questionUrl);
    await hydrated(page);
    for (const [shown, original] of order.entries())
      expect(await page.locator(`li[data-option="${shown + 1}"] p`).textContent()).toContain(options[original]!);
    expect(await page.getByTestId("item-state").textContent()).toBe("submitted");

    // A generated case: 5, 4, 5 on the three scales, then submit.
    await page.goto(`${app.url}/expert-ratings`);
    await openReviewSet(page);
    await page.locator('tr[data-item="c01"] a').click();
    await page.waitForURL(/\/case-review\/\d+$/);
    await hydrated(page);
    const caseUrl = page.url();
    expect(await page.getByTestId("case-text").textContent()).toContain("34-year-old teacher");
    await page.keyboard.press("5");
    await page.keyboard.press("4");
    await page.keyboard.press("5");
    expect(await page.locator('input[name="validity"][value="4"]').isChecked()).toBe(true);
    await page.keyboard.press("Control+Enter");
    await page.waitForURL((u) => u.href !== caseUrl);
    const db2 = readDb();
    const item = db2.select().from(reviewItems).where(eq(reviewItems.externalId, "c01")).get()!;
    const review = db2
      .select()
      .from(reviewJudgements)
      .where(and(eq(reviewJudgements.itemId, item.id), eq(reviewJudgements.raterId, expert.id)))
      .get()!;
    expect([review.status, review.naturalness, review.validity, review.realism, review.decision]).toEqual([
      "submitted",
      5,
      4,
      5,
      null,
    ]);
    db2.$client.close();

    await page.goto(`${app.url}/expert-ratings`);
    await hydrated(page);
    expect(await page.getByTestId("progress").textContent()).toBe("2 of 9 submitted");
    await page.context().close();
  });

  it("asks for a reason before a seed can be rejected", async () => {
    const page = await pageFor("eva");
    await page.goto(`${app.url}/expert-ratings`);
    await openReviewSet(page);
    await page.locator('tr[data-item="s02"] a').click();
    await page.waitForURL(/\/case-review\/\d+$/);
    await hydrated(page);
    await page.keyboard.press("r");
    await page.locator("#reason").waitFor();
    await page.locator("#comment").focus();
    await page.keyboard.press("Control+Enter");
    expect(await page.getByTestId("form-message").textContent()).toMatch(/missing/);
    expect(await page.locator(".field-error").first().textContent()).toBe("Say why the seed is rejected.");
    const url = page.url();
    await page.locator("#reason").fill("The hypomanic episode has no duration.");
    await page.keyboard.press("Control+Enter");
    await page.waitForURL((u) => u.href !== url);
    await page.context().close();
  });

  it("shows the admin the panel's progress and fits labels from the bank page", async () => {
    const page = await pageFor("boss");
    await page.goto(`${app.url}/admin/mentat/${bankId}`);
    await hydrated(page);
    expect(await page.locator('tr[data-rater="eva"] td.num').first().textContent()).toBe("1 / 4");
    await page.fill("#bootstrap", "10");
    await page.getByRole("button", { name: "Fit labels" }).click();
    await expect.poll(() => page.getByTestId("action-result").textContent()).toMatch(/Fit started/);
    // The fit runs in the background; the page reloads its data when the job ends.
    await expect.poll(() => page.locator("p", { hasText: /^Fit \d+ of / }).count(), { timeout: 60_000 }).toBe(1);
    await page.getByRole("button", { name: "Expand" }).click();
    await expect
      .poll(() => page.getByTestId("action-result").textContent())
      .toMatch(/base: 6, gender: 12, age: 18, race: 16/);
    expect(await page.locator('tr[data-dataset="base"] a').first().getAttribute("href")).toBe(
      `/admin/mentat/${bankId}/export?set=base`,
    );
    await page.context().close();
  });
});
