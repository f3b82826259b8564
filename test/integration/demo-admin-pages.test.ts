/**
 * The admin's pages on the demo study, on the built app (needs `npx remix vite:build` first; one server for the
 * file): a refused download comes back to the page that offered it, in the app's layout, naming that page's own
 * controls (never a command-line flag); audit histories name users by username, never by internal id; a screening
 * round still in review shows its items as pending, not excluded.
 */
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type RunningApp } from "../support/server";
import { appSessions } from "../support/sessions";
import { DEMO_PASSWORD } from "../../app/demo/demo.server";

let app: RunningApp;
const { logIn, get, text } = appSessions(() => app.url, DEMO_PASSWORD);

beforeAll(async () => {
  app = await startApp({ demo: true });
  await logIn("admin");
}, 60_000);

afterAll(async () => {
  await app?.stop();
});

/** The visible text of a page: tags dropped, entities of quotes decoded. */
const visible = (html: string) =>
  html
    .replace(/<script[\s\S]*?<\/script>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&quot;|&#x27;|&#39;/g, '"')
    .replace(/\s+/g, " ");

describe("a refused export", () => {
  it("sends the admin back to the progress page, which names its checkbox", async () => {
    const res = await get("admin", "/admin/studies/1/export?file=data_gt.json&asReleased=1");
    expect(res.status).toBe(303);
    const to = res.headers.get("location")!;
    expect(to).toBe("/admin/studies/1/progress?refused=data_gt.json&asReleased=1");
    const page = visible(await text("admin", to));
    expect(page).toMatch(/Export refused: \d+ of 48 cases are not final \(.*\)\. Finish them, or tick/);
    expect(page).toContain("allow partial (final cases only)");
    expect(page).not.toContain("--allow-partial");
    // In the app's layout: the navigation is there.
    expect(page).toContain("Log out");
    // With "allow partial" the same file is a download.
    const partial = await get("admin", "/admin/studies/1/export?file=data_gt.json&allowPartial=1");
    expect(partial.status).toBe(200);
    expect(partial.headers.get("content-disposition")).toContain("data_gt.json");
  });

  it("of an unfinished screening release comes back to the study page, without a command-line flag", async () => {
    const res = await get("admin", "/admin/screening/1/files/included.jsonl");
    expect(res.status).toBe(303);
    const to = res.headers.get("location")!;
    expect(to).toMatch(/^\/admin\/screening\/1\?refused=included\.jsonl/);
    const page = visible(await text("admin", to.replace(/#.*/, "")));
    expect(page).toMatch(/Export refused: The included set is not final: .*provisional export/);
    expect(page).not.toContain("--allow-incomplete");
  });

  it("shows nothing on the page itself when no download was refused", async () => {
    expect(visible(await text("admin", "/admin/studies/1/progress"))).not.toContain("Export refused");
  });
});

describe("audit histories", () => {
  it("name users by username, never by internal id", async () => {
    const db = new Database(app.dbPath, { readonly: true });
    const users = db.prepare("SELECT id, username FROM users").all() as { id: string; username: string }[];
    db.close();
    const page = visible(await text("admin", "/admin/judge-validation/1/items/1"));
    const history = page.slice(page.indexOf("History"));
    for (const u of users) expect(history, `user id of ${u.username}`).not.toContain(u.id);
    expect(history).toMatch(/→ rater\d/);
  });
});

describe("a screening round in review", () => {
  it("shows its items' outcome as pending until the round closes", async () => {
    const page = visible(await text("admin", "/admin/screening/1/rounds/1"));
    expect(page).toContain("pending");
    expect(page).not.toMatch(/\bexcluded\b(?! items)/);
  });
});
