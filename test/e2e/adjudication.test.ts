import { and, asc, eq, gt } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../app/platform/db.server";
import { DEMO_ANNOTATED_CASES, DEMO_PASSWORD } from "../../app/demo/demo.server";
import { assignments, cases, users } from "../../db/schema";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { startApp, type RunningApp } from "../support/server";

let app: RunningApp;
let browser: Browser;
let target: { caseId: number; externalId: string; annotators: string[] };

beforeAll(async () => {
  app = await startApp({ demo: true });
  browser = await launchBrowser();
  // The demo was seeded by the server at start; find a case that nobody has annotated yet, and its two annotators.
  const db = openDatabase(app.dbPath);
  const rows = db
    .select({ caseId: cases.id, externalId: cases.externalId, username: users.username })
    .from(cases)
    .innerJoin(assignments, eq(assignments.caseId, cases.id))
    .innerJoin(users, eq(users.id, assignments.annotatorId))
    .where(and(gt(cases.position, DEMO_ANNOTATED_CASES + 2)))
    .orderBy(asc(cases.position), asc(users.username))
    .all();
  db.$client.close();
  target = {
    caseId: rows[0]!.caseId,
    externalId: rows[0]!.externalId,
    annotators: rows.filter((r) => r.caseId === rows[0]!.caseId).map((r) => r.username),
  };
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function as(username: string): Promise<Page> {
  const page = await (await browser.newContext({ acceptDownloads: true })).newPage();
  await logIn(page, app.url, username, DEMO_PASSWORD);
  return page;
}

async function annotate(username: string, code: string, section: string) {
  const page = await as(username);
  await page.goto(`${app.url}/annotate/${target.caseId}`);
  await hydrated(page);
  await page.keyboard.press("s");
  await page.keyboard.press("/");
  await page.keyboard.type(code);
  await page.locator(".picker-results li").first().waitFor();
  await page.keyboard.press("Enter");
  await page.keyboard.press(section);
  const url = page.url();
  await page.keyboard.press("Control+Enter");
  await page.waitForURL((u) => u.href !== url);
  await page.context().close();
}

describe("from disagreement to the exported gold label", () => {
  it("two annotators disagree, the adjudicator resolves blinded, the admin exports the adjudicated label", async () => {
    expect(target.annotators).toHaveLength(2);
    await annotate(target.annotators[0]!, "F32.1", "2");
    await annotate(target.annotators[1]!, "F33.1", "3");

    const adj = await as("adjudicator");
    await adj.goto(`${app.url}/adjudicate`);
    const row = adj.locator(`tr[data-case="${target.externalId}"]`);
    expect(await row.textContent()).toContain("diagnosis");
    await row.locator("a").click();
    await adj.waitForURL(new RegExp(`/adjudicate/${target.caseId}$`));
    await hydrated(adj);
    // Phase 1: the annotations are not on the page yet.
    expect(await adj.getByTestId("annotations").count()).toBe(0);
    expect(await adj.content()).not.toContain("F33.1");
    await adj.locator("input[name=sufficiency][value=sufficient]").check();
    await adj.locator("#icd10-search").fill("F33.1");
    await adj.locator(".picker-results li").first().click();
    await adj.locator('input[name=earliestSection][value="2"]').check();
    await adj.getByRole("button", { name: /^Record my judgement and show the annotations/ }).click();
    // Phase 2: Annotator A and B appear, without names.
    await adj.getByTestId("annotations").waitFor();
    const shown = await adj.getByTestId("annotations").textContent();
    expect(shown).toContain("Annotator A");
    expect(shown).toContain("F32.1");
    expect(shown).toContain("F33.1");
    for (const name of target.annotators) expect(await adj.content()).not.toContain(name);
    await adj.locator("#rationale").fill("Recurrent course documented in the history.");
    // On to the next case of the queue (the demo has more disputes), with the decision confirmed.
    await Promise.all([
      adj.waitForURL(/\/adjudicate(\/\d+)?\?decided=/),
      adj.getByRole("button", { name: /^Decide/ }).click(),
    ]);
    await adj.context().close();

    const admin = await as("admin");
    await admin.goto(`${app.url}/admin`);
    await admin.getByRole("link", { name: "Demo study" }).click();
    await admin.getByRole("link", { name: "Progress and export" }).click();
    await hydrated(admin);
    await admin.locator("input[name=allowPartial]").check();
    const [download] = await Promise.all([
      admin.waitForEvent("download"),
      admin.locator("button[value='data_gt.json']").click(),
    ]);
    const text = await (
      await download.createReadStream()
    )
      .toArray()
      .then((chunks) => Buffer.concat(chunks).toString("utf8"));
    const record = (JSON.parse(text) as Record<string, unknown>[]).find((r) => r.id === target.externalId)!;
    expect(record).toBeDefined();
    expect(record.diagnosis).toBe("F33.1");
    expect(record.earliest_sufficient_section).toBe("2");
    expect(record.adjudicated).toBe(true);
    expect(record.adjudication_reason).toBe("diagnosis");
    expect(record.diagnosis_agreement).toBe("0");
    await admin.context().close();
  });
});
