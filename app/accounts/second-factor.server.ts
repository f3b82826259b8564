/**
 * The TOTP second factor (RFC 6238, through the `otpauth` library) and its recovery codes, the second step of a login
 * that needs it, and the roles for which an admin requires it (docs/security.md, "Second factor").
 *
 * - Turning it on: the account page makes a secret (kept as not yet confirmed), shows it as a QR code and as text;
 *   a code from the authenticator app confirms it, and ten recovery codes are shown once (only their SHA-256 is kept).
 * - A code is accepted within one 30-second step either side, and a step that was used is refused afterwards.
 * - Logging in with it on: a right password makes a login challenge (a short-lived token in its own cookie that
 *   grants nothing else); a right code or an unused recovery code then makes the session. Wrong codes count as
 *   failed logins of the account and address (the same throttle), and a challenge ends after a few.
 */
import { createHash } from "node:crypto";
import { and, eq, isNull, lte } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import QRCode from "qrcode";
import { appMeta, loginChallenges, recoveryCodes, users, type Role } from "../../db/schema";
import { recordEvent } from "../audit/audit.server";
import type { Db, DbOrTx } from "../platform/db.server";
import { ServiceError } from "../platform/service-error";
import {
  createSession,
  deleteExpiredSessions,
  endOtherSessions,
  invalidateSessionToken,
  invalidateUserSessions,
  randomBase32,
  rotateSession,
  secureCookies,
  sessionCookie,
  type SessionDevice,
} from "./auth.server";
import { throttled } from "./login-throttle.server";
import { verifyPassword } from "./password.server";

const ISSUER = "Concord";
const PERIOD = 30;
const RECOVERY_CODES = 10;
/** How long the code step of a login may take, and how many wrong codes one challenge allows. */
export const CHALLENGE_MINUTES = 5;
export const CHALLENGE_FAILURES = 5;
export const CHALLENGE_COOKIE = "concord_challenge";
const REQUIRED_KEY = "second_factor_roles";

function audit(db: DbOrTx, actorId: string | null, userId: string, action: string, changes: object = {}) {
  recordEvent(db, { actorId, entity: "user", entityId: userId, action, changes });
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function totpOf(secret: string, username: string): TOTP {
  return new TOTP({ issuer: ISSUER, label: username, secret: Secret.fromBase32(secret), period: PERIOD, digits: 6 });
}

/** The time step a code matches (within one step either side), or null. */
function matchingStep(secret: string, username: string, code: string, now: number): number | null {
  const token = code.replace(/\s+/g, "");
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totpOf(secret, username).validate({ token, timestamp: now, window: 1 });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD) + delta;
}

/** The roles an admin requires the second factor for. */
export function requiredRoles(db: DbOrTx): Role[] {
  const row = db.select().from(appMeta).where(eq(appMeta.key, REQUIRED_KEY)).get();
  if (!row) return [];
  try {
    const parsed = JSON.parse(row.value) as unknown;
    return Array.isArray(parsed) ? (parsed.filter((r) => typeof r === "string") as Role[]) : [];
  } catch {
    return [];
  }
}

export function setRequiredRoles(db: Db, input: { roles: Role[]; actorId: string }): void {
  const roles = [...new Set(input.roles)].sort();
  db.transaction((tx) => {
    const before = requiredRoles(tx);
    tx.insert(appMeta)
      .values({ key: REQUIRED_KEY, value: JSON.stringify(roles) })
      .onConflictDoUpdate({ target: appMeta.key, set: { value: JSON.stringify(roles) } })
      .run();
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "settings",
      entityId: REQUIRED_KEY,
      action: "require_second_factor",
      changes: { roles: [before, roles] },
    });
  });
}

/** True when one of the user's roles requires the second factor and the user has not turned it on. */
export function mustSetUpSecondFactor(db: DbOrTx, user: { roles: Role[]; totpEnabledAt: number | null }): boolean {
  if (user.totpEnabledAt !== null) return false;
  const required = requiredRoles(db);
  return user.roles.some((r) => required.includes(r));
}

export interface SecondFactorState {
  enabled: boolean;
  enabledAt: number | null;
  /** While turning it on: the secret as text, the otpauth URI and its QR code (SVG). */
  pending: { secret: string; uri: string; qrSvg: string } | null;
  recoveryCodesLeft: number;
}

