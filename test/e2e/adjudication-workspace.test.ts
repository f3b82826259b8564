/**
 * The adjudicator's workspace in the browser: the keymap's keys (the same as in every workspace), a draft of the
 * independent judgement kept across a reload, the blind independent step, and after the reveal the fields on which
 * Annotator A, Annotator B and the independent judgement differ highlighted (docs/safe-psych.md, "Disagreement and
 * adjudication"; docs/architecture.md, "Keymap").
 */
import { asc, eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../app/platform/db.server";
import { submitAnnotation } from "../../app/annotation/annotations.server";
import { reopenDecision } from "../../app/adjudication/adjudication.server";
import { caseOutcomes } from "../../db/schema";
import { cases } from "../../db/schema";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { PASSWORD, seedStudy } from "../support/fixtures";
import { sufficient } from "../support/labels";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

let app: RunningApp;
let browser: Browser;
let caseIds: number[];
let dbPath: string;
let bossId: string;

beforeAll(async () => {
  const t = tempDbPath();
  const db = openDatabase(t.dbPath);
  const { ids, study } = await seedStudy(db, {
    cases: 2,
    users: [
      { username: "ann1", roles: ["annotator"] },
      { username: "ann2", roles: ["annotator"] },
      { username: "judy", roles: ["adjudicator"] },
      { username: "boss", roles: ["admin"] },
    ],
    annotators: ["ann1", "ann2"],
  });
  caseIds = db
    .select({ id: cases.id })
    .from(cases)
    .where(eq(cases.studyId, study.id))
    .orderBy(asc(cases.position))
    .all()
    .map((c) => c.id);
  // Both cases disputed on the diagnosis: same sufficiency, different codes, different earliest sections.
  for (const caseId of caseIds) {
    submitAnnotation(db, { userId: ids.ann1!, caseId, values: sufficient("F32.1", 2, "first remark"), version: 0 });
    submitAnnotation(db, { userId: ids.ann2!, caseId, values: sufficient("F33.1", 3, "second remark"), version: 0 });
  }
  db.$client.close();
  dbPath = t.dbPath;
  bossId = ids.boss!;
  app = await startApp({ dbPath: t.dbPath });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function judyPage(): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await logIn(page, app.url, "judy", PASSWORD);
  return page;
}

describe("the adjudicator's workspace", () => {
  it("keeps a draft across a reload, reveals after the judgement and highlights the differing fields", async () => {
    const page = await judyPage();
    await page.goto(`${app.url}/adjudicate/${caseIds[0]}`);
    await hydrated(page);
    // Blind: no badge, no annotations.
    expect(await page.locator(".badge:not([data-testid=case-state])").count()).toBe(0);
    expect(await page.getByTestId("annotations").count()).toBe(0);
    // The annotator's keys: S sufficient, / the code search, 2 the earliest section.
    await page.keyboard.press("s");
    await page.keyboard.press("/");
    await page.keyboard.type("F33.1");
    await page.locator(".picker-results li").first().waitFor();
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByTestId("chosen-code").textContent()).toContain("F33.1");
    await page.keyboard.press("2");
    await expect.poll(() => page.getByTestId("save-state").textContent(), { timeout: 5000 }).toMatch(/^Saved/);
    await page.reload();
    await hydrated(page);
    expect(await page.getByTestId("chosen-code").textContent()).toContain("F33.1");
    expect(await page.locator('input[name=earliestSection][value="2"]').isChecked()).toBe(true);

    // Ctrl+Enter records the judgement; then A, B and the judgement side by side.
    await page.keyboard.press("Control+Enter");
    await page.getByTestId("differences").waitFor();
    expect(await page.locator(".badge:not([data-testid=case-state])").textContent()).toBe("disagreement on diagnosis");
    // The reveal's header fits one line at 1280 px: the dispute reason has a line of its own under it.
    await page.setViewportSize({ width: 1280, height: 900 });
    const header = await page.evaluate(() => {
      const row = document.querySelector("section > .row")!;
      const links = [...row.querySelectorAll("a.button")];
      return {
        titleBottom: row.querySelector("h1")!.getBoundingClientRect().bottom,
        lastLinkTop: links[links.length - 1]!.getBoundingClientRect().top,
      };
    });
    expect(header.lastLinkTop).toBeLessThan(header.titleBottom);
    const row = (field: string) => page.locator(`[data-testid=differences] tr[data-field=${field}]`);
    expect(await row("icd10").getAttribute("data-differs")).toBe("true");
    expect(await row("earliestSection").getAttribute("data-differs")).toBe("true");
    expect(await row("sufficiency").getAttribute("data-differs")).toBe("false");
    // A and B in the case's drawn order, then the independent judgement.
    const codes = (await row("icd10").locator("td").allTextContents()).map((t) => t.slice(0, 5));
    expect([...codes.slice(0, 2)].sort()).toEqual(["F32.1", "F33.1"]);
    expect(codes[2]).toBe("F33.1");
    // Highlighted: a differing row's cells have a background, an agreeing row's do not.
    const background = (field: string) =>
      row(field)
        .locator("td")
        .first()
        .evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(await background("icd10")).not.toBe(await background("sufficiency"));
    await page.screenshot({ path: "/tmp/i13-adjudicate-reveal.png", fullPage: true });

    // E goes to the rationale; what is typed there is a draft too.
    await page.keyboard.press("e");
    await page.keyboard.type("History shows a recurrent course.");
    await expect.poll(() => page.getByTestId("save-state").textContent(), { timeout: 5000 }).toMatch(/^Saved/);
    await page.reload();
    await hydrated(page);
    expect(await page.locator("#rationale").inputValue()).toBe("History shows a recurrent course.");
    await page.context().close();
  });

  it("answers the shared keys: J the next case, ? asks for the guidelines, H the help page", async () => {
    const page = await judyPage();
    await page.goto(`${app.url}/adjudicate/${caseIds[0]}`);
    await hydrated(page);
    await page.evaluate(() => {
      window.addEventListener("concord:guidelines", () => document.body.setAttribute("data-guidelines", "asked"));
    });
    await page.keyboard.press("?");
    expect(await page.locator("body").getAttribute("data-guidelines")).toBe("asked");
    await page.keyboard.press("j");
    await page.waitForURL(new RegExp(`/adjudicate/${caseIds[1]}$`));
    await hydrated(page);
    await page.keyboard.press("h");
    await page.waitForURL(/\/help$/);
    for (const title of [
      "Annotation",
      "Adjudication",
      "Judge validation",
      "Screening",
      "MENTAT option ratings",
      "MentalBench case review",
    ])
      await page.getByRole("heading", { name: title, exact: true }).waitFor();
    await page.screenshot({ path: "/tmp/i13-help.png", fullPage: true });
    await page.context().close();
  });

  it("goes on to the next case after a decision, walks back with K, and marks a reopened case with the admin's reason", async () => {
    const page = await judyPage();
    // The queue: list header with J, and the progress card.
    await page.goto(`${app.url}/adjudicate`);
    await hydrated(page);
    expect(await page.getByTestId("progress").textContent()).toBe("0 of 2 decided by you");
    await page.keyboard.press("j");
    await page.waitForURL(new RegExp(`/adjudicate/${caseIds[0]}$`));
    await hydrated(page);
    // Case 1 has the independent judgement and rationale of the first test: Ctrl+Enter decides, then the next case.
    await page.keyboard.press("Control+Enter");
    await page.waitForURL(new RegExp(`/adjudicate/${caseIds[1]}\\?decided=`));
    await page.getByTestId("decided-notice").waitFor();
    await hydrated(page);
    expect(await page.getByTestId("progress").textContent()).toBe("1 of 2 decided");

    // The admin reopens the decision, with a reason.
    const db = openDatabase(dbPath);
    const version = db.select().from(caseOutcomes).where(eq(caseOutcomes.caseId, caseIds[0]!)).get()!.version;
    const reason = "Section 2 mentions a manic episode; please look again.";
    expect(reopenDecision(db, { adminId: bossId, caseId: caseIds[0]!, reason, outcomeVersion: version }).ok).toBe(true);
    db.$client.close();

    // K walks back to it (the queue wraps around); the queue marks it reopened.
    await page.goto(`${app.url}/adjudicate/${caseIds[1]}`);
    await hydrated(page);
    await page.keyboard.press("k");
    await page.waitForURL(new RegExp(`/adjudicate/${caseIds[0]}$`));
    await hydrated(page);
    // Judy has seen A and B: no second "independent" step, the admin's reason shown, the form a revision.
    expect(await page.getByTestId("reopened").textContent()).toContain(reason);
    expect(await page.getByTestId("case-state").textContent()).toBe("reopened");
    expect(await page.getByRole("heading", { name: "Revised decision" }).count()).toBe(1);
    expect(await page.getByText("The two annotations are shown after you record it").count()).toBe(0);
    await page.getByTestId("differences").waitFor();
    await page.screenshot({ path: "/tmp/w13-adjudicate-reopened.png", fullPage: true });
    await page.goto(`${app.url}/adjudicate`);
    await page.locator(`tr[data-reopened=true]`).waitFor();
    expect(await page.locator(`tr[data-reopened=true] .badge`).textContent()).toBe("reopened");
    await page.context().close();
  });
});
