/**
 * Accounts (docs/architecture.md#roles-and-blinding): users and roles, password hashing, sessions ended by a reset or a deactivation, login
 * throttling, and the audit trail those changes leave. The suite hashes at a low scrypt cost
 * (test/support/setup.ts); the production cost is tested in password-cost.test.ts.
 */
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { events, sessions, users } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { createSession, validateSessionToken } from "../../app/accounts/auth.server";
import { hashPassword, verifyPassword } from "../../app/accounts/password.server";
import { diff, listCaseEvents, recordEvent } from "../../app/audit/audit.server";
import {
  createUser,
  getUserByUsername,
  listUsers,
  login,
  logout,
  resetPassword,
  setActive,
  setRoles,
} from "../../app/accounts/users.server";
import { ServiceError } from "../../app/platform/service-error";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";

let db: Db;
let cleanup: () => void;

beforeEach(() => {
  ({ db, cleanup } = freshDb());
});
afterEach(() => cleanup());

const IP = "192.0.2.1";

function userEvents(userId: string) {
  return db
    .select({ action: events.action, actorId: events.actorId, changes: events.changes })
    .from(events)
    .where(eq(events.entityId, userId))
    .all()
    .map((e) => ({ ...e, changes: e.changes }));
}

function sessionCount(userId: string): number {
  return db.select().from(sessions).where(eq(sessions.userId, userId)).all().length;
}

function tokenOf(cookie: string): string {
  return /^concord_session=([^;]+)/.exec(cookie)![1]!;
}

describe("passwords (scrypt)", () => {
  it("hashes with a fresh salt and the parameters in the hash, and verifies", async () => {
    const [a, b] = await Promise.all([hashPassword("correct horse battery"), hashPassword("correct horse battery")]);
    // The suite hashes at scrypt's lowest accepted cost (test/support/setup.ts); password-cost.test.ts tests 2^17.
    expect(a).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain("correct horse");
    await expect(verifyPassword(a, "correct horse battery")).resolves.toBe(true);
    await expect(verifyPassword(b, "correct horse batterY")).resolves.toBe(false);
  });

  it("normalises to NFKC, so a password typed with a composed or ligature form still matches", async () => {
    const hash = await hashPassword("caf\u00e9-\ufb01le-2024");
    await expect(verifyPassword(hash, "cafe\u0301-file-2024")).resolves.toBe(true);
  });

  it("refuses a malformed or foreign hash without throwing", async () => {
    await expect(verifyPassword("", "x")).resolves.toBe(false);
    await expect(verifyPassword("$argon2id$v=19$m=65536,t=3,p=4$abc$def", "x")).resolves.toBe(false);
    await expect(verifyPassword("scrypt$32768$8$1$$", "x")).resolves.toBe(false);
  });
});