export async function secondFactorState(db: Db, userId: string): Promise<SecondFactorState> {
  const row = db.select().from(users).where(eq(users.id, userId)).get();
  if (!row) throw new ServiceError("No such user.", undefined, 404);
  const left = db
    .select({ codeHash: recoveryCodes.codeHash })
    .from(recoveryCodes)
    .where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt)))
    .all().length;
  let pending: SecondFactorState["pending"] = null;
  if (row.totpSecret && row.totpEnabledAt === null) {
    const uri = totpOf(row.totpSecret, row.username).toString();
    pending = { secret: row.totpSecret, uri, qrSvg: await QRCode.toString(uri, { type: "svg", margin: 1 }) };
  }
  return { enabled: row.totpEnabledAt !== null, enabledAt: row.totpEnabledAt, pending, recoveryCodesLeft: left };
}

/** Starts turning the second factor on: a new secret, not yet in force until a code confirms it. */
export function startSecondFactor(db: Db, userId: string): void {
  db.transaction((tx) => {
    const row = tx.select().from(users).where(eq(users.id, userId)).get();
    if (!row) throw new ServiceError("No such user.", undefined, 404);
    if (row.totpEnabledAt !== null) throw new ServiceError("The second factor is already on.");
    tx.update(users)
      .set({ totpSecret: new Secret({ size: 20 }).base32, totpLastStep: null })
      .where(eq(users.id, userId))
      .run();
  });
}

function newRecoveryCodes(tx: DbOrTx, userId: string): string[] {
  tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)).run();
  const codes: string[] = [];
  for (let i = 0; i < RECOVERY_CODES; i++) {
    const raw = randomBase32(8).slice(0, 10);
    const code = `${raw.slice(0, 5)}-${raw.slice(5)}`;
    codes.push(code);
    tx.insert(recoveryCodes)
      .values({ userId, codeHash: sha256(code.replace("-", "")) })
      .run();
  }
  return codes;
}

/**
 * Confirms the pending secret with a code from the app: the second factor is on, ten recovery codes are returned
 * (to be shown once), the other sessions end and this one gets a new token.
 */
export function confirmSecondFactor(
  db: Db,
  input: { userId: string; sessionId: string; code: string; now?: number; device?: SessionDevice },
): { ok: true; recoveryCodes: string[]; sessionCookie: string } | { ok: false; error: string } {
  const now = input.now ?? Date.now();
  return db.transaction((tx) => {
    const row = tx.select().from(users).where(eq(users.id, input.userId)).get();
    if (!row) throw new ServiceError("No such user.", undefined, 404);
    if (row.totpEnabledAt !== null) return { ok: false as const, error: "The second factor is already on." };
    if (!row.totpSecret) return { ok: false as const, error: "Start again: no secret is waiting for a code." };
    const step = matchingStep(row.totpSecret, row.username, input.code, now);
    if (step === null)
      return {
        ok: false as const,
        error: "That code does not match. Check the device's clock and enter the code the app shows now.",
      };
    tx.update(users).set({ totpEnabledAt: now, totpLastStep: step }).where(eq(users.id, input.userId)).run();
    const codes = newRecoveryCodes(tx, input.userId);
    const ended = endOtherSessions(tx, input.userId, input.sessionId);
    const token = rotateSession(tx, input.sessionId, input.userId, input.device);
    audit(tx, input.userId, input.userId, "enable_second_factor", { other_sessions_ended: ended });
    return { ok: true as const, recoveryCodes: codes, sessionCookie: sessionCookie(token) };
  });
}

/** Turns the second factor off (the password is asked again); refused when one of the user's roles requires it. */
export async function disableSecondFactor(
  db: Db,
  input: { userId: string; sessionId: string; password: string; roles: Role[]; device?: SessionDevice },
): Promise<{ ok: true; sessionCookie: string } | { ok: false; error: string }> {
  const row = db.select().from(users).where(eq(users.id, input.userId)).get();
  if (!row) throw new ServiceError("No such user.", undefined, 404);
  if (!(await verifyPassword(row.passwordHash, input.password)))
    return { ok: false, error: "That is not your current password." };
  return db.transaction((tx) => {
    if (input.roles.some((r) => requiredRoles(tx).includes(r)))
      return { ok: false as const, error: "Your role requires the second factor; an admin can change that." };
    tx.update(users)
      .set({ totpSecret: null, totpEnabledAt: null, totpLastStep: null })
      .where(eq(users.id, input.userId))
      .run();
    tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, input.userId)).run();
    const token = rotateSession(tx, input.sessionId, input.userId, input.device);
    audit(tx, input.userId, input.userId, "disable_second_factor");
    return { ok: true as const, sessionCookie: sessionCookie(token) };
  });
}

