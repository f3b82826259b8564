/**
 * The one permission module (docs/architecture.md#roles-and-blinding): a logged-out visitor is redirected to login and comes back, a user
 * without the role gets 403, every form post carries the session's CSRF token. Requests carry the cookie login() issued.
 */
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { appMeta, sessions, users } from "../../db/schema";
import { appSecret, csrfToken, SESSION_HOURS, SESSION_MAX_HOURS } from "../../app/accounts/auth.server";
import type { Db } from "../../app/platform/db.server";
import {
  clientIp,
  getUser,
  invariantFound,
  requireForm,
  requireRole,
  requireUser,
} from "../../app/accounts/guard.server";
import { login, logout, type UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";

const BASE = "http://concord.test";

let db: Db;
let cleanup: () => void;
let admin: UserView;
let annotator: UserView;
let adjudicator: UserView;
let adminCookie: string;
let annotatorCookie: string;

/** The `name=value` part of a Set-Cookie header, as a browser sends it back. */
function cookieOf(setCookie: string): string {
  return setCookie.split(";")[0]!;
}

async function loginCookie(username: string): Promise<string> {
  const result = await login(db, { username, password: TEST_PASSWORD, ip: "192.0.2.1" });
  if (!result.ok) throw new Error(result.error);
  return cookieOf(result.sessionCookie);
}

/** The id a cookie's session is stored under: the token's SHA-256 (the database never holds the token). */
function storedId(cookie: string): string {
  return createHash("sha256").update(cookie.split("=")[1]!).digest("hex");
}

function get(path: string, cookie?: string): Request {
  return new Request(BASE + path, { headers: cookie ? { Cookie: `theme=dark; ${cookie}` } : {} });
}

function post(path: string, cookie: string, fields: Record<string, string>): Request {
  return new Request(BASE + path, { method: "POST", headers: { Cookie: cookie }, body: new URLSearchParams(fields) });
}

/** Runs a guard that must throw a Response, and returns it. */
async function thrown(promise: Promise<unknown>): Promise<Response> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof Response) return e;
    throw e;
  }
  throw new Error("expected the guard to throw a Response");
}

beforeAll(async () => {
  ({ db, cleanup } = freshDb());
  [admin, annotator, adjudicator] = await Promise.all([
    makeUser(db, "boss", ["admin"]),
    makeUser(db, "ann", ["annotator"]),
    makeUser(db, "judy", ["adjudicator", "annotator"]),
  ]);
  [adminCookie, annotatorCookie] = await Promise.all([loginCookie("boss"), loginCookie("ann")]);
});
afterAll(() => cleanup());

describe("requireUser", () => {
  it("redirects a logged-out visitor to the login page with the path to come back to", async () => {
    const response = await thrown(requireUser(get("/admin/users?page=2&q=a b")));
    expect(response.status).toBe(302);
    const location = response.headers.get("Location")!;
    expect(location).toBe("/login?redirectTo=%2Fadmin%2Fusers%3Fpage%3D2%26q%3Da%2520b");
    expect(new URL(location, BASE).searchParams.get("redirectTo")).toBe("/admin/users?page=2&q=a%20b");
  });

  it("redirects to the bare login page from the home page", async () => {
    const response = await thrown(requireUser(get("/")));
    expect(response.headers.get("Location")).toBe("/login");
  });

  it("returns the user, their roles and the session's CSRF token", async () => {
    const user = await requireUser(get("/annotate", annotatorCookie));
    expect(user).toMatchObject({ id: annotator.id, username: "ann", roles: ["annotator"], active: true });
    expect(user.csrf).toBe(csrfToken(db, user.sessionId));
    expect(user.sessionId).toBe(storedId(annotatorCookie));
    // The database holds the token's hash only: a copy of it gives nobody a session.
    const stored = db
      .select()
      .from(sessions)
      .all()
      .map((r) => r.id);
    expect(stored).toContain(user.sessionId);
    expect(stored).not.toContain(annotatorCookie.split("=")[1]);
    expect(await getUser(get("/annotate", `concord_session=${user.sessionId}`))).toBeNull();
  });

  it("redirects for a forged, expired or ended session", async () => {
    expect((await thrown(requireUser(get("/admin", "concord_session=forged-session-id")))).status).toBe(302);

    const expiring = await loginCookie("ann");
    const id = storedId(expiring);
    db.update(sessions)
      .set({ expiresAt: Math.floor(Date.now() / 1000) - 1 })
      .where(eq(sessions.id, id))
      .run();
    expect((await thrown(requireUser(get("/admin", expiring)))).status).toBe(302);
    expect(db.select().from(sessions).where(eq(sessions.id, id)).get()).toBeUndefined();

    const ended = await loginCookie("ann");
    await logout(db, storedId(ended));
    expect((await thrown(requireUser(get("/admin", ended)))).status).toBe(302);
  });

  it("renews a session that is in use once half its lifetime has passed", async () => {
    const cookie = await loginCookie("ann");
    const id = storedId(cookie);
    const soon = Math.floor(Date.now() / 1000) + 60 * 60;
    db.update(sessions).set({ expiresAt: soon }).where(eq(sessions.id, id)).run();
    await requireUser(get("/annotate", cookie));
    const renewed = db.select().from(sessions).where(eq(sessions.id, id)).get()!.expiresAt;
    expect(renewed).toBeGreaterThan(soon);
    expect(renewed).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + SESSION_HOURS * 3600 - 60);
  });

  it("ends a session 24 hours after login however active it is, with a browser-session cookie", async () => {
    const result = await login(db, { username: "ann", password: TEST_PASSWORD, ip: "192.0.2.1" });
    if (!result.ok) throw new Error(result.error);
    // No Max-Age or Expires: the cookie goes when the browser closes (a library's default had lasted 400 days).
    expect(result.sessionCookie).not.toMatch(/max-age|expires/i);
    expect(result.sessionCookie).toMatch(/HttpOnly/);
    expect(result.sessionCookie).toMatch(/SameSite=Lax/);
    const cookie = cookieOf(result.sessionCookie);
    const id = storedId(cookie);
    expect((await getUser(get("/annotate", cookie)))?.username).toBe("ann");
    db.update(sessions)
      .set({ createdAt: Date.now() - (SESSION_MAX_HOURS * 3600 + 60) * 1000 })
      .where(eq(sessions.id, id))
      .run();
    expect(await getUser(get("/annotate", cookie))).toBeNull();
    expect(db.select().from(sessions).where(eq(sessions.id, id)).get()).toBeUndefined();
  });

  it("treats a deactivated user's surviving session as logged out", async () => {
    const cookie = await loginCookie("judy");
    // setActive also deletes sessions; this checks the guard does not rely on that alone.
    db.update(users).set({ active: false }).where(eq(users.id, adjudicator.id)).run();
    try {
      expect(await getUser(get("/adjudicate", cookie))).toBeNull();
      expect((await thrown(requireUser(get("/adjudicate", cookie)))).status).toBe(302);
    } finally {
      db.update(users).set({ active: true }).where(eq(users.id, adjudicator.id)).run();
    }
    expect((await getUser(get("/adjudicate", cookie)))?.id).toBe(adjudicator.id);
  });
});

