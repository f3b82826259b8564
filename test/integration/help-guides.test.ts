/**
 * The user guides in the app (app/routes/help_.guides.$guide.tsx, app/help/guides.server.ts): each guide of
 * docs/guides/ is served, rendered, to every logged-in user whatever their roles; a visitor who is not logged in is
 * sent to the login page; an unknown guide is a 404. The Markdown is built into the app (Vite `?raw`), so the page
 * is the file's text as it was at build time.
 */
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { login } from "../../app/accounts/users.server";
import { GUIDES } from "../../app/help/domain/guides";
import { loader } from "../../app/routes/help_.guides.$guide";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";

let db: Db;
let cleanup: () => void;

beforeEach(() => {
  ({ db, cleanup } = freshDb());
});
afterEach(() => cleanup());

async function cookieOf(username: string): Promise<string> {
  const r = await login(db, { username, password: TEST_PASSWORD, ip: "192.0.2.1" });
  if (!r.ok) throw new Error(r.error);
  return r.sessionCookie.split(";")[0]!;
}

const call = (guide: string, cookie?: string) =>
  loader({
    request: new Request(`http://concord.test/help/guides/${guide}`, { headers: cookie ? { Cookie: cookie } : {} }),
    params: { guide },
    context: {},
  });

async function thrown(p: Promise<unknown>): Promise<Response> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Response) return e;
    throw e;
  }
  throw new Error("the loader answered instead of throwing");
}

describe("a user guide", () => {
  it("is served to a user of any role, every guide, rendered from its file", async () => {
    await makeUser(db, "rita", ["rater"]);
    const cookie = await cookieOf("rita");
    for (const g of GUIDES) {
      const page = await call(g.id, cookie);
      expect(page.id).toBe(g.id);
      expect(page.title).toBe(g.title);
      expect(page.html).toContain(`>${g.title}</h1>`);
      // The last heading of the file is on the page: the whole guide, not a part.
      const headings = readFileSync(g.file, "utf8").match(/^## .+$/gm)!;
      expect(headings.length).toBeGreaterThan(2);
      expect(page.html).toContain(
        `>${headings
          .at(-1)!
          .slice(3)
          .replace(/`([^`]+)`/g, "<code>$1</code>")}</h2>`,
      );
      // Links between guides stay in the app.
      expect(page.html).toMatch(/href="\/help\/guides\/(annotator|adjudicator|rater|admin)[#"]/);
    }
  });

  it("sends a visitor who is not logged in to the login page", async () => {
    const res = await thrown(call("annotator"));
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`/login?redirectTo=${encodeURIComponent("/help/guides/annotator")}`);
  });

  it("answers 404 for a guide that does not exist", async () => {
    await makeUser(db, "ann", ["annotator"]);
    const cookie = await cookieOf("ann");
    for (const name of ["nobody", "..%2Fsecurity", "ADMIN"])
      expect((await thrown(call(name, cookie))).status).toBe(404);
  });
});
