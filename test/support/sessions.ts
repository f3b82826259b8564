/**
 * Logged-in HTTP sessions against the built app (support/server startApp), for the blinding tests: each user logs in
 * with a plain POST /login, then pages and loader data (`.data`, Remix single fetch) are fetched, and forms posted, with
 * the session cookie and the CSRF token that every page's forms carry. Nothing follows redirects.
 */
import { expect } from "vitest";

/** Logs in and returns the session cookie (`concord_session=…`) to send back. */
export async function logInCookie(baseUrl: string, username: string, password: string): Promise<string> {
  const res = await fetch(`${baseUrl}/login`, {
    method: "POST",
    body: new URLSearchParams({ username, password }),
    redirect: "manual",
  });
  expect(res.status).toBe(302);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("concord_session="));
  expect(cookie, `no session cookie for ${username}`).toBeDefined();
  return cookie!.split(";")[0]!;
}

/**
 * Sessions by username against the app at `baseUrl()` (a function: the app starts in beforeAll). `cookies` and
 * `csrfs` hold each logged-in user's cookie and CSRF token.
 */
export function appSessions(baseUrl: () => string, password: string) {
  const cookies: Record<string, string> = {};
  const csrfs: Record<string, string> = {};

  async function logIn(username: string): Promise<void> {
    cookies[username] = await logInCookie(baseUrl(), username, password);
    // The session's CSRF token, as every page's forms carry it.
    const page = await (await fetch(`${baseUrl()}/`, { headers: { Cookie: cookies[username]! } })).text();
    const m = /name="csrf" value="([^"]+)"/.exec(page);
    expect(m, `no csrf field for ${username}`).not.toBeNull();
    csrfs[username] = m![1]!;
  }

  /** A GET as `username` (null: logged out). */
  function get(username: string | null, path: string): Promise<Response> {
    return fetch(baseUrl() + path, { headers: username ? { Cookie: cookies[username]! } : {}, redirect: "manual" });
  }

  /** A form POST as `username`; the fields must include the CSRF token where the action needs one. */
  function post(
    username: string,
    path: string,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    return fetch(baseUrl() + path, {
      method: "POST",
      headers: { Cookie: cookies[username]!, ...headers },
      body: new URLSearchParams(fields),
      redirect: "manual",
    });
  }

  /** The body of a GET, after checking its status. */
  async function text(username: string | null, path: string, status = 200): Promise<string> {
    const res = await get(username, path);
    const body = await res.text();
    expect(res.status, `${path}: ${body.slice(0, 300)}`).toBe(status);
    return body;
  }

  return { cookies, csrfs, logIn, get, post, text };
}

/** Asserts that none of `secrets` occurs anywhere in `body` (case-insensitive), naming the first that does. */
export function expectAbsent(body: string, secrets: string[], where: string) {
  const lower = body.toLowerCase();
  for (const s of secrets) {
    const at = lower.indexOf(s.toLowerCase());
    expect(at, `${where} contains "${s}": …${body.slice(Math.max(0, at - 80), at + 80)}…`).toBe(-1);
  }
}
