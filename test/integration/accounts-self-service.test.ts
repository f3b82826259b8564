/**
 * Self-service accounts (docs/security.md, "Accounts", "Second factor", "Password resets"): changing one's password,
 * listing and ending one's sessions, sessions replaced on a change of privilege, one-time password links, the TOTP
 * second factor with recovery codes and the login's code step, and the audit events all of these leave (never a
 * secret). TOTP codes are made with the otpauth library from the stored secret, as an authenticator app would.
 */
import { eq } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { events, sessions, users } from "../../db/schema";
import { createSession, listUserSessions, validateSessionToken } from "../../app/accounts/auth.server";
import {
  challengeOf,
  completeChallenge,
  confirmSecondFactor,
  disableSecondFactor,
  mustSetUpSecondFactor,
  regenerateRecoveryCodes,
  resetSecondFactor,
  setRequiredRoles,
  startSecondFactor,
} from "../../app/accounts/second-factor.server";
import {
  changeOwnPassword,
  createResetLink,
  endOwnOtherSessions,
  endOwnSession,
  redeemResetLink,
  resetLinkUser,
} from "../../app/accounts/self-service.server";
import { getUserById, login, setRoles } from "../../app/accounts/users.server";
import type { Db } from "../../app/platform/db.server";
import { ServiceError } from "../../app/platform/service-error";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";

let db: Db;
let cleanup: () => void;
beforeEach(() => {
  ({ db, cleanup } = freshDb());
});
afterEach(() => cleanup());

const IP = "192.0.2.7";
const NEW_PASSWORD = "a new long passphrase";
const tokenOf = (cookie: string) => /concord_session=([a-z2-7]+)/.exec(cookie)![1]!;
const challengeTokenOf = (cookie: string) => /concord_challenge=([a-z2-7]+)/.exec(cookie)![1]!;
const eventsOf = (userId: string) =>
  db
    .select()
    .from(events)
    .where(eq(events.entityId, userId))
    .all()
    .map((e) => ({ action: e.action, changes: e.changes }));

async function loggedIn(username: string, password = TEST_PASSWORD) {
  const r = await login(db, { username, password, ip: IP, userAgent: "Mozilla/5.0 (X11; Linux x86_64) Chrome/120" });
  if (!r.ok) throw new Error(r.error);
  const token = tokenOf(r.sessionCookie);
  return { token, sessionId: validateSessionToken(db, token)!.session.id };
}

function codeFor(userId: string, at = Date.now()): string {
  const row = db.select().from(users).where(eq(users.id, userId)).get()!;
  return new TOTP({ secret: Secret.fromBase32(row.totpSecret!), period: 30, digits: 6 }).generate({ timestamp: at });
}

describe("sessions", () => {
  it("lists the user's own live sessions with their browser and address, and ends one or all others", async () => {
    const ann = await makeUser(db, "ann", ["annotator"]);
    const other = await makeUser(db, "olga", ["annotator"]);
    const a = await loggedIn("ann");
    const b = await loggedIn("ann");
    createSession(db, other.id);
    const list = listUserSessions(db, ann.id);
    expect(list.map((s) => s.id).sort()).toEqual([a.sessionId, b.sessionId].sort());
    expect(list[0]).toMatchObject({ ip: IP, userAgent: expect.stringContaining("Chrome") });

    expect(() => endOwnSession(db, { userId: ann.id, currentSessionId: a.sessionId, sessionId: a.sessionId })).toThrow(
      /log out instead/,
    );
    // Another user's session cannot be ended through one's own account.
    const olgaSession = listUserSessions(db, other.id)[0]!.id;
    expect(() => endOwnSession(db, { userId: ann.id, currentSessionId: a.sessionId, sessionId: olgaSession })).toThrow(
      ServiceError,
    );
    expect(listUserSessions(db, other.id)).toHaveLength(1);

    endOwnSession(db, { userId: ann.id, currentSessionId: a.sessionId, sessionId: b.sessionId });
    expect(validateSessionToken(db, b.token)).toBeNull();
    expect(validateSessionToken(db, a.token)).not.toBeNull();

    await loggedIn("ann");
    await loggedIn("ann");
    expect(endOwnOtherSessions(db, { userId: ann.id, currentSessionId: a.sessionId })).toBe(2);
    expect(listUserSessions(db, ann.id).map((s) => s.id)).toEqual([a.sessionId]);
    expect(eventsOf(ann.id).map((e) => e.action)).toEqual(["create", "end_session", "end_other_sessions"]);
  });

  it("ends the sessions of a user whose roles change, and replaces the session of admins who change their own", async () => {
    const admin = await makeUser(db, "root", ["admin"]);
    await makeUser(db, "ann", ["annotator"]);
    const ann = await loggedIn("ann");
    const me = await loggedIn("root");
    const annId = getUserById(db, validateSessionToken(db, ann.token)!.user.id)!.id;
    expect(setRoles(db, { userId: annId, roles: ["annotator", "adjudicator"], actorId: admin.id })).toBeNull();
    expect(validateSessionToken(db, ann.token)).toBeNull();
    // Saving the same roles again changes no privilege and ends nothing.
    const again = await loggedIn("ann");
    setRoles(db, { userId: annId, roles: ["adjudicator", "annotator"], actorId: admin.id });
    expect(validateSessionToken(db, again.token)).not.toBeNull();

    const rotated = setRoles(db, {
      userId: admin.id,
      roles: ["admin", "rater"],
      actorId: admin.id,
      actorSessionId: me.sessionId,
    });
    expect(rotated).not.toBeNull();
    expect(validateSessionToken(db, me.token)).toBeNull();
    expect(validateSessionToken(db, tokenOf(rotated!.sessionCookie))?.user.id).toBe(admin.id);
  });
});

