/**
 * What a user does to their own account, and the one-time links an admin gives instead of a password
 * (docs/security.md, "Accounts"): changing one's password, ending one's sessions, setting a password from a link.
 * Every change is an audit event (who, what, when) that never holds a secret; every check that guards a write runs
 * in the write's transaction.
 */
import { createHash } from "node:crypto";
import { and, eq, gt, isNull } from "drizzle-orm";
import { z } from "zod";
import { passwordResetLinks, users } from "../../db/schema";
import { recordEvent } from "../audit/audit.server";
import type { Db, DbOrTx } from "../platform/db.server";
import { ServiceError } from "../platform/service-error";
import {
  endOtherSessions,
  endUserSession,
  invalidateUserSessions,
  randomBase32,
  rotateSession,
  sessionCookie,
  type SessionDevice,
} from "./auth.server";
import { throttled } from "./login-throttle.server";
import { hashPassword, verifyPassword } from "./password.server";
import { PASSWORD_MIN_LENGTH, RESET_LINK_HOURS } from "./password-rules";
import { passwordAllowed, PASSWORDS_OFF } from "./sign-in-config";

function audit(db: DbOrTx, actorId: string | null, userId: string, action: string, changes: object = {}) {
  recordEvent(db, { actorId, entity: "user", entityId: userId, action, changes });
}

