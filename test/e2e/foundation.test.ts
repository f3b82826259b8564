import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../app/platform/db.server";
import { createUser } from "../../app/accounts/users.server";
import { launchBrowser, logIn } from "../support/browser";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

const PASSWORD = "e2e-password-1";
let app: RunningApp;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  const t = tempDbPath();
  dir = t.dir;
  const db = openDatabase(t.dbPath);
  await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  await createUser(db, { username: "ann", password: PASSWORD, roles: ["annotator"], actorId: null });
  db.$client.close();
  app = await startApp({ dbPath: t.dbPath });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

const header =
  "id,age_group,sex,presenting_symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses";

describe("foundation in the browser", () => {
  it("redirects a logged-out visitor to the login page", async () => {
    const page = await browser.newPage();
    await page.goto(`${app.url}/admin`);
    expect(new URL(page.url()).pathname).toBe("/login");
    expect(new URL(page.url()).searchParams.get("redirectTo")).toBe("/admin");
    await page.close();
  });

  it("refuses a wrong password", async () => {
    const page = await browser.newPage();
    await page.goto(`${app.url}/login`);
    await page.fill("#username", "boss");
    await page.fill("#password", "not-the-password");
    await page.click("button[type=submit]");
    await expect(page.getByRole("alert").textContent()).resolves.toContain("Wrong username or password");
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.close();
  });

  it("answers 403 when an annotator opens an admin page", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await logIn(page, app.url, "ann", PASSWORD);
    const response = await page.goto(`${app.url}/admin/users`);
    expect(response?.status()).toBe(403);
    expect(await page.textContent("h1")).toContain("403");
    await context.close();
  });

  it("lets an admin import a CSV: a bad file gets a line-numbered report and writes nothing, a good one shows its cases", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await logIn(page, app.url, "boss", PASSWORD);

    const bad = join(dir, "bad.csv");
    writeFileSync(
      bad,
      [
        header,
        "c1,28-37,F,Low mood for weeks,No prior episodes,Depressed affect,,",
        "c2,28-37,M,Only one section,,,,",
        "c1,38-47,F,dup,dup,dup,,",
      ].join("\n"),
    );
    await page.goto(`${app.url}/admin/import`);
    await page.fill("#study", "Pilot");
    await page.setInputFiles("#file", bad);
    await page.click("button[value=preview]");
    const errors = page.getByTestId("import-errors");
    await errors.waitFor();
    const text = await errors.textContent();
    expect(text).toContain("line 3: (id c2) 1 non-empty section; a case needs 3 to 5.");
    expect(text).toContain('line 4: (id c1) duplicate id "c1" (first on line 2).');
    expect(await page.locator("button[value=confirm]").count()).toBe(0);

    const good = join(dir, "good.csv");
    writeFileSync(
      good,
      "\uFEFF" +
        [
          header,
          'c1,28-37,F,"Low mood for six weeks,\nearly waking",No prior episodes,Depressed affect,MADRS 28,',
          "c2,48-57,M,Auditory hallucinations,Two admissions,Flat affect,PANSS 92,Hypertension",
          "c3,78+,F,Confusion,,Disoriented,MMSE 17,Stroke",
        ].join("\r\n"),
    );
    await page.goto(`${app.url}/admin/import`);
    await page.fill("#study", "Pilot");
    await page.setInputFiles("#file", good);
    await page.click("button[value=preview]");
    await page.getByTestId("import-preview").waitFor();
    expect(await page.getByTestId("import-preview").textContent()).toContain("Ready to import");
    await Promise.all([page.waitForURL(/\/admin\/studies\/\d+/), page.click("button[value=confirm]")]);
    expect(await page.getByRole("status").textContent()).toContain("Imported: 3 new");
    for (const id of ["c1", "c2", "c3"]) expect(await page.locator(`tr[data-case="${id}"]`).count()).toBe(1);
    expect(await page.locator('tr[data-case="c3"] td').nth(2).textContent()).toBe("4");

    // The same file again changes nothing.
    await page.goto(`${app.url}/admin/import`);
    await page.fill("#study", "Pilot");
    await page.setInputFiles("#file", good);
    await page.click("button[value=preview]");
    await page.getByTestId("import-preview").waitFor();
    expect(await page.getByTestId("import-preview").textContent()).toContain("Nothing to change");
    await context.close();
  });
});