describe("changing one's password", () => {
  it("needs the current password, states the rules, ends the other sessions and replaces this one", async () => {
    const ann = await makeUser(db, "ann", ["annotator"]);
    const here = await loggedIn("ann");
    const elsewhere = await loggedIn("ann");
    const base = { userId: ann.id, sessionId: here.sessionId, ip: IP };

    const wrong = await changeOwnPassword(db, { ...base, current: "not it at all", password: NEW_PASSWORD });
    expect(wrong).toEqual({ ok: false, errors: { current: "That is not your current password." } });
    const short = await changeOwnPassword(db, { ...base, current: TEST_PASSWORD, password: "short" });
    expect(short.ok).toBe(false);
    expect(!short.ok && short.errors.password).toMatch(/at least 10 characters/);
    const username = await changeOwnPassword(db, { ...base, current: TEST_PASSWORD, password: "ANN" + " ".repeat(8) });
    expect(!username.ok && username.errors.password).toBeTruthy();
    const same = await changeOwnPassword(db, { ...base, current: TEST_PASSWORD, password: TEST_PASSWORD });
    expect(!same.ok && same.errors.password).toMatch(/the one you have now/);

    const done = await changeOwnPassword(db, { ...base, current: TEST_PASSWORD, password: NEW_PASSWORD });
    expect(done.ok).toBe(true);
    if (!done.ok) return;
    expect(done.ended).toBe(1);
    expect(validateSessionToken(db, elsewhere.token)).toBeNull();
    expect(validateSessionToken(db, here.token)).toBeNull();
    expect(validateSessionToken(db, tokenOf(done.sessionCookie))?.user.id).toBe(ann.id);
    expect((await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP })).ok).toBe(false);
    expect((await login(db, { username: "ann", password: NEW_PASSWORD, ip: IP })).ok).toBe(true);
    const change = eventsOf(ann.id).find((e) => e.action === "change_password")!;
    expect(JSON.stringify(change)).not.toContain(NEW_PASSWORD);
  });

  it("throttles guesses of the current password like logins of that account and address", async () => {
    const ann = await makeUser(db, "ann", ["annotator"]);
    const here = await loggedIn("ann");
    let last;
    for (let i = 0; i < 7; i++)
      last = await changeOwnPassword(db, {
        userId: ann.id,
        sessionId: here.sessionId,
        ip: IP,
        current: `guess number ${i}`,
        password: NEW_PASSWORD,
      });
    expect(!last!.ok && last!.errors.current).toMatch(/Too many wrong passwords/);
  });
});

