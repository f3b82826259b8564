/**
 * Single sign-on in the browser (docs/security.md, "Single sign-on"), through a real OpenID Connect provider that the
 * test starts on loopback and its own login and consent pages. The server runs with local passwords switched off, a
 * roles claim mapped to Concord's roles, and one break-glass admin: an annotator signs in and lands on their work; an
 * admin signs in and sees the users the provider made, among them one with no role, who sees that an admin must
 * grant one; the password form refuses, except for the break-glass admin. Screenshots go to SCREENSHOT_DIR when set.
 */
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../app/accounts/users.server";
import { openDatabase } from "../../app/platform/db.server";
import { hydrated, launchBrowser } from "../support/browser";
import { PASSWORD } from "../support/fixtures";
import { startProvider, type TestProvider } from "../support/oidc-provider";
import { freePort, startApp, tempDbPath, type RunningApp } from "../support/server";

let provider: TestProvider;
let app: RunningApp;
let browser: Browser;

beforeAll(async () => {
  const port = await freePort();
  const callback = `http://127.0.0.1:${port}/login/oidc/callback`;
  provider = await startProvider([callback]);
  provider.accounts.set("ann-7731", {
    preferred_username: "ann.mensah",
    name: "Ann Mensah",
    groups: ["psychiatrists"],
  });
  provider.accounts.set("boss-0001", {
    preferred_username: "s.boateng",
    name: "Sam Boateng",
    groups: ["concord-admins"],
  });
  provider.accounts.set("new-4410", { preferred_username: "k.owusu", name: "Kwame Owusu", groups: ["staff"] });
  const { dbPath } = tempDbPath();
  const db = openDatabase(dbPath);
  await createUser(db, { username: "root", password: PASSWORD, roles: ["admin"], actorId: null });
  await createUser(db, { username: "olga", password: PASSWORD, roles: ["annotator"], actorId: null });
  db.$client.close();
  app = await startApp({
    dbPath,
    port,
    env: {
      ...provider.env(callback),
      CONCORD_OIDC_ROLES_CLAIM: "groups",
      CONCORD_OIDC_ROLE_MAP: "psychiatrists=annotator,concord-admins=admin",
      CONCORD_LOCAL_PASSWORDS: "off",
      CONCORD_BREAK_GLASS_ADMIN: "root",
    },
  });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await provider?.stop();
});

async function shot(page: Page, name: string) {
  if (process.env.SCREENSHOT_DIR)
    await page.screenshot({ path: join(process.env.SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** From Concord's login page through the provider's own login and consent pages, back to Concord. */
async function signIn(login: string, name?: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  if (process.env.DEBUG_OIDC) page.on("response", (r) => console.log(r.status(), r.url(), r.headers()["location"]));
  await page.goto(`${app.url}/login`);
  await hydrated(page);
  if (name) await shot(page, `${name}-1-concord-login`);
  await Promise.all([
    page.waitForURL((u) => u.origin === provider.issuer),
    page.click("text=Sign in with Test University"),
  ]);
  await page.fill("input[name=login]", login);
  await page.fill("input[name=password]", "anything");
  if (name) await shot(page, `${name}-2-provider-login`);
  await page.click("button[type=submit]");
  await page.waitForSelector("input[name=prompt][value=consent]", { state: "attached" });
  if (name) await shot(page, `${name}-3-provider-consent`);
  await Promise.all([page.waitForURL((u) => u.origin === app.url), page.click("button[type=submit]")]);
  await hydrated(page);
  return page;
}

describe("single sign-on in the browser", () => {
  it("the login page offers the institution's sign-in and no password form", async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${app.url}/login`);
    await hydrated(page);
    expect(await page.locator("a.sso").textContent()).toBe("Sign in with Test University");
    expect(await page.locator("#password").count()).toBe(0);
    expect(await page.locator("main").textContent()).toContain("Concord passwords are switched off");
    await shot(page, "login-passwords-off");
  });

  it("an annotator signs in through the provider and lands on their work", async () => {
    const page = await signIn("ann-7731", "annotator");
    expect(new URL(page.url()).pathname).toBe("/annotate");
    expect(await page.locator("header .who").textContent()).toContain("Ann Mensah");
    await shot(page, "annotator-4-signed-in");
    await page.goto(`${app.url}/account`);
    await hydrated(page);
    expect(await page.locator("main").textContent()).toContain("Passwords are switched off here");
    await shot(page, "annotator-5-account");
  });

  it("a user whose claim names no role is told that an admin must grant one", async () => {
    const page = await signIn("new-4410");
    expect(new URL(page.url()).pathname).toBe("/");
    expect(await page.locator("[role=status]").textContent()).toContain("an admin must grant you a role");
    expect(await page.locator("header .who").textContent()).toContain("(no role yet)");
    await shot(page, "no-role");
  });

  it("an admin signs in through the provider and sees the users it made", async () => {
    const page = await signIn("boss-0001", "admin");
    expect(await page.locator("h1").textContent()).toContain("Sam Boateng");
    await page.goto(`${app.url}/admin/users`);
    await hydrated(page);
    const text = (await page.locator("main").textContent()) ?? "";
    for (const name of ["ann.mensah", "k.owusu", "s.boateng"]) expect(text).toContain(name);
    expect(text).toContain("People who sign in with Test University get their account at their first sign-in");
    await shot(page, "admin-4-users");
    // A user the provider made: linked by issuer and subject, no password link to make while passwords are off.
    await page.click("text=ann.mensah");
    await page.waitForURL(/\/admin\/users\/[a-z2-7]+$/);
    await hydrated(page);
    const detail = (await page.locator("main").textContent()) ?? "";
    expect(detail).toContain(provider.issuer);
    expect(detail).toContain("subject ann-7731");
    expect(await page.locator("button[value=reset-link]").count()).toBe(0);
    await shot(page, "admin-5-user-page");
  });

  it("the password form refuses, except for the break-glass admin", async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${app.url}/login`);
    await hydrated(page);
    await page.click("text=Emergency admin login");
    await page.waitForSelector("#password");
    await hydrated(page);
    await page.fill("#username", "olga");
    await page.fill("#password", PASSWORD);
    await page.click("button[type=submit]");
    await expect.poll(() => page.locator("[role=alert]").textContent()).toContain("Passwords are switched off");
    await shot(page, "break-glass-refused");
    await page.fill("#username", "root");
    await page.fill("#password", PASSWORD);
    await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login")), page.click("button[type=submit]")]);
    await hydrated(page);
    expect(await page.locator("header .who").textContent()).toContain("root");
  });
});