/** New recovery codes (the old ones stop working), after a current code from the app. */
export function regenerateRecoveryCodes(
  db: Db,
  input: { userId: string; code: string; now?: number },
): { ok: true; recoveryCodes: string[] } | { ok: false; error: string } {
  const now = input.now ?? Date.now();
  return db.transaction((tx) => {
    const row = tx.select().from(users).where(eq(users.id, input.userId)).get();
    if (!row?.totpSecret || row.totpEnabledAt === null)
      return { ok: false as const, error: "The second factor is not on." };
    const step = matchingStep(row.totpSecret, row.username, input.code, now);
    if (step === null || (row.totpLastStep !== null && step <= row.totpLastStep))
      return { ok: false as const, error: "That code does not match (or was used already): enter the next one." };
    tx.update(users).set({ totpLastStep: step }).where(eq(users.id, input.userId)).run();
    const codes = newRecoveryCodes(tx, input.userId);
    audit(tx, input.userId, input.userId, "new_recovery_codes");
    return { ok: true as const, recoveryCodes: codes };
  });
}

/** An admin turns a user's second factor off (a lost phone and no recovery codes left); the user's sessions end. */
export function resetSecondFactor(db: Db, input: { userId: string; actorId: string }): void {
  db.transaction((tx) => {
    const row = tx.select({ id: users.id }).from(users).where(eq(users.id, input.userId)).get();
    if (!row) throw new ServiceError("No such user.", undefined, 404);
    tx.update(users)
      .set({ totpSecret: null, totpEnabledAt: null, totpLastStep: null })
      .where(eq(users.id, input.userId))
      .run();
    tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, input.userId)).run();
    invalidateUserSessions(tx, input.userId);
    audit(tx, input.actorId, input.userId, "reset_second_factor");
  });
}

// ---- the login's second step -------------------------------------------------------------------------------

function challengeAttributes(): string {
  return `Path=/login; HttpOnly; SameSite=Lax${secureCookies() ? "; Secure" : ""}`;
}

export function challengeCookie(token: string): string {
  return `${CHALLENGE_COOKIE}=${token}; Max-Age=${CHALLENGE_MINUTES * 60}; ${challengeAttributes()}`;
}

export function blankChallengeCookie(): string {
  return `${CHALLENGE_COOKIE}=; Max-Age=0; ${challengeAttributes()}`;
}

export function readChallengeCookie(cookieHeader: string): string | null {
  for (const part of cookieHeader.split(";")) {
    const at = part.indexOf("=");
    if (at < 0 || part.slice(0, at).trim() !== CHALLENGE_COOKIE) continue;
    const value = part.slice(at + 1).trim();
    return /^[a-z2-7]{1,64}$/.test(value) ? value : null;
  }
  return null;
}

/** After a right password: a challenge for the code step. Returns its token for the challenge cookie. */
export function createChallenge(tx: DbOrTx, userId: string, redirectTo: string, now = Date.now()): string {
  tx.delete(loginChallenges).where(lte(loginChallenges.expiresAt, now)).run();
  const token = randomBase32(25);
  tx.insert(loginChallenges)
    .values({ id: sha256(token), userId, createdAt: now, expiresAt: now + CHALLENGE_MINUTES * 60_000, redirectTo })
    .run();
  return token;
}

/** The live challenge a token names: its user and where the login goes next. */
export function challengeOf(db: DbOrTx, token: string, now = Date.now()) {
  const row = db
    .select({ c: loginChallenges, username: users.username, active: users.active })
    .from(loginChallenges)
    .innerJoin(users, eq(users.id, loginChallenges.userId))
    .where(eq(loginChallenges.id, sha256(token)))
    .get();
  if (!row || row.c.expiresAt <= now || !row.active) return null;
  return { userId: row.c.userId, username: row.username, redirectTo: row.c.redirectTo };
}