describe("createUser and setRoles", () => {
  it("creates a user with a normalised name, several roles and a hashed password, and audits it", async () => {
    const user = await createUser(db, {
      username: "  Dr.Smith ",
      password: TEST_PASSWORD,
      roles: ["annotator", "admin", "annotator"],
      actorId: null,
    });
    expect(user).toMatchObject({
      username: "dr.smith",
      displayName: "dr.smith",
      active: true,
      roles: ["admin", "annotator"],
    });
    const row = db.select().from(users).where(eq(users.id, user.id)).get()!;
    expect(row.passwordHash).toMatch(/^scrypt\$/);
    expect(getUserByUsername(db, "DR.SMITH")?.id).toBe(user.id);
    expect(userEvents(user.id)).toEqual([
      {
        action: "create",
        actorId: null,
        changes: { username: "dr.smith", roles: ["annotator", "admin", "annotator"] },
      },
    ]);
  });

  it("refuses a taken name (whatever its case), a short password, no role and a bad name, creating nothing", async () => {
    await makeUser(db, "ann", ["annotator"]);
    await expect(createUser(db, { username: "ANN", password: TEST_PASSWORD, roles: ["rater"] })).rejects.toThrow(
      ServiceError,
    );
    await expect(createUser(db, { username: "bob", password: "short", roles: ["rater"] })).rejects.toThrow(
      /at least 10 characters/,
    );
    await expect(createUser(db, { username: "bob", password: TEST_PASSWORD, roles: [] })).rejects.toThrow(
      /at least one role/,
    );
    await expect(createUser(db, { username: "bob smith", password: TEST_PASSWORD, roles: ["rater"] })).rejects.toThrow(
      /only letters, digits/,
    );
    await expect(
      createUser(db, { username: "bob", password: TEST_PASSWORD, roles: ["superuser" as "admin"] }),
    ).rejects.toThrow();
    expect(listUsers(db).map((u) => u.username)).toEqual(["ann"]);
  });

  it("replaces roles, audits old and new, and keeps an admin from removing their own admin role", async () => {
    const admin = await makeUser(db, "boss", ["admin"]);
    const other = await makeUser(db, "ann", ["annotator"]);
    setRoles(db, { userId: other.id, roles: ["adjudicator", "rater"], actorId: admin.id });
    expect(getUserByUsername(db, "ann")!.roles).toEqual(["adjudicator", "rater"]);
    expect(userEvents(other.id).at(-1)).toEqual({
      action: "set_roles",
      actorId: admin.id,
      changes: { roles: [["annotator"], ["adjudicator", "rater"]] },
    });

    expect(() => setRoles(db, { userId: admin.id, roles: ["annotator"], actorId: admin.id })).toThrow(
      /your own admin role/,
    );
    expect(getUserByUsername(db, "boss")!.roles).toEqual(["admin"]);
    setRoles(db, { userId: admin.id, roles: ["admin", "rater"], actorId: admin.id });
    expect(getUserByUsername(db, "boss")!.roles).toEqual(["admin", "rater"]);

    expect(() => setRoles(db, { userId: "nobody", roles: ["rater"], actorId: admin.id })).toThrow(
      expect.objectContaining({ status: 404 }),
    );
    expect(() => setRoles(db, { userId: other.id, roles: [], actorId: admin.id })).toThrow(/at least one role/);
  });
});

describe("login and sessions", () => {
  it("logs in by name in any case and issues an httpOnly, SameSite=Lax session cookie", async () => {
    const user = await makeUser(db, "ann", ["annotator"]);
    const result = await login(db, { username: " ANN ", password: TEST_PASSWORD, ip: IP });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.user.id).toBe(user.id);
    expect(result.sessionCookie).toMatch(/^concord_session=[^;]+;/);
    expect(result.sessionCookie).toMatch(/HttpOnly/i);
    expect(result.sessionCookie).toMatch(/SameSite=Lax/i);
    expect(result.sessionCookie).toMatch(/Path=\//);
    expect(result.sessionCookie).not.toMatch(/Secure/); // not production
    const found = validateSessionToken(db, tokenOf(result.sessionCookie));
    expect(found?.session.userId).toBe(user.id);
  });

  it("gives the same answer for a wrong password and an unknown user", async () => {
    await makeUser(db, "ann", ["annotator"]);
    const wrong = await login(db, { username: "ann", password: "wrong-password-1", ip: IP });
    const unknown = await login(db, { username: "nobody", password: TEST_PASSWORD, ip: IP });
    expect(wrong).toEqual({ ok: false, error: "Wrong username or password." });
    expect(unknown).toEqual(wrong);
  });

  it("logout ends the session and blanks the cookie", async () => {
    await makeUser(db, "ann", ["annotator"]);
    const result = await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP });
    if (!result.ok) throw new Error(result.error);
    const token = tokenOf(result.sessionCookie);
    const blank = await logout(db, validateSessionToken(db, token)!.session.id);
    expect(blank).toMatch(/^concord_session=;/);
    expect(validateSessionToken(db, token)).toBeNull();
  });

  it("resetPassword ends every session of the user; only the new password works", async () => {
    const admin = await makeUser(db, "boss", ["admin"]);
    const user = await makeUser(db, "ann", ["annotator"]);
    const first = await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP });
    createSession(db, user.id);
    createSession(db, admin.id);
    expect(sessionCount(user.id)).toBe(2);
    await resetPassword(db, { userId: user.id, password: "brand-new-password", actorId: admin.id });
    expect(sessionCount(user.id)).toBe(0);
    expect(sessionCount(admin.id)).toBe(1);
    if (!first.ok) throw new Error("the first login should have succeeded");
    expect(validateSessionToken(db, tokenOf(first.sessionCookie))).toBeNull();
    expect((await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP })).ok).toBe(false);
    expect((await login(db, { username: "ann", password: "brand-new-password", ip: IP })).ok).toBe(true);
    expect(userEvents(user.id).map((e) => [e.action, e.actorId])).toContainEqual(["reset_password", admin.id]);
    await expect(resetPassword(db, { userId: user.id, password: "short", actorId: admin.id })).rejects.toThrow(
      /at least 10/,
    );
  });

  it("setActive(false) ends sessions and blocks login, keeps the user; setActive(true) lets them back", async () => {
    const admin = await makeUser(db, "boss", ["admin"]);
    const user = await makeUser(db, "ann", ["annotator"]);
    createSession(db, user.id);
    setActive(db, { userId: user.id, active: false, actorId: admin.id });
    expect(sessionCount(user.id)).toBe(0);
    expect(await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP })).toEqual({
      ok: false,
      error: "Wrong username or password.",
    });
    expect(listUsers(db).find((u) => u.id === user.id)).toMatchObject({ active: false, roles: ["annotator"] });
    expect(userEvents(user.id).at(-1)).toEqual({
      action: "deactivate",
      actorId: admin.id,
      changes: { active: [true, false] },
    });

    setActive(db, { userId: user.id, active: true, actorId: admin.id });
    expect((await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP })).ok).toBe(true);

    expect(() => setActive(db, { userId: admin.id, active: false, actorId: admin.id })).toThrow(/deactivate yourself/);
    expect(() => setActive(db, { userId: "nobody", active: false, actorId: admin.id })).toThrow(ServiceError);
  });
});

