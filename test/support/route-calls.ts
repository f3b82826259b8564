/** Calling a route's loader or action in an integration test, as a signed-in user with the session's CSRF token. */
import { requireUser } from "../../app/accounts/guard.server";
import { login } from "../../app/accounts/users.server";
import type { Db } from "../../app/platform/db.server";
import { TEST_PASSWORD } from "./db";

const BASE = "http://concord.test";

/** Logs `username` in; `post` builds a form post to `path` with the session's cookie and CSRF token. */
export async function signedIn(db: Db, username: string) {
  const r = await login(db, { username, password: TEST_PASSWORD, ip: "192.0.2.1" });
  if (!r.ok) throw new Error(r.error);
  const cookie = r.sessionCookie.split(";")[0]!;
  const user = await requireUser(new Request(`${BASE}/`, { headers: { Cookie: cookie } }));
  const post = (path: string, fields: Record<string, string>) =>
    new Request(BASE + path, {
      method: "POST",
      headers: { Cookie: cookie },
      body: new URLSearchParams({ csrf: user.csrf, ...fields }),
    });
  return { user, post };
}

/** The status and body of what an action returned: a `data()` result, a Response (a redirect: no body), or a value. */
export async function bodyOf(out: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const d = out as { type?: string; data?: Record<string, unknown>; init?: { status?: number } | null };
  if (d && d.type === "DataWithResponseInit") return { status: d.init?.status ?? 200, body: d.data! };
  if (out instanceof Response) {
    const text = await out.text();
    return { status: out.status, body: text ? JSON.parse(text) : {} };
  }
  return { status: 200, body: out as Record<string, unknown> };
}