describe("requireRole", () => {
  it("answers 403 to a user without the role", async () => {
    const response = await thrown(requireRole(get("/admin/users", annotatorCookie), "admin"));
    expect(response.status).toBe(403);
    expect(await response.text()).toBe("You do not have access to this page.");
  });

  it("lets in a user who holds one of the roles", async () => {
    expect((await requireRole(get("/admin/users", adminCookie), "admin")).id).toBe(admin.id);
    expect((await requireRole(get("/x", annotatorCookie), ["adjudicator", "annotator"])).id).toBe(annotator.id);
    expect((await thrown(requireRole(get("/x", adminCookie), ["adjudicator", "rater"]))).status).toBe(403);
  });

  it("redirects a logged-out visitor rather than answering 403", async () => {
    const response = await thrown(requireRole(get("/admin/users"), "admin"));
    expect(response.status).toBe(302);
    expect(response.headers.get("Location")).toBe("/login?redirectTo=%2Fadmin%2Fusers");
  });
});

describe("requireForm (CSRF)", () => {
  it("returns the form when it carries the session's token", async () => {
    const user = await requireUser(get("/admin/users", adminCookie));
    const form = await requireForm(post("/admin/users", adminCookie, { csrf: user.csrf, intent: "create" }), user);
    expect(form.get("intent")).toBe("create");
  });

  it("answers 403 when the token is missing, wrong or another session's", async () => {
    const user = await requireUser(get("/admin/users", adminCookie));
    const otherSession = await requireUser(get("/admin/users", await loginCookie("boss")));
    expect(otherSession.csrf).not.toBe(user.csrf);
    const attempts: Record<string, string>[] = [
      { intent: "create" },
      { csrf: "", intent: "create" },
      { csrf: user.csrf.slice(0, -1) + (user.csrf.endsWith("x") ? "y" : "x") },
      { csrf: otherSession.csrf },
    ];
    for (const fields of attempts) {
      const response = await thrown(requireForm(post("/admin/users", adminCookie, fields), user));
      expect(response.status).toBe(403);
      expect(await response.text()).toMatch(/did not come from this site/);
    }
  });

  it("derives tokens from a secret kept once in the database, or from CONCORD_SECRET", () => {
    const secret = appSecret(db);
    expect(secret.length).toBeGreaterThanOrEqual(40);
    expect(appSecret(db)).toBe(secret);
    expect(db.select().from(appMeta).where(eq(appMeta.key, "secret")).get()?.value).toBe(secret);
    const token = csrfToken(db, "session-a");
    expect(csrfToken(db, "session-a")).toBe(token);
    expect(csrfToken(db, "session-b")).not.toBe(token);
    const saved = process.env.CONCORD_SECRET;
    process.env.CONCORD_SECRET = "configured-secret";
    try {
      expect(csrfToken(db, "session-a")).not.toBe(token);
    } finally {
      if (saved === undefined) delete process.env.CONCORD_SECRET;
      else process.env.CONCORD_SECRET = saved;
    }
  });
});

describe("helpers", () => {
  afterEach(() => {
    delete process.env.CONCORD_TRUST_PROXY;
  });

  it("invariantFound answers 404 for a missing row and passes a present one through", async () => {
    expect(invariantFound(0)).toBe(0);
    const response = (() => {
      try {
        invariantFound(null, "No such case.");
      } catch (e) {
        return e as Response;
      }
      throw new Error("expected a 404");
    })();
    expect(response.status).toBe(404);
    expect(await response.text()).toBe("No such case.");
  });

  it("clientIp takes the address Express computed, never a client-written header", () => {
    expect(clientIp("10.0.0.1")).toBe("10.0.0.1");
    expect(clientIp(undefined)).toBe("unknown");
  });
});