describe("one-time password links", () => {
  it("lets the user set a password once, ends their sessions, and stops older links", async () => {
    const admin = await makeUser(db, "root", ["admin"]);
    const ann = await makeUser(db, "ann", ["annotator"]);
    const session = await loggedIn("ann");
    const first = createResetLink(db, { userId: ann.id, actorId: admin.id });
    const second = createResetLink(db, { userId: ann.id, actorId: admin.id });
    expect(resetLinkUser(db, first.token)).toBeNull();
    expect(resetLinkUser(db, second.token)).toMatchObject({ username: "ann" });
    expect(resetLinkUser(db, "not a token")).toBeNull();

    const weak = await redeemResetLink(db, { token: second.token, password: "short" });
    expect(weak.ok).toBe(false);
    expect(resetLinkUser(db, second.token)).not.toBeNull(); // a refused password does not use the link up

    expect(await redeemResetLink(db, { token: second.token, password: NEW_PASSWORD })).toEqual({
      ok: true,
      username: "ann",
    });
    expect(validateSessionToken(db, session.token)).toBeNull();
    expect((await login(db, { username: "ann", password: NEW_PASSWORD, ip: IP })).ok).toBe(true);
    const reused = await redeemResetLink(db, { token: second.token, password: "another long passphrase" });
    expect(reused.ok).toBe(false);
    expect(eventsOf(ann.id).map((e) => e.action)).toEqual([
      "create",
      "create_reset_link",
      "create_reset_link",
      "use_reset_link",
    ]);
    const stored = JSON.stringify(db.select().from(events).all());
    expect(stored).not.toContain(second.token);
  });

  it("expires, and does not work for a deactivated user", async () => {
    const ann = await makeUser(db, "ann", ["annotator"]);
    const t0 = Date.UTC(2026, 0, 1);
    const link = createResetLink(db, { userId: ann.id, actorId: null, now: t0 });
    expect(resetLinkUser(db, link.token, t0 + 71 * 3600_000)).not.toBeNull();
    expect(resetLinkUser(db, link.token, t0 + 73 * 3600_000)).toBeNull();
    const live = createResetLink(db, { userId: ann.id, actorId: null });
    db.update(users).set({ active: false }).where(eq(users.id, ann.id)).run();
    expect((await redeemResetLink(db, { token: live.token, password: NEW_PASSWORD })).ok).toBe(false);
  });
});

