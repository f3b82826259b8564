/**
 * Sessions, behind one module so that replacing lucia stays a one-file change (docs/decisions/0005-session-library-behind-one-module.md).
 * Session cookie: httpOnly, SameSite=Lax, Secure in production, and no Max-Age or Expires, so it ends when the
 * browser closes (a shared ward computer). On the server a session expires after SESSION_HOURS without use (renewed
 * while in use) and in any case SESSION_MAX_HOURS after login.
 */
import { DrizzleSQLiteAdapter } from "@lucia-auth/adapter-drizzle";
import { createHmac, randomBytes } from "node:crypto";
import { eq, getTableColumns, sql } from "drizzle-orm";
import { Lucia, TimeSpan, type DatabaseSession, type DatabaseUser } from "lucia";
import { appMeta, sessions, users } from "../../db/schema";
import { preparedOn, type Db } from "../platform/db.server";

export const SESSION_HOURS = 12;
export const SESSION_MAX_HOURS = 24;
export const SESSION_COOKIE = "concord_session";

export function secureCookies(): boolean {
  const flag = process.env.CONCORD_SECURE_COOKIE;
  if (flag === "1" || flag === "true") return true;
  if (flag === "0" || flag === "false") return false;
  return process.env.NODE_ENV === "production";
}

/**
 * lucia's drizzle adapter with the one query every request makes — the session and its user, by session id — run
 * from statements prepared once per connection (docs/architecture.md, "Prepared statements"); the same rows, turned
 * into lucia's records the way the adapter does.
 */
class PreparedSessionAdapter extends DrizzleSQLiteAdapter {
  constructor(private readonly database: Db) {
    super(database, sessions, users);
  }

  override async getSessionAndUser(sessionId: string): Promise<[DatabaseSession | null, DatabaseUser | null]> {
    const q = sessionStatements(this.database);
    const session = q.session.get({ sessionId });
    const user = q.user.get({ sessionId });
    return [session ? sessionRecord(session) : null, user ? userRecord(user) : null];
  }
}

function sessionRecord({ id, userId, expiresAt, ...attributes }: typeof sessions.$inferSelect): DatabaseSession {
  return { id, userId, expiresAt: new Date(expiresAt * 1000), attributes };
}

function userRecord({ id, ...attributes }: typeof users.$inferSelect): DatabaseUser {
  return { id, attributes };
}

const sessionStatements = preparedOn((db) => {
  const sessionId = sql.placeholder("sessionId");
  return {
    session: db.select().from(sessions).where(eq(sessions.id, sessionId)).prepare(),
    user: db
      .select(getTableColumns(users))
      .from(sessions)
      .innerJoin(users, eq(sessions.userId, users.id))
      .where(eq(sessions.id, sessionId))
      .prepare(),
  };
});

function createLucia(db: Db) {
  return new Lucia(new PreparedSessionAdapter(db), {
    sessionExpiresIn: new TimeSpan(SESSION_HOURS, "h"),
    sessionCookie: { name: SESSION_COOKIE },
    getUserAttributes: (attributes) => ({ username: attributes.username, active: attributes.active }),
    getSessionAttributes: (attributes) => ({ createdAt: attributes.createdAt }),
  });
}

declare module "lucia" {
  interface Register {
    Lucia: ReturnType<typeof createLucia>;
    DatabaseUserAttributes: { username: string; active: boolean | number };
    DatabaseSessionAttributes: { createdAt: number };
  }
}

// lucia's own cookie with `expires: false` lasts 400 days; Concord writes a true browser-session cookie instead.
function cookieAttributes(): string {
  return `Path=/; HttpOnly; SameSite=Lax${secureCookies() ? "; Secure" : ""}`;
}

export function sessionCookie(sessionId: string): string {
  return `${SESSION_COOKIE}=${sessionId}; ${cookieAttributes()}`;
}

export function blankSessionCookie(): string {
  return `${SESSION_COOKIE}=; Max-Age=0; ${cookieAttributes()}`;
}

/** True when the session is past its absolute lifetime, whatever its use. */
export function sessionTooOld(createdAt: number, now = Date.now()): boolean {
  return now - createdAt > SESSION_MAX_HOURS * 3600 * 1000;
}

const instances = new WeakMap<Db, ReturnType<typeof createLucia>>();

export function auth(db: Db) {
  let lucia = instances.get(db);
  if (!lucia) instances.set(db, (lucia = createLucia(db)));
  return lucia;
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
