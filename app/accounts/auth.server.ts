/**
 * Sessions, owned by the project in this one module (docs/decisions/0005-session-library-behind-one-module.md,
 * docs/security.md, "Sessions"). The browser holds a random token; the database holds only its SHA-256 (the
 * session's id), so a copy of the database or a backup gives nobody a usable session. Session cookie: httpOnly,
 * SameSite=Lax, Secure in production, and no Max-Age or Expires, so it ends when the browser closes (a shared ward
 * computer). On the server a session expires after SESSION_HOURS without use (renewed while in use, once half of
 * that has passed) and in any case SESSION_MAX_HOURS after login.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { and, eq, getTableColumns, lte, ne, sql } from "drizzle-orm";
import { appMeta, sessions, users } from "../../db/schema";
import { preparedOn, type Db, type DbOrTx } from "../platform/db.server";

export const SESSION_HOURS = 12;
export const SESSION_MAX_HOURS = 24;
export const SESSION_COOKIE = "concord_session";
const SESSION_SECONDS = SESSION_HOURS * 3600;

export function secureCookies(): boolean {
  const flag = process.env.CONCORD_SECURE_COOKIE;
  if (flag === "1" || flag === "true") return true;
  if (flag === "0" || flag === "false") return false;
  return process.env.NODE_ENV === "production";
}

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/** Random bytes as lower-case base32 without padding (RFC 4648's alphabet): ids that are safe in URLs and cookies. */
export function randomBase32(bytes: number): string {
  const data = randomBytes(bytes);
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of data) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

/** The id under which a token's session is stored: its SHA-256, hex. */
function sessionIdOf(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export interface Session {
  /** The stored id (the token's hash): what CSRF tokens and logout use. */
  id: string;
  userId: string;
  /** When it ends without use, in ms. */
  expiresAt: number;
  /** Login time, in ms. */
  createdAt: number;
}

export interface SessionUser {
  id: string;
  username: string;
  active: boolean;
}

function sessionOf(row: typeof sessions.$inferSelect): Session {
  return { id: row.id, userId: row.userId, expiresAt: row.expiresAt * 1000, createdAt: row.createdAt };
}

// The one query every request makes, the session and its user by id, prepared once per connection
// (docs/architecture.md, "Prepared statements").
const sessionStatements = preparedOn((db) => {
  const sessionId = sql.placeholder("sessionId");
  return {
    sessionAndUser: db
      .select({ session: getTableColumns(sessions), username: users.username, active: users.active })
      .from(sessions)
      .innerJoin(users, eq(sessions.userId, users.id))
      .where(eq(sessions.id, sessionId))
      .prepare(),
  };
});

/**
 * A new session for the user: the token goes into the cookie (`sessionCookie`), only its hash into the database.
 * `createdAt` (ms) is the login time the absolute lifetime counts from.
 */
export function createSession(
  db: DbOrTx,
  userId: string,
  createdAt = Date.now(),
  device: SessionDevice = {},
): { token: string; session: Session } {
  const token = randomBase32(25);
  const row = {
    id: sessionIdOf(token),
    userId,
    expiresAt: Math.floor(Date.now() / 1000) + SESSION_SECONDS,
    createdAt,
    lastUsedAt: Date.now(),
    userAgent: device.userAgent ? device.userAgent.slice(0, 200) : null,
    ip: device.ip ?? null,
  };
  db.insert(sessions).values(row).run();
  return { token, session: sessionOf(row) };
}

/** The browser a session is made in, shown to its owner on the account page. */
export interface SessionDevice {
  userAgent?: string | null;
  ip?: string | null;
}

/** A session as its owner sees it on the account page (never the token; the id is its hash). */
export interface SessionListing {
  id: string;
  createdAt: number;
  lastUsedAt: number | null;
  expiresAt: number;
  userAgent: string | null;
  ip: string | null;
}

/** The user's live sessions, the most recently used first. */
export function listUserSessions(db: DbOrTx, userId: string): SessionListing[] {
  const now = Math.floor(Date.now() / 1000);
  return db
    .select()
    .from(sessions)
    .where(eq(sessions.userId, userId))
    .all()
    .filter((r) => r.expiresAt > now && !sessionTooOld(r.createdAt))
    .map((r) => ({
      id: r.id,
      createdAt: r.createdAt,
      lastUsedAt: r.lastUsedAt,
      expiresAt: r.expiresAt * 1000,
      userAgent: r.userAgent,
      ip: r.ip,
    }))
    .sort((a, b) => (b.lastUsedAt ?? b.createdAt) - (a.lastUsedAt ?? a.createdAt));
}

/** Ends one of the user's own sessions; false when the user holds no session with that id. */
export function endUserSession(db: DbOrTx, userId: string, sessionId: string): boolean {
  return (
    db
      .delete(sessions)
      .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId)))
      .run().changes > 0
  );
}

