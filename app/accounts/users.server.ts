import { and, asc, count, eq, gt, lt } from "drizzle-orm";
import { generateIdFromEntropySize } from "lucia";
import { z } from "zod";
import { loginFailures, ROLES, sessions, userRoles, users, type Role } from "../../db/schema";
import { auth, blankSessionCookie, sessionCookie } from "./auth.server";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { hashPassword, PASSWORD_MIN_LENGTH, verifyPassword } from "./password.server";

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
}

export class ServiceError extends Error {
  constructor(
    message: string,
    public field?: string,
    public status = 400,
  ) {
    super(message);
  }
}

function audit(db: DbOrTx, actorId: string | null, entityId: string, action: string, changes: object) {
  recordEvent(db, { actorId, entity: "user", entityId, action, changes });
}

export function getUserById(db: Db, id: string): UserView | null {
  const row = db.select().from(users).where(eq(users.id, id)).get();
  if (!row) return null;
  const roles = db.select({ role: userRoles.role }).from(userRoles).where(eq(userRoles.userId, id)).all();
  return {
    id: row.id,
    username: row.username,
    displayName: row.displayName,
    active: Boolean(row.active),
    roles: ROLES.filter((r) => roles.some((x) => x.role === r)),
    createdAt: row.createdAt,
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
  }));
}

export async function createUser(
  db: Db,
  input: { username: string; displayName?: string; password: string; roles: Role[]; actorId?: string | null },
): Promise<UserView> {
  const username = UsernameSchema.parse(input.username).toLowerCase();
  PasswordSchema.parse(input.password);
  const roles = RolesSchema.parse(input.roles);
  if (getUserByUsername(db, username)) throw new ServiceError(`A user named "${username}" already exists.`, "username");
  const passwordHash = await hashPassword(input.password);
  const id = generateIdFromEntropySize(10);
  db.transaction((tx) => {
    tx.insert(users)
      .values({ id, username, displayName: input.displayName?.trim() || username, passwordHash, createdAt: Date.now() })
      .run();
    for (const role of new Set(roles)) tx.insert(userRoles).values({ userId: id, role }).run();
    audit(tx, input.actorId ?? null, id, "create", { username, roles });
  });
  return getUserById(db, id)!;
}

export function setRoles(db: Db, input: { userId: string; roles: Role[]; actorId: string }): void {
  const roles = RolesSchema.parse(input.roles);
  const before = getUserById(db, input.userId);
  if (!before) throw new ServiceError("No such user.", undefined, 404);
  if (input.userId === input.actorId && before.roles.includes("admin") && !roles.includes("admin"))
    throw new ServiceError("You cannot remove your own admin role.", "roles");
  db.transaction((tx) => {
    tx.delete(userRoles).where(eq(userRoles.userId, input.userId)).run();
    for (const role of new Set(roles)) tx.insert(userRoles).values({ userId: input.userId, role }).run();
    audit(tx, input.actorId, input.userId, "set_roles", { roles: [before.roles, roles] });
  });
}

export async function resetPassword(db: Db, input: { userId: string; password: string; actorId: string | null }) {
  PasswordSchema.parse(input.password);
  if (!getUserById(db, input.userId)) throw new ServiceError("No such user.", undefined, 404);
  const passwordHash = await hashPassword(input.password);
  db.transaction((tx) => {
    tx.update(users).set({ passwordHash }).where(eq(users.id, input.userId)).run();
    // A reset ends every session of that user: whoever knew the old password is logged out.
    tx.delete(sessions).where(eq(sessions.userId, input.userId)).run();
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
    if (!input.active) tx.delete(sessions).where(eq(sessions.userId, input.userId)).run();
    audit(tx, input.actorId, input.userId, input.active ? "activate" : "deactivate", {
      active: [before.active, input.active],
    });
  });
}

// Throttling: after 5 failures for a username (or 20 from one address) within 15 minutes, refuse further attempts
// until the window has passed, whatever the password.
export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;
export const MAX_FAILURES_PER_USER = 5;
export const MAX_FAILURES_PER_IP = 20;

export type LoginResult =
  | { ok: true; sessionCookie: string; user: UserView }
  | { ok: false; error: string; throttled?: boolean };

export async function login(
  db: Db,
  input: { username: string; password: string; ip: string; now?: number },
): Promise<LoginResult> {
  const now = input.now ?? Date.now();
  const username = input.username.trim().toLowerCase();
  const since = now - THROTTLE_WINDOW_MS;
  db.delete(loginFailures).where(lt(loginFailures.at, since)).run();
  const byUser = db
    .select({ n: count(), first: loginFailures.at })
    .from(loginFailures)
    .where(and(eq(loginFailures.username, username), gt(loginFailures.at, since)))
    .get()!;
  const byIp = db
    .select({ n: count() })
    .from(loginFailures)
    .where(and(eq(loginFailures.ip, input.ip), gt(loginFailures.at, since)))
    .get()!;
  if (byUser.n >= MAX_FAILURES_PER_USER || byIp.n >= MAX_FAILURES_PER_IP) {
    const minutes = Math.ceil(THROTTLE_WINDOW_MS / 60000);
    return { ok: false, throttled: true, error: `Too many failed attempts. Wait ${minutes} minutes and try again.` };
  }
  // The attempt is recorded as a failure before the (slow) password check, in the same synchronous step as the count
  // above, so a burst of parallel attempts cannot all pass the throttle; a success removes it again.
  db.insert(loginFailures).values({ username, ip: input.ip, at: now }).run();
  const row = db.select().from(users).where(eq(users.username, username)).get();
  // Verify against a dummy hash when the user does not exist, so timing does not reveal which usernames exist.
  const valid = await verifyPassword(row?.passwordHash ?? DUMMY_HASH, input.password);
  // One message for every failure: a deactivated account is not confirmed even to someone who knows its password.
  if (!row || !valid || !row.active) return { ok: false, error: "Wrong username or password." };
  db.delete(loginFailures).where(eq(loginFailures.username, username)).run();
  const lucia = auth(db);
  await lucia.deleteExpiredSessions();
  const session = await lucia.createSession(row.id, { createdAt: now });
  return { ok: true, sessionCookie: sessionCookie(session.id), user: getUserById(db, row.id)! };
}

const DUMMY_HASH =
  "scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

export async function logout(db: Db, sessionId: string): Promise<string> {
  await auth(db).invalidateSession(sessionId);
  return blankSessionCookie();
}
