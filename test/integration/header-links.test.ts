/**
 * The header's menu and the error page's first link come from what the protocols registered (docs/architecture.md,
 * "Registration"), checked against the real built app: each role sees its links in the header's order, the admin's
 * "Studies" is current on a study's pages, and a missing item offers its protocol's list. Needs `npm run build`
 * first; one server for the file.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { createUser, type UserView } from "../../app/accounts/users.server";
import { startApp, tempDbPath, type RunningApp } from "../support/server";
import { appSessions } from "../support/sessions";

const PASSWORD = "header-links-1";
let app: RunningApp;
let db: Db;
let dir: string;
const { logIn, text } = appSessions(() => app.url, PASSWORD);

beforeAll(async () => {
  const tmp = tempDbPath();
  dir = tmp.dir;
  db = openDatabase(tmp.dbPath);
  const make = (username: string, roles: UserView["roles"]) =>
    createUser(db, { username, displayName: username, password: PASSWORD, roles, actorId: null });
  await make("rita", ["rater"]);
  await make("ann", ["annotator", "adjudicator"]);
  await make("boss", ["admin"]);
  app = await startApp({ dbPath: tmp.dbPath });
  for (const u of ["rita", "ann", "boss"]) await logIn(u);
}, 60_000);

afterAll(async () => {
  await app?.stop();
  db?.$client.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The links of a navigation landmark, as "words address", and the current one. */
function links(html: string, label: string): { all: string[]; current: string[] } {
  const nav = new RegExp(`<nav aria-label="${label}">([\\s\\S]*?)</nav>`).exec(html)?.[1] ?? "";
  const all: string[] = [];
  const current: string[] = [];
  for (const m of nav.matchAll(/<a ([^>]*)>([^<]*)<\/a>/g)) {
    const href = /href="([^"]*)"/.exec(m[1]!)?.[1];
    all.push(`${m[2]} ${href}`);
    if (/class="active"/.test(m[1]!)) current.push(`${m[2]} ${href}`);
  }
  return { all, current };
}

describe("the header's menu", () => {
  it("shows each role its registered links, in the header's order, then Users and Help", async () => {
    expect(links(await text("rita", "/judge-validation"), "Main").all).toEqual([
      "Rate responses /judge-validation",
      "Screening review /screening",
      "Expert ratings /expert-ratings",
      "Help /help",
    ]);
    expect(links(await text("ann", "/annotate"), "Main").all).toEqual([
      "Annotate /annotate",
      "Model steps /model-review",
      "Adjudicate /adjudicate",
      "Help /help",
    ]);
    const admin = links(await text("boss", "/admin/users"), "Main");
    expect(admin.all).toEqual([
      "Studies /admin",
      "Judges /admin/judge-validation",
      "Screening /admin/screening",
      "Experts /admin/expert-ratings",
      "Evaluations /admin/evaluations",
      "Model evaluation /admin/mc-evaluation",
      "Grading /admin/grading",
      "Preparation /admin/preparation",
      "Jobs /admin/eval-jobs",
      "Users /admin/users",
      "Help /help",
    ]);
    expect(admin.current).toEqual(["Users /admin/users"]);
  });

  it("marks Studies as current on the studies' pages only", async () => {
    expect(links(await text("boss", "/admin"), "Main").current).toEqual(["Studies /admin"]);
    expect(links(await text("boss", "/admin/screening"), "Main").current).toEqual(["Screening /admin/screening"]);
  });
});

describe("the error page", () => {
  it("offers the list of the protocol of a missing item, to a user who may open it", async () => {
    expect(links(await text("rita", "/screening/999999", 404), "Error page").all[0]).toBe(
      "Screening review /screening",
    );
    expect(links(await text("rita", "/mentat/999999", 404), "Error page").all[0]).toBe(
      "Expert ratings /expert-ratings",
    );
    expect(links(await text("ann", "/adjudicate/999999", 404), "Error page").all[0]).toBe(
      "Adjudication queue /adjudicate",
    );
    // Not their protocol: their own start page instead.
    expect(links(await text("ann", "/screening/999999", 403), "Error page").all[0]).toBe("My cases /annotate");
  });
});