/** Ends every session of the user but one (the one in use): "sign out everywhere else". Returns how many ended. */
export function endOtherSessions(db: DbOrTx, userId: string, keepSessionId: string): number {
  return db
    .delete(sessions)
    .where(and(eq(sessions.userId, userId), ne(sessions.id, keepSessionId)))
    .run().changes;
}

/**
 * Replaces a session by a new one with a new token (docs/security.md, "Sessions"): after a change of password,
 * second factor or roles, whoever held the old token holds nothing. The new session counts its lifetime from now.
 */
export function rotateSession(db: DbOrTx, oldSessionId: string, userId: string, device: SessionDevice = {}): string {
  const old = db.select().from(sessions).where(eq(sessions.id, oldSessionId)).get();
  invalidateSession(db, oldSessionId);
  const { token } = createSession(db, userId, Date.now(), {
    userAgent: device.userAgent ?? old?.userAgent,
    ip: device.ip ?? old?.ip,
  });
  return token;
}

/**
 * The session a cookie's token names and its user, or null when there is none or it has expired (an expired one is
 * removed). A session used after half its idle time has passed is renewed to a full SESSION_HOURS from now.
 */
export function validateSessionToken(db: Db, token: string): { session: Session; user: SessionUser } | null {
  const id = sessionIdOf(token);
  const row = sessionStatements(db).sessionAndUser.get({ sessionId: id });
  if (!row) return null;
  const now = Math.floor(Date.now() / 1000);
  if (row.session.expiresAt <= now) {
    db.delete(sessions).where(eq(sessions.id, id)).run();
    return null;
  }
  const renew = row.session.expiresAt - now < SESSION_SECONDS / 2;
  // The last use is kept to within a minute (one write a minute at most, not one per request).
  const touch = (row.session.lastUsedAt ?? 0) < now * 1000 - 60_000;
  if (renew || touch) {
    if (renew) row.session.expiresAt = now + SESSION_SECONDS;
    db.update(sessions)
      .set({ expiresAt: row.session.expiresAt, lastUsedAt: now * 1000 })
      .where(eq(sessions.id, id))
      .run();
  }
  return {
    session: sessionOf(row.session),
    user: { id: row.session.userId, username: row.username, active: Boolean(row.active) },
  };
}

/** Ends one session (by its stored id). */
export function invalidateSession(db: DbOrTx, sessionId: string): void {
  db.delete(sessions).where(eq(sessions.id, sessionId)).run();
}

/** Ends the session a cookie's token names, if any (logging in over a session ends it). */
export function invalidateSessionToken(db: DbOrTx, token: string): void {
  invalidateSession(db, sessionIdOf(token));
}

/** Ends every session of a user (a reset password, a deactivation). */
export function invalidateUserSessions(db: DbOrTx, userId: string): void {
  db.delete(sessions).where(eq(sessions.userId, userId)).run();
}

/** Removes sessions past their idle expiry. */
export function deleteExpiredSessions(db: DbOrTx): void {
  db.delete(sessions)
    .where(lte(sessions.expiresAt, Math.floor(Date.now() / 1000)))
    .run();
}

/** The session token in a Cookie header, or null. */
export function readSessionCookie(cookieHeader: string): string | null {
  for (const part of cookieHeader.split(";")) {
    const eqAt = part.indexOf("=");
    if (eqAt < 0) continue;
    if (part.slice(0, eqAt).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eqAt + 1).trim();
    return /^[a-z2-7]{1,64}$/.test(value) ? value : null;
  }
  return null;
}

function cookieAttributes(): string {
  return `Path=/; HttpOnly; SameSite=Lax${secureCookies() ? "; Secure" : ""}`;
}

export function sessionCookie(token: string): string {
  return `${SESSION_COOKIE}=${token}; ${cookieAttributes()}`;
}

export function blankSessionCookie(): string {
  return `${SESSION_COOKIE}=; Max-Age=0; ${cookieAttributes()}`;
}

/** True when the session is past its absolute lifetime, whatever its use. */
export function sessionTooOld(createdAt: number, now = Date.now()): boolean {
  return now - createdAt > SESSION_MAX_HOURS * 3600 * 1000;
}

/** The secret behind CSRF tokens: CONCORD_SECRET, else one generated once and kept in the database. */
const secrets = new WeakMap<Db, string>();

export function appSecret(db: Db): string {
  if (process.env.CONCORD_SECRET) return process.env.CONCORD_SECRET;
  const cached = secrets.get(db);
  if (cached) return cached;
  let row = db.select().from(appMeta).where(eq(appMeta.key, "secret")).get();
  if (!row) {
    db.insert(appMeta)
      .values({ key: "secret", value: randomBytes(32).toString("base64url") })
      .onConflictDoNothing()
      .run();
    row = db.select().from(appMeta).where(eq(appMeta.key, "secret")).get()!;
  }
  secrets.set(db, row.value);
  return row.value;
}

/** A per-session CSRF token (HMAC of the session id): forms carry it, actions compare it. */
export function csrfToken(db: Db, sessionId: string): string {
  return createHmac("sha256", appSecret(db))
    .update("csrf:" + sessionId)
    .digest("base64url");
}
