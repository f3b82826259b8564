/**
 * The one permission module (docs/architecture.md#roles-and-blinding): every loader and action starts with requireUser or requireRole.
 * Nested loaders run independently, so a guard in a layout route protects nothing on its own.
 */
import { redirect } from "@remix-run/node";
import { timingSafeEqual } from "node:crypto";
import type { Role } from "../../db/schema";
import { getUserById, type UserView } from "./users.server";
import { csrfToken, invalidateSession, readSessionCookie, sessionTooOld, validateSessionToken } from "./auth.server";
import { getDb } from "../platform/db.server";
import { mustSetUpSecondFactor } from "./second-factor.server";
import { parseId } from "../platform/forms";
import { readForm } from "../platform/read-form.server";

export interface AuthUser extends UserView {
  sessionId: string;
  csrf: string;
}

/** The session token the request's cookie carries, or null. */
export function sessionTokenFrom(request: Request): string | null {
  return readSessionCookie(request.headers.get("Cookie") ?? "");
}

/** The logged-in, active user, or null. Validating a session also renews it while in use. */
export async function getUser(request: Request): Promise<AuthUser | null> {
  const token = sessionTokenFrom(request);
  if (!token) return null;
  const db = getDb();
  const found = validateSessionToken(db, token);
  if (!found || !found.user.active) return null;
  const { session, user } = found;
  if (sessionTooOld(session.createdAt)) {
    invalidateSession(db, session.id);
    return null;
  }
  const view = getUserById(db, user.id);
  if (!view) return null;
  return { ...view, sessionId: session.id, csrf: csrfToken(db, session.id) };
}

/** Pages a user whose role requires a second factor may still open before setting it up: the account and help. */
const beforeSecondFactor = (path: string) => path === "/account" || path === "/help" || path.startsWith("/help/");

/**
 * The user, or a redirect to the login page that comes back here afterwards. A user whose role requires a second
 * factor they have not set up is sent to their account page by every page load (docs/security.md, "Second
 * factor"); form posts and saves still go through, so that work under way when an admin turns the rule on is saved.
 */
export async function requireUser(request: Request): Promise<AuthUser> {
  const user = await getUser(request);
  const url = new URL(request.url);
  if (!user) {
    const back = url.pathname + url.search;
    throw redirect(`/login${back && back !== "/" ? `?redirectTo=${encodeURIComponent(back)}` : ""}`);
  }
  if (request.method === "GET" && !beforeSecondFactor(url.pathname) && mustSetUpSecondFactor(getDb(), user))
    throw redirect("/account?setup=second-factor");
  return user;
}

export function forbidden(message = "You do not have access to this page."): Response {
  return new Response(message, { status: 403, statusText: "Forbidden" });
}

export function notFound(message = "Not found."): Response {
  return new Response(message, { status: 404, statusText: "Not Found" });
}

/** The user if they hold one of the roles; otherwise 403 (or the login redirect when logged out). */
export async function requireRole(request: Request, roles: Role | Role[]): Promise<AuthUser> {
  const user = await requireUser(request);
  const wanted = Array.isArray(roles) ? roles : [roles];
  if (!wanted.some((r) => user.roles.includes(r))) throw forbidden();
  return user;
}

/**
 * Reads a form post and checks its CSRF token against the session's. Every action calls this (via requireForm)
 * before looking at any field. The server also refuses cross-origin posts by their Origin header (server.js).
 */
export async function requireForm(request: Request, user: AuthUser): Promise<FormData> {
  const form = await readForm(request);
  const sent = String(form.get("csrf") ?? "");
  const a = Buffer.from(sent);
  const b = Buffer.from(user.csrf);
  if (a.length !== b.length || !timingSafeEqual(a, b))
    throw new Response("The form has expired or did not come from this site. Reload the page and try again.", {
      status: 403,
    });
  return form;
}

/** An invariant for rows that are missing or not the user's: always 404, so ids leak nothing. */
export function invariantFound<T>(value: T | null | undefined, message = "Not found."): T {
  if (value === null || value === undefined) throw notFound(message);
  return value;
}

/** The row a route's id parameter names, or 404; a parameter that is not a positive whole number names nothing. */
export function requireById<T>(
  param: string | undefined,
  find: (id: number) => T | null | undefined,
  message?: string,
): T {
  const id = parseId(param);
  return invariantFound(id === null ? null : find(id), message);
}

/**
 * Client address for login throttling: the address Express computed (server.js; behind a proxy only the proxy's own
 * X-Forwarded-For entry is trusted, CONCORD_TRUST_PROXY=1), never a header a client can write.
 */
export function clientIp(socketIp: string | undefined): string {
  return socketIp ?? "unknown";
}
