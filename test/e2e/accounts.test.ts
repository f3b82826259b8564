/**
 * Accounts in the browser, as each role meets them (docs/security.md, "Accounts"): an annotator changes their
 * password and ends another session; a rater turns on the second factor and logs in with a code, then with a
 * recovery code; an admin requires the second factor for a role (its users land on their account page) and makes a
 * one-time password link that the user opens to set a password. Codes come from the stored secret through otpauth,
 * as an authenticator app would make them. Screenshots go to SCREENSHOT_DIR when it is set.
 */
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { users } from "../../db/schema";
import { createUser } from "../../app/accounts/users.server";
import { openDatabase } from "../../app/platform/db.server";
import { hydrated, logIn } from "../support/browser";
import { seededApp } from "../support/e2e-app";
import { PASSWORD } from "../support/fixtures";

const e2e = seededApp(async (db) => {
  await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  await createUser(db, { username: "ann", password: PASSWORD, roles: ["annotator"], actorId: null });
  await createUser(db, { username: "rita", password: PASSWORD, roles: ["rater"], actorId: null });
  await createUser(db, { username: "adam", password: PASSWORD, roles: ["adjudicator"], actorId: null });
});

async function shot(page: Page, name: string) {
  if (process.env.SCREENSHOT_DIR)
    await page.screenshot({ path: join(process.env.SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** A login through the form in a new browser, so that it makes a session of its own (pageAs reuses one). */
async function freshLogin(username: string, password = PASSWORD): Promise<Page> {
  const page = await (await e2e.browser.newContext()).newPage();
  await page.goto(`${e2e.app.url}/login`);
  await page.fill("#username", username);
  await page.fill("#password", password);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login")), page.click("button[type=submit]")]);
  await hydrated(page);
  return page;
}

function codeOf(username: string, at = Date.now()): string {
  const db = openDatabase(e2e.dbPath);
  try {
    const row = db.select().from(users).where(eq(users.username, username)).get()!;
    return new TOTP({ secret: Secret.fromBase32(row.totpSecret!), period: 30 }).generate({ timestamp: at });
  } finally {
    db.$client.close();
  }
}

describe("accounts in the browser", () => {
  it("an annotator changes their password from the header's name, and ends another session", async () => {
    const other = await freshLogin("ann");
    const page = await freshLogin("ann");
    await page.click("header .who a");
    await page.waitForURL(/\/account$/);
    await hydrated(page);
    expect(await page.locator("table tbody tr").count()).toBe(2);
    await page.fill("#current", "wrong password!");
    await page.fill("#new-password", "a new long passphrase");
    await page.fill("#confirm", "a new long passphrase");
    await page.click("button[value=password]");
    await expect.poll(() => page.locator("#current-error").textContent()).toContain("not your current password");
    await page.fill("#current", PASSWORD);
    await page.fill("#new-password", "a new long passphrase");
    await page.fill("#confirm", "a new long passphrase");
    await page.click("button[value=password]");
    await expect.poll(() => page.locator("[role=status]").first().textContent()).toContain("Your password is changed");
    await shot(page, "account-annotator");
    // The other browser's session was ended by the change.
    await other.reload();
    expect(new URL(other.url()).pathname).toBe("/login");
    // Log in elsewhere again, then end that session from the account page.
    const third = await freshLogin("ann", "a new long passphrase");
    await page.reload();
    await hydrated(page);
    expect(await page.locator("table tbody tr").count()).toBe(2);
    await page.click("tr:not([data-current]) button[value=end-session]");
    await expect.poll(() => page.locator("table tbody tr").count()).toBe(1);
    await third.reload();
    expect(new URL(third.url()).pathname).toBe("/login");
  });

  it("a rater turns on the second factor, then logs in with a code and with a recovery code", async () => {
    const page = await e2e.pageAs("rita");
    await page.goto(`${e2e.app.url}/account`);
    await hydrated(page);
    await page.click("button[value=totp-start]");
    await page.waitForSelector(".qr svg");
    await shot(page, "account-second-factor-setup");
    await page.fill("#confirm-code", codeOf("rita"));
    await page.click("button[value=totp-confirm]");
    await page.waitForSelector(".recovery-codes code");
    const codes = await page.locator(".recovery-codes code").allTextContents();
    expect(codes).toHaveLength(10);
    await shot(page, "account-recovery-codes");

    const fresh = await (await e2e.browser.newContext()).newPage();
    await fresh.goto(`${e2e.app.url}/login`);
    await fresh.fill("#username", "rita");
    await fresh.fill("#password", PASSWORD);
    await Promise.all([fresh.waitForURL(/\/login\/code$/), fresh.click("button[type=submit]")]);
    await hydrated(fresh);
    await shot(fresh, "login-code");
    await fresh.fill("#code", "000000");
    await fresh.click("button[type=submit]");
    await expect.poll(() => fresh.locator("[role=alert]").textContent()).toContain("does not match");
    await fresh.fill("#code", codeOf("rita", Date.now() + 30_000));
    await Promise.all([fresh.waitForURL((u) => !u.pathname.startsWith("/login")), fresh.click("button[type=submit]")]);

    const third = await (await e2e.browser.newContext()).newPage();
    await third.goto(`${e2e.app.url}/login`);
    await third.fill("#username", "rita");
    await third.fill("#password", PASSWORD);
    await Promise.all([third.waitForURL(/\/login\/code$/), third.click("button[type=submit]")]);
    await third.fill("#code", codes[0]!);
    await Promise.all([third.waitForURL(/\/account\?recovery-left=9/), third.click("button[type=submit]")]);
    expect(await third.locator("[role=status]").first().textContent()).toContain("9 unused recovery codes left");
  });

  it("an admin requires the second factor for adjudicators, and gives a user a one-time password link", async () => {
    const admin = await e2e.pageAs("boss");
    const adam = await e2e.pageAs("adam");
    await admin.goto(`${e2e.app.url}/admin/security`);
    await hydrated(admin);
    await admin.check("input[name=roles][value=adjudicator]");
    await admin.click("button[value=require]");
    await expect.poll(() => admin.locator("body").textContent()).toContain("Not set up yet (1): adam");
    await shot(admin, "admin-security");
    await adam.goto(`${e2e.app.url}/adjudicate`);
    expect(new URL(adam.url()).pathname).toBe("/account");
    expect(await adam.locator("[role=alert]").first().textContent()).toContain("requires a second factor");

    await admin.goto(`${e2e.app.url}/admin/users`);
    await hydrated(admin);
    await admin.click("a:text-is('ann')");
    await hydrated(admin);
    await admin.click("button[value=reset-link]");
    const link = await admin.locator("input[aria-label='One-time password link']").inputValue();
    expect(link).toMatch(/\/reset-password\/[a-z2-7]+$/);
    await shot(admin, "admin-user");

    const user = await (await e2e.browser.newContext()).newPage();
    await user.goto(link);
    await hydrated(user);
    await user.fill("#password", "chosen by ann herself");
    await user.fill("#confirm", "chosen by ann herself");
    await Promise.all([user.waitForURL(/\/login\?reset=1/), user.click("button[type=submit]")]);
    await logIn(user, e2e.app.url, "ann", "chosen by ann herself");
    await user.goto(link);
    expect(await user.locator("h1").textContent()).toBe("This link no longer works");
  });
});
