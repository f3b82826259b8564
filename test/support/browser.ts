/** Debian's Chromium driven by playwright-core (no browser download: `npx playwright install` cannot work here). */
import { existsSync } from "node:fs";
import { chromium, type Browser, type Cookie, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `Chromium not found at ${CHROMIUM}: run \`apt-get install -y chromium\` (the README's test command does).`,
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
}

/** Waits until React has hydrated the page, so keyboard shortcuts and client-side forms work. */
export async function hydrated(page: Page): Promise<void> {
  await page.waitForSelector("html[data-hydrated=true]", { state: "attached" });
}

/** The session cookies of each user on each server, from the first log-in through the form (for the test run). */
const sessionCookies = new Map<string, Cookie[]>();

/**
 * Logs the page's browser context in as the user. The first time for a user on a server it goes through the log-in
 * form, as a user does, and keeps the context's cookies; later contexts get those cookies (a cached storage state
 * per role) and open the home page, which is what the form's redirect would show. A kept session that no longer
 * holds (logged out, password reset, deactivated) lands on /login, and the form is used again.
 */
export async function logIn(page: Page, baseUrl: string, username: string, password: string): Promise<void> {
  const key = `${baseUrl} ${username} ${password}`;
  const cookies = sessionCookies.get(key);
  if (cookies) {
    await page.context().clearCookies();
    await page.context().addCookies(cookies);
    await page.goto(`${baseUrl}/`);
    if (!new URL(page.url()).pathname.startsWith("/login")) {
      await hydrated(page);
      return;
    }
    sessionCookies.delete(key);
  }
  await page.goto(`${baseUrl}/login`);
  await page.fill("#username", username);
  await page.fill("#password", password);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login")), page.click("button[type=submit]")]);
  await hydrated(page);
  sessionCookies.set(key, await page.context().cookies(baseUrl));
}
