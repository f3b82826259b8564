import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import { ROLES, userRoles, users, type Role } from "../../db/schema";
import {
  blankSessionCookie,
  createSession,
  deleteExpiredSessions,
  invalidateSession,
  invalidateSessionToken,
  invalidateUserSessions,
  randomBase32,
  rotateSession,
  sessionCookie,
} from "./auth.server";
import { challengeCookie, createChallenge } from "./second-factor.server";
import { preparedOn, type Db, type DbOrTx } from "../platform/db.server";
import { finishWindow, prefixRange, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import { recordEvent } from "../audit/audit.server";
import { hashPassword, needsRehash, NO_PASSWORD, PASSWORD_MIN_LENGTH, verifyPassword } from "./password.server";
import { throttled } from "./login-throttle.server";
import { passwordAllowed, passwordSettings } from "./sign-in-config";
import { ServiceError } from "../platform/service-error";

export const UsernameSchema = z
  .string()
  .trim()
  .min(2, "Username must have at least 2 characters.")
  .max(64, "Username must have at most 64 characters.")
  .regex(/^[a-z0-9._-]+$/i, "Username may contain only letters, digits, dot, underscore and hyphen.");
export const PasswordSchema = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `Password must have at least ${PASSWORD_MIN_LENGTH} characters.`)
  .max(256, "Password must have at most 256 characters.");
export const RolesSchema = z.array(z.enum(ROLES)).min(1, "Choose at least one role.");

export interface UserView {
  id: string;
  username: string;
  displayName: string;
  active: boolean;
  roles: Role[];
  createdAt: number;
  /** When the user turned the second factor on; null when it is off. */
  totpEnabledAt: number | null;
}

function audit(db: DbOrTx, actorId: string | null, entityId: string, action: string, changes: object) {
  recordEvent(db, { actorId, entity: "user", entityId, action, changes });
}

const byId = preparedOn((db) => ({
  user: db
    .select()
    .from(users)
    .where(eq(users.id, sql.placeholder("id")))
    .prepare(),
  roles: db
    .select({ role: userRoles.role })
    .from(userRoles)
    .where(eq(userRoles.userId, sql.placeholder("id")))
    .prepare(),
}));

export function getUserById(db: Db, id: string): UserView | null {
  const q = byId(db);
  const row = q.user.get({ id });
  if (!row) return null;
  const roles = q.roles.all({ id });
  return {
    id: row.id,
    username: row.username,
    displayName: row.displayName,
    active: Boolean(row.active),
    roles: ROLES.filter((r) => roles.some((x) => x.role === r)),
    createdAt: row.createdAt,
    totpEnabledAt: row.totpEnabledAt,
  };
}

export function getUserByUsername(db: Db, username: string): UserView | null {
  const row = db.select({ id: users.id }).from(users).where(eq(users.username, username.trim().toLowerCase())).get();
  return row ? getUserById(db, row.id) : null;
}

export function listUsers(db: Db): UserView[] {
  const rows = db.select().from(users).orderBy(asc(users.username)).all();
  const roleRows = db.select().from(userRoles).all();
  return rows.map((row) => ({
    id: row.id,
    username: row.username,
    displayName: row.displayName,
    active: Boolean(row.active),
    roles: ROLES.filter((r) => roleRows.some((x) => x.userId === row.id && x.role === r)),
    createdAt: row.createdAt,
    totpEnabledAt: row.totpEnabledAt,
  }));
}

export const USERS_WINDOW = {
  prefix: "",
  sorts: ["username"],
  defaultSort: "username",
  filters: ["q", "role", "status"],
} as const satisfies WindowSpec<string, string>;

/**
 * A window of the users (docs/architecture.md, "Pages are windows"): by username (its unique index, whose range is
 * also the prefix filter), optionally of one role (user_roles' key, tried per row) or one status. Their roles are
 * read for the window's rows only.
 */
export function usersWindow(
  db: Db,
  params: URLSearchParams,
): ListWindow<UserView, "username", "q" | "role" | "status"> {
  const w = readWindow(params, USERS_WINDOW, 2);
  const role = (ROLES as readonly string[]).includes(w.filters.role) ? w.filters.role : null;
  const status = w.filters.status === "active" || w.filters.status === "deactivated" ? w.filters.status : null;
  w.filters.role = role ?? "";
  w.filters.status = status ?? "";
  const [lo, hi] = prefixRange(w.filters.q.toLowerCase());
  const filter = and(
    w.filters.q ? sql`${users.username} >= ${lo} and ${users.username} < ${hi}` : undefined,
    role ? sql`exists (select 1 from user_roles r where r.user_id = ${users.id} and r.role = ${role})` : undefined,
    status ? eq(users.active, status === "active") : undefined,
  );
  const k = keyset(w, [users.username, users.id]);
  const rows = db
    .select({
      id: users.id,
      username: users.username,
      displayName: users.displayName,
      active: users.active,
      createdAt: users.createdAt,
      totpEnabledAt: users.totpEnabledAt,
    })
    .from(users)
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all();
  const roleRows = rows.length
    ? db
        .select()
        .from(userRoles)
        .where(
          inArray(
            userRoles.userId,
            rows.map((r) => r.id),
          ),
        )
        .all()
    : [];
  const total = db.select({ n: count() }).from(users).where(filter).get()!.n;
  return finishWindow(
    w,
    rows.map((row) => ({
      ...row,
      active: Boolean(row.active),
      roles: ROLES.filter((r) => roleRows.some((x) => x.userId === row.id && x.role === r)),
    })),
    total,
    (r) => [r.username, r.id],
  );
}