/** A new password against the rules; the first rule broken, or null. */
export function passwordProblem(password: string, username: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `Use at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (password.length > 256) return "Use at most 256 characters.";
  if (password.trim().toLowerCase() === username.toLowerCase()) return "Do not use your username as your password.";
  return null;
}

/**
 * Whether the user can use a password here: "usable", "off" (local passwords are switched off for them) or "none"
 * (a user made by single sign-on, who never had one).
 */
export function passwordState(db: Db, userId: string): "usable" | "off" | "none" {
  const row = db
    .select({ username: users.username, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.id, userId))
    .get();
  if (!row) throw new ServiceError("No such user.", undefined, 404);
  if (!passwordAllowed(row.username)) return "off";
  return row.passwordHash.startsWith("scrypt$") ? "usable" : "none";
}

export const ChangePasswordSchema = z
  .object({
    current: z.string().min(1, "Enter your current password.").max(256),
    password: z.string().max(256, "Use at most 256 characters."),
    confirm: z.string().max(256),
  })
  .refine((v) => v.password === v.confirm, { path: ["confirm"], message: "The two new passwords differ." });

export type FieldErrors = Partial<Record<"current" | "password" | "confirm" | "form", string>>;

/**
 * Changes the user's own password: the current one is required (and throttled like a login), the new one meets the
 * rules. Every other session of the user ends and this one is replaced by a new one, whose cookie is returned.
 */
export async function changeOwnPassword(
  db: Db,
  input: {
    userId: string;
    sessionId: string;
    current: string;
    password: string;
    ip: string;
    device?: SessionDevice;
  },
): Promise<{ ok: true; sessionCookie: string; ended: number } | { ok: false; errors: FieldErrors }> {
  const row = db.select().from(users).where(eq(users.id, input.userId)).get();
  if (!row) throw new ServiceError("No such user.", undefined, 404);
  if (!passwordAllowed(row.username)) return { ok: false, errors: { form: PASSWORDS_OFF } };
  const checked = await throttled(db, { username: row.username, ip: input.ip }, async () => ({
    failed: !(await verifyPassword(row.passwordHash, input.current)),
  }));
  if ("waitMs" in checked) {
    const seconds = Math.ceil(checked.waitMs / 1000);
    return { ok: false, errors: { current: `Too many wrong passwords. Wait ${seconds} s and try again.` } };
  }
  if (checked.failed) return { ok: false, errors: { current: "That is not your current password." } };
  const problem = passwordProblem(input.password, row.username);
  if (problem) return { ok: false, errors: { password: problem } };
  if (input.password === input.current)
    return { ok: false, errors: { password: "The new password is the one you have now." } };
  const passwordHash = await hashPassword(input.password);
  return db.transaction((tx) => {
    // The check that guards the write, in its transaction: the password is still the one just verified.
    const now = tx.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, input.userId)).get();
    if (!now || now.passwordHash !== row.passwordHash)
      return { ok: false as const, errors: { form: "Your password was changed meanwhile. Reload the page." } };
    tx.update(users).set({ passwordHash }).where(eq(users.id, input.userId)).run();
    const ended = endOtherSessions(tx, input.userId, input.sessionId);
    const token = rotateSession(tx, input.sessionId, input.userId, input.device);
    audit(tx, input.userId, input.userId, "change_password", { other_sessions_ended: ended });
    return { ok: true as const, sessionCookie: sessionCookie(token), ended };
  });
}

/** Ends one of the user's own sessions (not the one in use: that is "Log out"). */
export function endOwnSession(db: Db, input: { userId: string; currentSessionId: string; sessionId: string }): void {
  if (input.sessionId === input.currentSessionId)
    throw new ServiceError("This is the session you are using: log out instead.");
  db.transaction((tx) => {
    if (!endUserSession(tx, input.userId, input.sessionId))
      throw new ServiceError("That session has already ended.", undefined, 404);
    audit(tx, input.userId, input.userId, "end_session");
  });
}

/** Ends every session of the user but the one in use. */
export function endOwnOtherSessions(db: Db, input: { userId: string; currentSessionId: string }): number {
  return db.transaction((tx) => {
    const ended = endOtherSessions(tx, input.userId, input.currentSessionId);
    audit(tx, input.userId, input.userId, "end_other_sessions", { ended });
    return ended;
  });
}

const linkId = (token: string) => createHash("sha256").update(token).digest("hex");

/**
 * A one-time link for the user to set a new password (instead of an admin typing one for them). Earlier unused
 * links of the user stop working. Returns the token, to be shown once; only its hash is stored.
 */
export function createResetLink(
  db: Db,
  input: { userId: string; actorId: string | null; now?: number },
): { token: string; expiresAt: number } {
  const now = input.now ?? Date.now();
  const token = randomBase32(25);
  const expiresAt = now + RESET_LINK_HOURS * 3600 * 1000;
  db.transaction((tx) => {
    const user = tx
      .select({ id: users.id, active: users.active, username: users.username })
      .from(users)
      .where(eq(users.id, input.userId))
      .get();
    if (!user) throw new ServiceError("No such user.", undefined, 404);
    if (!passwordAllowed(user.username)) throw new ServiceError(PASSWORDS_OFF);
    if (!user.active) throw new ServiceError("Activate the user first: a deactivated user cannot log in.");
    tx.update(passwordResetLinks)
      .set({ usedAt: now })
      .where(and(eq(passwordResetLinks.userId, input.userId), isNull(passwordResetLinks.usedAt)))
      .run();
    tx.insert(passwordResetLinks)
      .values({ id: linkId(token), userId: input.userId, createdBy: input.actorId, createdAt: now, expiresAt })
      .run();
    audit(tx, input.actorId, input.userId, "create_reset_link", { expires_at: new Date(expiresAt).toISOString() });
  });
  return { token, expiresAt };
}

/** The user a live reset link is for, or null (unknown, used, expired, or the user deactivated). */
export function resetLinkUser(
  db: Db,
  token: string,
  now = Date.now(),
): { username: string; displayName: string } | null {
  if (!/^[a-z2-7]{1,64}$/.test(token)) return null;
  const row = db
    .select({ username: users.username, displayName: users.displayName, active: users.active })
    .from(passwordResetLinks)
    .innerJoin(users, eq(users.id, passwordResetLinks.userId))
    .where(
      and(
        eq(passwordResetLinks.id, linkId(token)),
        isNull(passwordResetLinks.usedAt),
        gt(passwordResetLinks.expiresAt, now),
      ),
    )
    .get();
  return row && row.active && passwordAllowed(row.username)
    ? { username: row.username, displayName: row.displayName }
    : null;
}

/**
 * Sets the password a reset link is for: the link is used up, every session of the user ends (whoever knew the old
 * password is out), and the user logs in with the new one.
 */
export async function redeemResetLink(
  db: Db,
  input: { token: string; password: string; now?: number },
): Promise<{ ok: true; username: string } | { ok: false; errors: FieldErrors }> {
  const now = input.now ?? Date.now();
  const user = resetLinkUser(db, input.token, now);
  if (!user)
    return { ok: false, errors: { form: "This link has expired or has been used. Ask an admin for a new one." } };
  const problem = passwordProblem(input.password, user.username);
  if (problem) return { ok: false, errors: { password: problem } };
  const passwordHash = await hashPassword(input.password);
  return db.transaction((tx) => {
    const link = tx
      .select()
      .from(passwordResetLinks)
      .where(
        and(
          eq(passwordResetLinks.id, linkId(input.token)),
          isNull(passwordResetLinks.usedAt),
          gt(passwordResetLinks.expiresAt, now),
        ),
      )
      .get();
    const owner =
      link &&
      tx.select({ active: users.active, username: users.username }).from(users).where(eq(users.id, link.userId)).get();
    if (!link || !owner?.active || !passwordAllowed(owner.username))
      return { ok: false as const, errors: { form: "This link has expired or has been used." } };
    tx.update(passwordResetLinks).set({ usedAt: now }).where(eq(passwordResetLinks.id, link.id)).run();
    tx.update(users).set({ passwordHash }).where(eq(users.id, link.userId)).run();
    invalidateUserSessions(tx, link.userId);
    audit(tx, link.userId, link.userId, "use_reset_link");
    return { ok: true as const, username: user.username };
  });
}