describe("second factor", () => {
  async function withSecondFactor(username: string) {
    const user = await makeUser(db, username, ["annotator"]);
    const s = await loggedIn(username);
    startSecondFactor(db, user.id);
    const confirmed = confirmSecondFactor(db, { userId: user.id, sessionId: s.sessionId, code: codeFor(user.id) });
    if (!confirmed.ok) throw new Error(confirmed.error);
    return { user, recoveryCodes: confirmed.recoveryCodes, cookie: confirmed.sessionCookie };
  }

  it("turns on only with a right code, gives ten recovery codes, and replaces the session", async () => {
    const ann = await makeUser(db, "ann", ["annotator"]);
    const s = await loggedIn("ann");
    const other = await loggedIn("ann");
    startSecondFactor(db, ann.id);
    expect(confirmSecondFactor(db, { userId: ann.id, sessionId: s.sessionId, code: "000000" }).ok).toBe(false);
    expect(getUserById(db, ann.id)!.totpEnabledAt).toBeNull();
    // Until confirmed, logging in still needs only the password.
    expect((await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP })).ok).toBe(true);
    const r = confirmSecondFactor(db, { userId: ann.id, sessionId: s.sessionId, code: codeFor(ann.id) });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.recoveryCodes).toHaveLength(10);
    expect(new Set(r.recoveryCodes).size).toBe(10);
    expect(validateSessionToken(db, other.token)).toBeNull();
    expect(validateSessionToken(db, s.token)).toBeNull();
    expect(validateSessionToken(db, tokenOf(r.sessionCookie))).not.toBeNull();
    const stored = JSON.stringify(db.select().from(events).all());
    for (const c of r.recoveryCodes) expect(stored).not.toContain(c);
  });

  it("makes the password open only the code step; a code or a recovery code (once) makes the session", async () => {
    const { user, recoveryCodes } = await withSecondFactor("ann");
    const before = db.select().from(sessions).where(eq(sessions.userId, user.id)).all().length;
    const first = await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP });
    expect(first.ok).toBe(false);
    expect("challengeCookie" in first).toBe(true);
    const token = challengeTokenOf((first as { challengeCookie: string }).challengeCookie);
    expect(challengeOf(db, token)).toMatchObject({ userId: user.id });
    expect(db.select().from(sessions).where(eq(sessions.userId, user.id)).all()).toHaveLength(before);

    const bad = await completeChallenge(db, { token, code: "123456", ip: IP });
    expect(bad).toMatchObject({ ok: false });
    // A code one step later than the last one used is accepted.
    const ok = await completeChallenge(db, { token, code: codeFor(user.id, Date.now() + 30_000), ip: IP });
    expect(ok.ok).toBe(true);
    expect(challengeOf(db, token)).toBeNull();

    // The same code cannot open a second login.
    const again = await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP });
    const token2 = challengeTokenOf((again as { challengeCookie: string }).challengeCookie);
    expect(
      (await completeChallenge(db, { token: token2, code: codeFor(user.id, Date.now() + 30_000), ip: IP })).ok,
    ).toBe(false);
    const recovery = await completeChallenge(db, { token: token2, code: recoveryCodes[0]!.toUpperCase(), ip: IP });
    expect(recovery).toMatchObject({ ok: true, usedRecoveryCode: true, recoveryCodesLeft: 9 });
    const third = await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP });
    const token3 = challengeTokenOf((third as { challengeCookie: string }).challengeCookie);
    expect((await completeChallenge(db, { token: token3, code: recoveryCodes[0]!, ip: IP })).ok).toBe(false);
    expect(eventsOf(user.id).map((e) => e.action)).toContain("use_recovery_code");
  });

  it("ends a challenge after five wrong codes, and a challenge expires", async () => {
    await withSecondFactor("ann");
    const r = await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP });
    const token = challengeTokenOf((r as { challengeCookie: string }).challengeCookie);
    let last;
    for (let i = 0; i < 5; i++) last = await completeChallenge(db, { token, code: `11111${i}`, ip: "198.51.100.9" });
    expect(last).toMatchObject({ ok: false, restart: true });
    expect(challengeOf(db, token)).toBeNull();
    const r2 = await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP });
    const token2 = challengeTokenOf((r2 as { challengeCookie: string }).challengeCookie);
    expect(challengeOf(db, token2, Date.now() + 6 * 60_000)).toBeNull();
  });

  it("new recovery codes replace the old; turning it off needs the password and is refused where a role requires it", async () => {
    const { user, recoveryCodes, cookie } = await withSecondFactor("ann");
    const sessionId = validateSessionToken(db, tokenOf(cookie))!.session.id;
    const fresh = regenerateRecoveryCodes(db, { userId: user.id, code: codeFor(user.id, Date.now() + 30_000) });
    expect(fresh.ok).toBe(true);
    const r = await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP });
    const token = challengeTokenOf((r as { challengeCookie: string }).challengeCookie);
    expect((await completeChallenge(db, { token, code: recoveryCodes[1]!, ip: IP })).ok).toBe(false);

    const admin = await makeUser(db, "root", ["admin"]);
    setRequiredRoles(db, { roles: ["annotator"], actorId: admin.id });
    const refused = await disableSecondFactor(db, {
      userId: user.id,
      sessionId,
      password: TEST_PASSWORD,
      roles: ["annotator"],
    });
    expect(refused).toMatchObject({ ok: false, error: expect.stringMatching(/role requires/) });
    setRequiredRoles(db, { roles: [], actorId: admin.id });
    expect((await disableSecondFactor(db, { userId: user.id, sessionId, password: "wrong one", roles: [] })).ok).toBe(
      false,
    );
    expect((await disableSecondFactor(db, { userId: user.id, sessionId, password: TEST_PASSWORD, roles: [] })).ok).toBe(
      true,
    );
    expect((await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP })).ok).toBe(true);
  });

  it("is required per role: users of that role without it must set it up; an admin can turn off a lost one", async () => {
    const admin = await makeUser(db, "root", ["admin"]);
    const { user } = await withSecondFactor("ann");
    const rater = await makeUser(db, "rita", ["rater"]);
    setRequiredRoles(db, { roles: ["rater", "annotator"], actorId: admin.id });
    expect(mustSetUpSecondFactor(db, getUserById(db, rater.id)!)).toBe(true);
    expect(mustSetUpSecondFactor(db, getUserById(db, user.id)!)).toBe(false);
    expect(mustSetUpSecondFactor(db, getUserById(db, admin.id)!)).toBe(false);

    resetSecondFactor(db, { userId: user.id, actorId: admin.id });
    expect(getUserById(db, user.id)!.totpEnabledAt).toBeNull();
    expect(mustSetUpSecondFactor(db, getUserById(db, user.id)!)).toBe(true);
    expect(eventsOf(user.id).map((e) => e.action)).toContain("reset_second_factor");
  });
});