export async function createUser(
  db: Db,
  // password null: a user with no Concord password, who signs in only through the institution's provider
  // (docs/security.md, "Single sign-on").
  input: { username: string; displayName?: string; password: string | null; roles: Role[]; actorId?: string | null },
): Promise<UserView> {
  const username = UsernameSchema.parse(input.username).toLowerCase();
  if (input.password !== null) PasswordSchema.parse(input.password);
  const roles = RolesSchema.parse(input.roles);
  if (getUserByUsername(db, username)) throw new ServiceError(`A user named "${username}" already exists.`, "username");
  const passwordHash = input.password === null ? NO_PASSWORD : await hashPassword(input.password);
  return insertUser(db, { ...input, username, roles, passwordHash });
}

/**
 * The synchronous half of createUser, for a caller that hashed the password first and writes the user inside its
 * own transaction (the demo seed, which is all or nothing: docs/reliability.md).
 */
export function insertUser(
  db: DbOrTx,
  input: { username: string; displayName?: string; passwordHash: string; roles: Role[]; actorId?: string | null },
): UserView {
  const username = UsernameSchema.parse(input.username).toLowerCase();
  const roles = RolesSchema.parse(input.roles);
  const id = randomBase32(10);
  db.transaction((tx) => {
    if (getUserByUsername(tx as unknown as Db, username))
      throw new ServiceError(`A user named "${username}" already exists.`, "username");
    tx.insert(users)
      .values({
        id,
        username,
        displayName: input.displayName?.trim() || username,
        passwordHash: input.passwordHash,
        createdAt: Date.now(),
      })
      .run();
    for (const role of new Set(roles)) tx.insert(userRoles).values({ userId: id, role }).run();
    audit(tx, input.actorId ?? null, id, "create", { username, roles });
  });
  return getUserById(db as Db, id)!;
}

/**
 * Sets a user's roles. A change of privilege ends the user's sessions (they log in again with the new roles); when
 * admins change their own roles, their session is replaced by a new one instead, whose cookie is returned.
 */
export function setRoles(
  db: Db,
  input: { userId: string; roles: Role[]; actorId: string; actorSessionId?: string },
): { sessionCookie: string } | null {
  const roles = RolesSchema.parse(input.roles);
  const before = getUserById(db, input.userId);
  if (!before) throw new ServiceError("No such user.", undefined, 404);
  if (input.userId === input.actorId && before.roles.includes("admin") && !roles.includes("admin"))
    throw new ServiceError("You cannot remove your own admin role.", "roles");
  const same = [...new Set(roles)].sort().join() === [...before.roles].sort().join();
  return db.transaction((tx) => {
    tx.delete(userRoles).where(eq(userRoles.userId, input.userId)).run();
    for (const role of new Set(roles)) tx.insert(userRoles).values({ userId: input.userId, role }).run();
    audit(tx, input.actorId, input.userId, "set_roles", { roles: [before.roles, roles] });
    if (same) return null;
    if (input.userId !== input.actorId) {
      invalidateUserSessions(tx, input.userId);
      return null;
    }
    if (!input.actorSessionId) return null;
    return { sessionCookie: sessionCookie(rotateSession(tx, input.actorSessionId, input.actorId)) };
  });
}

export async function resetPassword(db: Db, input: { userId: string; password: string; actorId: string | null }) {
  PasswordSchema.parse(input.password);
  if (!getUserById(db, input.userId)) throw new ServiceError("No such user.", undefined, 404);
  const passwordHash = await hashPassword(input.password);
  db.transaction((tx) => {
    tx.update(users).set({ passwordHash }).where(eq(users.id, input.userId)).run();
    // A reset ends every session of that user: whoever knew the old password is logged out.
    invalidateUserSessions(tx, input.userId);
    audit(tx, input.actorId, input.userId, "reset_password", {});
  });
}

/** Deactivated users cannot log in and lose their sessions; their work and assignments are kept. */
export function setActive(db: Db, input: { userId: string; active: boolean; actorId: string | null }): void {
  const before = getUserById(db, input.userId);
  if (!before) throw new ServiceError("No such user.", undefined, 404);
  if (!input.active && input.userId === input.actorId) throw new ServiceError("You cannot deactivate yourself.");
  db.transaction((tx) => {
    tx.update(users).set({ active: input.active }).where(eq(users.id, input.userId)).run();
    if (!input.active) invalidateUserSessions(tx, input.userId);
    audit(tx, input.actorId, input.userId, input.active ? "activate" : "deactivate", {
      active: [before.active, input.active],
    });
  });
}