export type CodeResult =
  | { ok: true; sessionCookie: string; redirectTo: string; usedRecoveryCode: boolean; recoveryCodesLeft: number }
  | { ok: false; error: string; restart?: boolean };

/**
 * The code step: a TOTP code or an unused recovery code for the challenge's user. A right one ends the challenge
 * and makes the session; wrong ones are failed logins (throttled per account and address) and end the challenge
 * after CHALLENGE_FAILURES.
 */
export async function completeChallenge(
  db: Db,
  input: {
    token: string;
    code: string;
    ip: string;
    now?: number;
    device?: SessionDevice;
    previousSessionToken?: string | null;
  },
): Promise<CodeResult> {
  const now = input.now ?? Date.now();
  const challenge = challengeOf(db, input.token, now);
  if (!challenge) return { ok: false, restart: true, error: "The login took too long. Log in again." };
  const attempt = await throttled(db, { username: challenge.username, ip: input.ip, now }, async () => {
    const outcome = db.transaction((tx) => {
      const c = challengeOf(tx, input.token, now);
      if (!c) return { kind: "gone" as const };
      const row = tx.select().from(users).where(eq(users.id, c.userId)).get()!;
      const entered = input.code.trim();
      if (row.totpSecret && row.totpEnabledAt !== null && /^\d[\d\s]*$/.test(entered)) {
        const step = matchingStep(row.totpSecret, row.username, entered, now);
        if (step !== null && (row.totpLastStep === null || step > row.totpLastStep)) {
          tx.update(users).set({ totpLastStep: step }).where(eq(users.id, row.id)).run();
          return { kind: "ok" as const, c, recovery: false };
        }
      } else {
        const hash = sha256(entered.toLowerCase().replace(/[\s-]/g, ""));
        const used = tx
          .update(recoveryCodes)
          .set({ usedAt: now })
          .where(
            and(eq(recoveryCodes.userId, c.userId), eq(recoveryCodes.codeHash, hash), isNull(recoveryCodes.usedAt)),
          )
          .run().changes;
        if (used > 0) return { kind: "ok" as const, c, recovery: true };
      }
      const current = tx
        .select()
        .from(loginChallenges)
        .where(eq(loginChallenges.id, sha256(input.token)))
        .get()!;
      const next = current.failures + 1;
      if (next >= CHALLENGE_FAILURES) tx.delete(loginChallenges).where(eq(loginChallenges.id, current.id)).run();
      else tx.update(loginChallenges).set({ failures: next }).where(eq(loginChallenges.id, current.id)).run();
      return { kind: "wrong" as const, ended: next >= CHALLENGE_FAILURES };
    });
    return { failed: outcome.kind === "wrong", outcome };
  });
  if ("waitMs" in attempt) {
    const seconds = Math.ceil(attempt.waitMs / 1000);
    return { ok: false, error: `Too many wrong codes. Wait ${seconds} s and try again.` };
  }
  const o = attempt.outcome;
  if (o.kind === "gone") return { ok: false, restart: true, error: "The login took too long. Log in again." };
  if (o.kind === "wrong")
    return o.ended
      ? { ok: false, restart: true, error: "Too many wrong codes. Log in again." }
      : { ok: false, error: "That code does not match. Enter the code your app shows now, or a recovery code." };
  const { token, left } = db.transaction((tx) => {
    tx.delete(loginChallenges)
      .where(eq(loginChallenges.id, sha256(input.token)))
      .run();
    if (input.previousSessionToken) invalidateSessionToken(tx, input.previousSessionToken);
    deleteExpiredSessions(tx);
    const made = createSession(tx, o.c.userId, now, input.device);
    if (o.recovery) audit(tx, o.c.userId, o.c.userId, "use_recovery_code");
    const remaining = tx
      .select({ h: recoveryCodes.codeHash })
      .from(recoveryCodes)
      .where(and(eq(recoveryCodes.userId, o.c.userId), isNull(recoveryCodes.usedAt)))
      .all().length;
    return { token: made.token, left: remaining };
  });
  return {
    ok: true,
    sessionCookie: sessionCookie(token),
    redirectTo: o.c.redirectTo,
    usedRecoveryCode: o.recovery,
    recoveryCodesLeft: left,
  };
}
