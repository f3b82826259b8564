/**
 * The login route and form reading under attack (docs/security.md): redirectTo cannot leave the site whether the
 * visitor is logged in (the loader) or logging in (the action); logging in over a session ends that session; a body
 * that is not a form answers 400, not 500.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessions } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { requireForm, requireUser } from "../../app/accounts/guard.server";
import { action as loginAction, loader as loginLoader } from "../../app/routes/login";
import { login } from "../../app/accounts/users.server";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";

const BASE = "http://concord.test";
let db: Db;
let cleanup: () => void;

beforeAll(async () => {
  ({ db, cleanup } = freshDb());
  await makeUser(db, "ann", ["annotator"]);
});
afterAll(() => cleanup());

async function sessionCookie(): Promise<string> {
  const result = await login(db, { username: "ann", password: TEST_PASSWORD, ip: "192.0.2.1" });
  if (!result.ok) throw new Error(result.error);
  return result.sessionCookie.split(";")[0]!;
}

async function settle(run: () => Promise<unknown>): Promise<Response | unknown> {
  try {
    return await run();
  } catch (e) {
    return e;
  }
}

function postLogin(fields: Record<string, string>, cookie?: string): Request {
  return new Request(`${BASE}/login`, {
    method: "POST",
    headers: cookie ? { Cookie: cookie } : {},
    body: new URLSearchParams(fields),
  });
}

const HOSTILE = ["/%2e%2e//evil.example", "/.//x", "/a/..//x", "/%2e//x", "/%2E%2E//evil.example", "/a/.%2e//x"];
const args = (request: Request) => ({ request, params: {}, context: { ip: "192.0.2.1" } }) as never;

describe("login redirectTo", () => {
  it.each(HOSTILE)("a logged-in visitor to /login?redirectTo=%s is sent home", async (to) => {
    const cookie = await sessionCookie();
    const url = `${BASE}/login?${new URLSearchParams({ redirectTo: to })}`;
    const res = (await settle(() => loginLoader(args(new Request(url, { headers: { Cookie: cookie } }))))) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("/");
  });

  it.each(HOSTILE)("logging in with redirectTo=%s is sent home", async (to) => {
    const res = (await settle(() =>
      loginAction(args(postLogin({ username: "ann", password: TEST_PASSWORD, redirectTo: to }))),
    )) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("/");
  });
});

describe("logging in over an existing session", () => {
  it("ends the old session", async () => {
    const old = await sessionCookie();
    const oldId = old.split("=")[1]!;
    const res = (await settle(() =>
      loginAction(args(postLogin({ username: "ann", password: TEST_PASSWORD }, old))),
    )) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get("Set-Cookie")).toMatch(/^concord_session=/);
    expect(res.headers.get("Set-Cookie")).not.toContain(oldId);
    expect(db.select().from(sessions).where(eq(sessions.id, oldId)).get()).toBeUndefined();
    const stale = await settle(() => requireUser(new Request(`${BASE}/annotate`, { headers: { Cookie: old } })));
    expect((stale as Response).status).toBe(302);
  });
});

describe("malformed bodies answer 400", () => {
  const bodies: [string, RequestInit][] = [
    ["JSON sent as a form", { body: '{"username":"ann"}', headers: { "Content-Type": "application/json" } }],
    ["an odd content type", { body: "username=ann", headers: { "Content-Type": "application/x-concord" } }],
    ["multipart without a boundary", { body: "--x\r\n", headers: { "Content-Type": "multipart/form-data" } }],
    [
      "broken multipart",
      {
        body: '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated',
        headers: { "Content-Type": "multipart/form-data; boundary=b" },
      },
    ],
  ];

  it.each(bodies)("the login action: %s", async (_, init) => {
    const res = await settle(() => loginAction(args(new Request(`${BASE}/login`, { method: "POST", ...init }))));
    expect(res).toBeInstanceOf(Response);
    expect((res as Response).status).toBe(400);
  });

  it.each(bodies)("every other action (requireForm): %s", async (_, init) => {
    const cookie = await sessionCookie();
    const user = await requireUser(new Request(`${BASE}/annotate`, { headers: { Cookie: cookie } }));
    const headers = { ...(init.headers as Record<string, string>), Cookie: cookie };
    const res = await settle(() =>
      requireForm(new Request(`${BASE}/annotate/1`, { method: "POST", ...init, headers }), user),
    );
    expect(res).toBeInstanceOf(Response);
    expect((res as Response).status).toBe(400);
  });
});
