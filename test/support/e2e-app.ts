/**
 * The set-up most browser tests share: a temporary database seeded by `seed`, the built app on it, one Chromium, all
 * started before the file's tests and stopped after them; `pageAs` opens a fresh browser context logged in as a user.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { launchBrowser, logIn } from "./browser";
import { PASSWORD } from "./fixtures";
import { startApp, tempDbPath, type RunningApp } from "./server";

export interface E2eApp {
  readonly app: RunningApp;
  readonly browser: Browser;
  /** The database file the app runs on, for reading what it stored. */
  readonly dbPath: string;
  pageAs(username: string): Promise<Page>;
}

/** `env`: the server's own settings for this file (e.g. a short CONCORD_SUBMIT_GRACE_SECONDS). */
export function seededApp(seed: (db: Db) => unknown, opts: { env?: Record<string, string> } = {}): E2eApp {
  let app: RunningApp | undefined;
  let browser: Browser | undefined;
  let dbPath = "";
  beforeAll(async () => {
    dbPath = tempDbPath().dbPath;
    const db = openDatabase(dbPath);
    await seed(db);
    db.$client.close();
    app = await startApp({ dbPath, env: opts.env });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  });
  return {
    get app() {
      return app!;
    },
    get browser() {
      return browser!;
    },
    get dbPath() {
      return dbPath;
    },
    async pageAs(username) {
      const page = await (await browser!.newContext()).newPage();
      await logIn(page, app!.url, username, PASSWORD);
      return page;
    },
  };
}
