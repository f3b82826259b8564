/**
 * An admin form sent while another process holds the database's write lock (docs/reliability.md, "Busy answers"):
 * the page says the database is busy and nothing was saved, keeps what was entered, and "Send it again" sends the
 * same form once the lock is free. The lock is held by a second better-sqlite3 connection with BEGIN IMMEDIATE, as a
 * command-line import or a backup would hold it.
 */
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createUser } from "../../app/accounts/users.server";
import { hydrated } from "../support/browser";
import { seededApp } from "../support/e2e-app";
import { PASSWORD } from "../support/fixtures";

const e2e = seededApp(async (db) => {
  await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
});

const usersNamed = (name: string) => {
  const db = new Database(e2e.dbPath, { readonly: true });
  try {
    return db.prepare("SELECT count(*) FROM users WHERE username = ?").pluck().get(name) as number;
  } finally {
    db.close();
  }
};

describe("a form sent while the database is busy", () => {
  it("says nothing was saved, and sends the same form again once the lock is free", async () => {
    const page = await e2e.pageAs("boss");
    await page.goto(`${e2e.app.url}/admin/users`);
    await hydrated(page);
    await page.fill("#new-username", "newcomer");
    await page.fill("#new-display", "New Comer");
    await page.fill("#new-password", "a long enough password 1");
    const holder = new Database(e2e.dbPath);
    holder.exec("BEGIN IMMEDIATE");
    try {
      const answer = page.waitForResponse(
        (r) => r.url().includes("/admin/users.data") && r.request().method() === "POST",
      );
      await page.getByRole("button", { name: "Create user" }).click();
      const res = await answer;
      expect(res.status()).toBe(503);
      expect(res.headers()["retry-after"]).toBe("1");
      const busy = page.getByTestId("database-busy");
      await busy.waitFor();
      await expect.poll(() => busy.textContent()).toContain("The database is busy with another task");
      expect(await busy.textContent()).toContain("nothing of this request was saved or changed");
      expect(await busy.textContent()).toContain("What you entered is kept in this page");
      await page.screenshot({ path: "/tmp/w14b-busy-page.png", fullPage: true });
      expect(usersNamed("newcomer")).toBe(0);
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    await page.getByRole("button", { name: "Send it again" }).click();
    await page.getByText("Created newcomer.").waitFor();
    expect(usersNamed("newcomer")).toBe(1);
    await page.close();
  });
});