// Login throttling by (account, address) with growing delays: test/integration/login-throttle.test.ts.

describe("audit trail", () => {
  it("records events with their actor, oldest first, and diffs label snapshots", async () => {
    const admin = await makeUser(db, "boss", ["admin"]);
    recordEvent(db, {
      actorId: admin.id,
      entity: "annotation",
      entityId: 5,
      caseId: 42,
      action: "save",
      changes: { icd10: [null, "F32.1"] },
      at: 1000,
    });
    recordEvent(db, { actorId: null, entity: "annotation", entityId: 5, caseId: 42, action: "lock", at: 2000 });
    recordEvent(db, { actorId: admin.id, entity: "annotation", entityId: 6, caseId: 43, action: "save" });
    expect(listCaseEvents(db, 42).map(({ id: _id, ...e }) => e)).toEqual([
      {
        at: 1000,
        actor: "boss",
        entity: "annotation",
        entityId: "5",
        action: "save",
        changes: { icd10: [null, "F32.1"] },
      },
      { at: 2000, actor: null, entity: "annotation", entityId: "5", action: "lock", changes: {} },
    ]);
    const before: Record<string, unknown> = { icd10: "F32.1", tau: 2, missing: ["a"] };
    expect(diff(before, { icd10: "F32.2", tau: 2, missing: ["a", "b"], notes: undefined })).toEqual({
      icd10: ["F32.1", "F32.2"],
      missing: [["a"], ["a", "b"]],
    });
    expect(diff(null, { icd10: "F32.1" })).toEqual({ icd10: [null, "F32.1"] });
  });
});

describe("login throttling under parallel attempts", () => {
  let db: Db;
  let cleanup: () => void;
  beforeEach(async () => {
    ({ db, cleanup } = freshDb());
    await makeUser(db, "target", ["annotator"]);
  });
  afterEach(() => cleanup());

  it("lets at most 5 of a burst of 20 simultaneous wrong passwords be tried", async () => {
    // Found by review: the count used to be read before the slow password check and written after it.
    const attempts = await Promise.all(
      Array.from({ length: 20 }, () => login(db, { username: "target", password: "wrong-password", ip: "10.9.9.9" })),
    );
    const tried = attempts.filter((a) => !a.ok && !a.throttled).length;
    expect(tried).toBeLessThanOrEqual(5);
    expect(attempts.filter((a) => !a.ok && a.throttled).length).toBeGreaterThanOrEqual(15);
  });
});
