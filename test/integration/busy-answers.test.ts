/**
 * Every request answers 503 with Retry-After, never 500, while another process holds the database's write lock
 * (docs/reliability.md, "Busy answers"), on the built app (needs `npx remix vite:build` first; one demo server for the
 * file). Another better-sqlite3 connection on the same file takes the lock with BEGIN IMMEDIATE, as a command-line
 * import or a backup would; the web server's busy timeout (200 ms) runs out and every action below — admin pages,
 * log-in, log-out — answers 503, as a page (document post) and as a form submission of the running app (`.data`),
 * with the message that nothing was saved; nothing is written, and the same posts succeed once the lock is released.
 */
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_PASSWORD } from "../../app/demo/demo.server";
import { BUSY_REQUEST_MESSAGE } from "../../app/platform/busy-answer.server";
import { startApp, type RunningApp } from "../support/server";
import { appSessions } from "../support/sessions";

let app: RunningApp;
const { logIn, post, cookies, csrfs } = appSessions(() => app.url, DEMO_PASSWORD);

beforeAll(async () => {
  app = await startApp({ demo: true });
  await logIn("admin");
  await logIn("adjudicator1").catch(() => undefined);
}, 60_000);

afterAll(async () => {
  await app?.stop();
});

/** Holds the write lock from a second connection while `run` runs. */
async function whileLocked<T>(run: () => Promise<T>): Promise<T> {
  const holder = new Database(app.dbPath);
  holder.exec("BEGIN IMMEDIATE");
  try {
    return await run();
  } finally {
    holder.exec("ROLLBACK");
    holder.close();
  }
}

const count = (sql: string) => {
  const db = new Database(app.dbPath, { readonly: true });
  try {
    return db.prepare(sql).pluck().get() as number;
  } finally {
    db.close();
  }
};

/** Admin forms that write, with fields their validation accepts, so each reaches its transaction. */
const ADMIN_POSTS: { name: string; path: string; fields: () => Record<string, string> }[] = [
  {
    name: "users: create a user",
    path: "/admin/users",
    fields: () => ({
      intent: "create",
      username: "busy-newcomer",
      displayName: "Newcomer",
      password: "a long enough password 1",
      roles: "annotator",
    }),
  },
  {
    name: "study: adjudication mode",
    path: "/admin/studies/1",
    fields: () => ({ intent: "mode", mode: "reveal_only" }),
  },
  { name: "judge validation: close rating", path: "/admin/judge-validation/1", fields: () => ({ intent: "close" }) },
  {
    name: "case: reopen",
    path: "/admin/cases/1",
    fields: () => ({ reason: "checking the busy answer", outcomeVersion: "0" }),
  },
];

const visible = (html: string) =>
  html
    .replace(/<script[\s\S]*?<\/script>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/\s+/g, " ");

function expectBusy(res: Response, body: string, what: string) {
  expect(res.status, `${what}: ${body.slice(0, 300)}`).toBe(503);
  expect(res.headers.get("retry-after"), what).toBe("1");
  expect(body, what).toContain(BUSY_REQUEST_MESSAGE);
}

describe("while another process holds the write lock", () => {
  it("admin actions answer 503 with Retry-After and the message, as a page and as a form submission", async () => {
    const eventsBefore = count("SELECT count(*) FROM events");
    await whileLocked(async () => {
      for (const p of ADMIN_POSTS) {
        const fields = { csrf: csrfs.admin!, ...p.fields() };
        const page = await post("admin", p.path, fields);
        const html = await page.text();
        expectBusy(page, visible(html), `${p.name} (page)`);
        expect(visible(html)).toContain("The database is busy");
        expect(visible(html)).not.toMatch(/500|Unexpected/);
        const submission = await post("admin", `${p.path}.data`, fields);
        expectBusy(submission, await submission.text(), `${p.name} (submission)`);
      }
    });
    // Nothing of any of them was written.
    expect(count("SELECT count(*) FROM users WHERE username = 'busy-newcomer'")).toBe(0);
    expect(count("SELECT count(*) FROM events")).toBe(eventsBefore);
    // The same post goes through once the lock is released.
    const again = await post("admin", "/admin/users", { csrf: csrfs.admin!, ...ADMIN_POSTS[0]!.fields() });
    expect(again.status).toBe(200);
    expect(count("SELECT count(*) FROM users WHERE username = 'busy-newcomer'")).toBe(1);
  });

  it("log-in and log-out answer 503 with Retry-After and the message; the session is neither made nor ended", async () => {
    const sessionsBefore = count("SELECT count(*) FROM sessions");
    await whileLocked(async () => {
      const login = await fetch(`${app.url}/login`, {
        method: "POST",
        body: new URLSearchParams({ username: "annotator1", password: DEMO_PASSWORD }),
        redirect: "manual",
      });
      const html = await login.text();
      expectBusy(login, visible(html), "login (page)");
      expect(login.headers.getSetCookie().some((c) => c.startsWith("concord_session="))).toBe(false);
      const loginData = await fetch(`${app.url}/login.data`, {
        method: "POST",
        body: new URLSearchParams({ username: "annotator1", password: DEMO_PASSWORD }),
        redirect: "manual",
      });
      expectBusy(loginData, await loginData.text(), "login (submission)");
      const logout = await post("admin", "/logout", { csrf: csrfs.admin! });
      expectBusy(logout, visible(await logout.text()), "logout (page)");
    });
    expect(count("SELECT count(*) FROM sessions")).toBe(sessionsBefore);
    // The admin's session still works: the log-out did not happen.
    const page = await fetch(`${app.url}/admin/users`, { headers: { Cookie: cookies.admin! } });
    expect(page.status).toBe(200);
    expect(app.output()).not.toMatch(/SQLITE_BUSY|database is locked/);
  });
});