export { FREE_FAILURES, retryDelayMs } from "./login-throttle.server";

export type LoginResult =
  | { ok: true; sessionCookie: string; user: UserView }
  /**
   * The password was right and the account has a second factor: no session yet, the code step comes next
   * (second-factor.server.ts). A caller that knows nothing of it sees a failed login.
   */
  | { ok: false; error: string; challengeCookie: string; throttled?: undefined }
  | { ok: false; error: string; throttled?: boolean };

export async function login(
  db: Db,
  input: {
    username: string;
    password: string;
    ip: string;
    now?: number;
    previousSessionToken?: string | null;
    userAgent?: string | null;
    /** Where the login goes afterwards (kept across the code step of a second factor). */
    redirectTo?: string;
  },
): Promise<LoginResult> {
  const username = input.username.trim().toLowerCase();
  // Local passwords switched off: refused before any check, except the break-glass admin (docs/security.md,
  // "Single sign-on"; docs/decisions/0017-local-passwords-off-and-break-glass.md).
  if (!passwordAllowed(username))
    return { ok: false, error: "Passwords are switched off here: sign in with your institution's account." };
  const breakGlass = !passwordSettings().on;
  // Throttled by (account, address), counting only finished failures (login-throttle.server.ts).
  const attempt = await throttled(db, { username, ip: input.ip, now: input.now }, async () => {
    const row = db.select().from(users).where(eq(users.username, username)).get();
    // Verify against a dummy hash when the user does not exist, so timing does not reveal which usernames exist.
    const valid = await verifyPassword(row?.passwordHash ?? DUMMY_HASH, input.password);
    // One message for every failure: a deactivated account is not confirmed even to someone who knows its password.
    return { failed: !row || !valid || !row.active, row };
  });
  if ("waitMs" in attempt) {
    const seconds = Math.ceil(attempt.waitMs / 1000);
    return {
      ok: false,
      throttled: true,
      error: `Too many failed attempts. Wait ${seconds} second${seconds === 1 ? "" : "s"} and try again.`,
    };
  }
  const row = attempt.row;
  if (attempt.failed || !row) return { ok: false, error: "Wrong username or password." };
  // The break-glass account works only while it is an admin's, and every use of it is an audit event.
  if (breakGlass) {
    const admin = db
      .select({ role: userRoles.role })
      .from(userRoles)
      .where(and(eq(userRoles.userId, row.id), eq(userRoles.role, "admin")))
      .get();
    if (!admin) return { ok: false, error: "Wrong username or password." };
    recordEvent(db, { actorId: row.id, entity: "user", entityId: row.id, action: "break_glass_login", changes: {} });
  }
  // A hash made with weaker scrypt parameters is replaced now that the password is known (docs/security.md).
  if (needsRehash(row.passwordHash)) {
    const passwordHash = await hashPassword(input.password);
    db.update(users)
      .set({ passwordHash })
      .where(and(eq(users.id, row.id), eq(users.passwordHash, row.passwordHash)))
      .run();
  }
  // With a second factor, the password only opens the code step (docs/security.md, "Second factor").
  if (row.totpEnabledAt !== null && row.totpSecret) {
    const challenge = db.transaction((tx) => createChallenge(tx, row.id, input.redirectTo ?? "/", input.now));
    return {
      ok: false,
      error: "Enter the code from your authenticator app.",
      challengeCookie: challengeCookie(challenge),
    };
  }
  // Logging in over a session ends it: the browser holds one session at a time (docs/security.md, "Sessions").
  const { token } = db.transaction((tx) => {
    if (input.previousSessionToken) invalidateSessionToken(tx, input.previousSessionToken);
    deleteExpiredSessions(tx);
    return createSession(tx, row.id, input.now ?? Date.now(), { userAgent: input.userAgent, ip: input.ip });
  });
  return { ok: true, sessionCookie: sessionCookie(token), user: getUserById(db, row.id)! };
}

const DUMMY_HASH = "scrypt$131072$8$1$AAAAAAAAAAAAAAAAAAAAAA==$JlQmhdG1h+PhZhxa+R8mZ5lHPF1e1JupmHLm8u2BnBM=";

export async function logout(db: Db, sessionId: string): Promise<string> {
  invalidateSession(db, sessionId);
  return blankSessionCookie();
}

/**
 * Usernames of the given user ids (the audit trail records ids; admins read names). Ids that name no user are
 * left out, so any string of an event can be offered.
 */
export function usernamesOf(db: Db, ids: readonly string[]): Record<string, string> {
  const unique = [...new Set(ids)];
  if (!unique.length) return {};
  const out: Record<string, string> = {};
  for (let i = 0; i < unique.length; i += 500) {
    const rows = db
      .select({ id: users.id, username: users.username })
      .from(users)
      .where(inArray(users.id, unique.slice(i, i + 500)))
      .all();
    for (const r of rows) out[r.id] = r.username;
  }
  return out;
}
