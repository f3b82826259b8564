/**
 * Single sign-on against a real OpenID Connect provider started on loopback (docs/security.md, "Single sign-on"):
 * a first sign-in creates a user with no role, the next finds the same user by issuer and subject; a wrong state, a
 * replayed code, an expired ID token and a nonce mismatch are refused; a deactivated user is refused; roles come from
 * a configured claim and follow it; a subject links to an existing user only when configured; a Concord second
 * factor still applies; and with local passwords off the password login, changes and reset links refuse, except the
 * break-glass admin. Every sign-in, refusal, link and creation is an audit event.
 */
import { and, eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { events, sessions, userIdentities, users } from "../../db/schema";
import { validateSessionToken } from "../../app/accounts/auth.server";
import { completeOidcSignIn, rolesFromClaim, startOidcSignIn } from "../../app/accounts/oidc.server";
import { confirmSecondFactor, startSecondFactor } from "../../app/accounts/second-factor.server";
import {
  changeOwnPassword,
  createResetLink,
  passwordState,
  resetLinkUser,
} from "../../app/accounts/self-service.server";
import { signInConfigProblem } from "../../app/accounts/sign-in-config";
import { getUserById, login, setActive } from "../../app/accounts/users.server";
import type { Db } from "../../app/platform/db.server";
import { ServiceError } from "../../app/platform/service-error";
import { action as usersAction, loader as usersLoader } from "../../app/routes/admin.users";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";
import { bodyOf, signedIn } from "../support/route-calls";
import { signInAt, startProvider, type TestProvider } from "../support/oidc-provider";
import { Secret, TOTP } from "otpauth";

const CALLBACK = "http://127.0.0.1:3999/login/oidc/callback";
const IP = "192.0.2.9";
let provider: TestProvider;
let db: Db;
let cleanup: () => void;
/** What the sign-in wrote to the server's log: the library's reason for each refusal. */
let logged: string[] = [];
const quiet = (line: string) => void logged.push(line);

beforeAll(async () => {
  provider = await startProvider([CALLBACK]);
});
afterAll(() => provider.stop());
beforeEach(() => {
  ({ db, cleanup } = freshDb());
  for (const [k, v] of Object.entries(provider.env(CALLBACK))) vi.stubEnv(k, v);
  provider.accounts.clear();
  logged = [];
  provider.accounts.set("s-1001", { preferred_username: "Dr.Nadia", name: "Nadia Osei", email: "n.osei@uni.example" });
});
afterEach(() => {
  vi.unstubAllEnvs();
  cleanup();
});

/** A sign-in from start to callback: the callback address and the state cookie, as the browser would bring them. */
async function throughProvider(login: string, change?: (authorizationUrl: URL) => void, now?: number) {
  const start = await startOidcSignIn(db, { redirectTo: "/annotate", now });
  const url = new URL(start.url);
  change?.(url);
  const callbackUrl = await signInAt(url.href, login, CALLBACK);
  const cookieHeader = start.cookie.split(";")[0]!;
  return { callbackUrl, cookieHeader };
}

const complete = (c: { callbackUrl: URL; cookieHeader: string }, now?: number) =>
  completeOidcSignIn(db, { ...c, ip: IP, now, log: quiet });

const eventsOf = (userId: string) =>
  db
    .select()
    .from(events)
    .where(and(eq(events.entity, "user"), eq(events.entityId, userId)))
    .all()
    .map((e) => ({ action: e.action, changes: e.changes }));

const userCount = () => db.select().from(users).all().length;

describe("signing in through the provider", () => {
  it("asks for the code with PKCE (S256), a state and a nonce, and keeps them in a signed, httpOnly cookie", async () => {
    const start = await startOidcSignIn(db, { redirectTo: "/" });
    const url = new URL(start.url);
    expect(url.origin).toBe(provider.issuer);
    expect(url.searchParams.get("response_type")).toBe("code");
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("state")).toMatch(/.{20,}/);
    expect(url.searchParams.get("nonce")).toMatch(/.{20,}/);
    expect(url.searchParams.get("redirect_uri")).toBe(CALLBACK);
    expect(url.searchParams.get("prompt")).toBeNull();
    // For shared computers: the provider is asked to make the person sign in again each time.
    vi.stubEnv("CONCORD_OIDC_ALWAYS_LOGIN", "1");
    expect(new URL((await startOidcSignIn(db, { redirectTo: "/" })).url).searchParams.get("prompt")).toBe("login");
    expect(start.cookie).toMatch(/^concord_oidc=[^;]+\.[^;]+; Max-Age=600; Path=\/login\/oidc; HttpOnly; SameSite=Lax/);
    // A cookie whose payload was changed is not accepted.
    const [name, rest] = start.cookie.split(";")[0]!.split("=");
    const [payload, mac] = rest!.split(".");
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), redirectTo: "/admin" }),
    ).toString("base64url");
    const r = await completeOidcSignIn(db, {
      callbackUrl: new URL(`${CALLBACK}?code=x&state=y`),
      cookieHeader: `${name}=${forged}.${mac}`,
      ip: IP,
      log: quiet,
    });
    expect(r).toMatchObject({ ok: false, error: expect.stringContaining("Start again") });
  });

  it("creates a user with no role at the first sign-in, and finds the same user by issuer and subject after", async () => {
    const first = await complete(await throughProvider("s-1001"));
    expect(first).toMatchObject({ ok: true, created: true, redirectTo: "/annotate" });
    if (first.ok !== true) throw new Error("not signed in");
    const user = getUserById(db, first.userId)!;
    expect(user).toMatchObject({ username: "dr.nadia", displayName: "Nadia Osei", roles: [], active: true });
    expect(passwordState(db, user.id)).toBe("none");
    const token = /concord_session=([a-z2-7]+)/.exec(first.sessionCookie)![1]!;
    expect(validateSessionToken(db, token)!.user.id).toBe(user.id);
    expect(db.select().from(userIdentities).all()).toEqual([
      expect.objectContaining({ issuer: provider.issuer, subject: "s-1001", userId: user.id }),
    ]);
    // The same subject again, even with another username at the provider: the same user, no new one.
    provider.accounts.set("s-1001", { preferred_username: "nadia.o", name: "Nadia Osei" });
    const second = await complete(await throughProvider("s-1001"));
    expect(second).toMatchObject({ ok: true, created: false, userId: user.id });
    expect(userCount()).toBe(1);
    // No password works for a user made by the provider.
    expect((await login(db, { username: "dr.nadia", password: "!sso", ip: IP })).ok).toBe(false);
    expect(eventsOf(user.id).map((e) => e.action)).toEqual(["create", "sign_in", "sign_in"]);
    expect(eventsOf(user.id)[0]!.changes).toMatchObject({ username: "dr.nadia", roles: [], via: "single_sign_on" });
    expect(JSON.stringify(eventsOf(user.id))).not.toMatch(/code|token|secret/i);
  });

  it("refuses a callback whose state is not the one it sent", async () => {
    const c = await throughProvider("s-1001");
    c.callbackUrl.searchParams.set("state", "not-the-state-we-sent");
    expect(await complete(c)).toMatchObject({ ok: false });
    expect(logged.join("\n")).toMatch(/"state"/);
    expect(userCount()).toBe(0);
  });

  it("refuses a replayed code", async () => {
    const c = await throughProvider("s-1001");
    expect((await complete(c)).ok).toBe(true);
    const sessionsBefore = db.select().from(sessions).all().length;
    const again = await complete(c);
    expect(again).toMatchObject({ ok: false, error: expect.stringContaining("already used") });
    expect(logged.join("\n")).toMatch(/invalid_grant/);
    expect(db.select().from(sessions).all().length).toBe(sessionsBefore);
  });

  it("refuses an ID token that has expired by this server's clock", async () => {
    // Concord's clock two hours ahead of the provider's: the ID token (valid one hour) is past its exp.
    const ahead = Date.now() + 2 * 3600_000;
    const c = await throughProvider("s-1001", undefined, ahead);
    expect(await complete(c, ahead)).toMatchObject({ ok: false });
    expect(logged.join("\n")).toMatch(/"exp"/);
    expect(userCount()).toBe(0);
  });

  it("refuses an ID token whose nonce is not the one this browser's sign-in sent", async () => {
    const c = await throughProvider("s-1001", (url) => url.searchParams.set("nonce", "another-nonce-0123456789"));
    expect(await complete(c)).toMatchObject({ ok: false });
    expect(logged.join("\n")).toMatch(/"nonce"/);
    expect(userCount()).toBe(0);
  });

  it("refuses a callback without this browser's state cookie, or with one that has expired", async () => {
    const c = await throughProvider("s-1001");
    expect(await complete({ ...c, cookieHeader: "" })).toMatchObject({ ok: false, error: /another browser/ });
    expect(await complete(c, Date.now() + 11 * 60_000)).toMatchObject({ ok: false, error: /took too long/ });
  });

  it("refuses a deactivated user and records the refusal", async () => {
    const first = await complete(await throughProvider("s-1001"));
    if (first.ok !== true) throw new Error("not signed in");
    const admin = await makeUser(db, "boss", ["admin"]);
    setActive(db, { userId: first.userId, active: false, actorId: admin.id });
    const again = await complete(await throughProvider("s-1001"));
    expect(again).toMatchObject({ ok: false, error: expect.stringContaining("deactivated") });
    expect(db.select().from(sessions).where(eq(sessions.userId, first.userId)).all()).toEqual([]);
    expect(eventsOf(first.userId).at(-1)).toMatchObject({
      action: "sign_in_refused",
      changes: { reason: "deactivated" },
    });
  });

  it("takes the roles from a configured claim, through the role map, and follows the claim at each sign-in", async () => {
    vi.stubEnv("CONCORD_OIDC_ROLES_CLAIM", "groups");
    vi.stubEnv("CONCORD_OIDC_ROLE_MAP", "psych-raters=rater,concord-admins=admin,psychiatrists=annotator");
    provider.accounts.set("s-2002", { preferred_username: "kofi", groups: ["psychiatrists", "staff"] });
    const first = await complete(await throughProvider("s-2002"));
    if (first.ok !== true) throw new Error("not signed in");
    expect(getUserById(db, first.userId)!.roles).toEqual(["annotator"]);
    provider.accounts.set("s-2002", { preferred_username: "kofi", groups: ["psych-raters", "concord-admins"] });
    const second = await complete(await throughProvider("s-2002"));
    if (second.ok !== true) throw new Error("not signed in");
    expect(getUserById(db, first.userId)!.roles).toEqual(["admin", "rater"]);
    expect(eventsOf(first.userId).find((e) => e.action === "set_roles")!.changes).toMatchObject({
      roles: [["annotator"], ["admin", "rater"]],
      via: "single_sign_on",
    });
    // The first session ended with the change of roles; the new one holds.
    const first_token = /concord_session=([a-z2-7]+)/.exec(first.sessionCookie)![1]!;
    expect(validateSessionToken(db, first_token)).toBeNull();
    // A claim naming no configured role: the user keeps an account and has no role.
    provider.accounts.set("s-2002", { preferred_username: "kofi", groups: ["staff"] });
    await complete(await throughProvider("s-2002"));
    expect(getUserById(db, first.userId)!.roles).toEqual([]);
    // Without a map, claim values that are role names.
    expect(rolesFromClaim(["adjudicator", "x"], null)).toEqual(["adjudicator"]);
    expect(rolesFromClaim("annotator rater", null)).toEqual(["annotator", "rater"]);
  });

  it("links an existing user of the same username only when configured", async () => {
    const nadia = await makeUser(db, "dr.nadia", ["annotator"]);
    const separate = await complete(await throughProvider("s-1001"));
    if (separate.ok !== true) throw new Error("not signed in");
    expect(separate.userId).not.toBe(nadia.id);
    expect(getUserById(db, separate.userId)!.username).toBe("dr.nadia-2");

    vi.stubEnv("CONCORD_OIDC_LINK_BY_USERNAME", "1");
    provider.accounts.set("s-3003", { preferred_username: "dr.nadia" });
    const linked = await complete(await throughProvider("s-3003"));
    expect(linked).toMatchObject({ ok: true, created: false, userId: nadia.id });
    expect(eventsOf(nadia.id).map((e) => e.action)).toEqual(["create", "link_identity", "sign_in"]);
  });

  it("sends a user with a Concord second factor on to its code step, with no session yet", async () => {
    const first = await complete(await throughProvider("s-1001"));
    if (first.ok !== true) throw new Error("not signed in");
    startSecondFactor(db, first.userId);
    const secret = db.select().from(users).where(eq(users.id, first.userId)).get()!.totpSecret!;
    await confirmSecondFactor(db, {
      userId: first.userId,
      sessionId: validateSessionToken(db, /concord_session=([a-z2-7]+)/.exec(first.sessionCookie)![1]!)!.session.id,
      code: new TOTP({ secret: Secret.fromBase32(secret), period: 30 }).generate(),
    });
    const before = db.select().from(sessions).where(eq(sessions.userId, first.userId)).all().length;
    const again = await complete(await throughProvider("s-1001"));
    expect(again).toMatchObject({ ok: "second-factor", challengeCookie: expect.stringMatching(/^concord_challenge=/) });
    expect(db.select().from(sessions).where(eq(sessions.userId, first.userId)).all().length).toBe(before);
  });
});

describe("local passwords switched off", () => {
  it("refuses password logins, changes and reset links, except the break-glass admin's login", async () => {
    const ann = await makeUser(db, "ann", ["annotator"]);
    const boss = await makeUser(db, "boss", ["admin"]);
    const other = await makeUser(db, "olga", ["annotator"]);
    const link = createResetLink(db, { userId: ann.id, actorId: boss.id });
    const annLogin = await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP });
    if (!annLogin.ok) throw new Error(annLogin.error);
    vi.stubEnv("CONCORD_LOCAL_PASSWORDS", "off");
    vi.stubEnv("CONCORD_BREAK_GLASS_ADMIN", "boss");

    expect(await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP })).toMatchObject({
      ok: false,
      error: expect.stringContaining("switched off"),
    });
    const sessionId = validateSessionToken(db, /concord_session=([a-z2-7]+)/.exec(annLogin.sessionCookie)![1]!)!.session
      .id;
    expect(
      await changeOwnPassword(db, {
        userId: ann.id,
        sessionId,
        current: TEST_PASSWORD,
        password: "a new long passphrase",
        ip: IP,
      }),
    ).toMatchObject({ ok: false, errors: { form: expect.stringContaining("switched off") } });
    expect(passwordState(db, ann.id)).toBe("off");
    expect(resetLinkUser(db, link.token)).toBeNull();
    expect(() => createResetLink(db, { userId: other.id, actorId: boss.id })).toThrow(ServiceError);

    // The break-glass admin logs in with a password, and it is an audit event.
    expect((await login(db, { username: "boss", password: TEST_PASSWORD, ip: IP })).ok).toBe(true);
    expect(eventsOf(boss.id).at(-1)!.action).toBe("break_glass_login");
    // Named as break-glass but not an admin: refused like a wrong password.
    vi.stubEnv("CONCORD_BREAK_GLASS_ADMIN", "olga");
    expect((await login(db, { username: "olga", password: TEST_PASSWORD, ip: IP })).ok).toBe(false);
    // Passwords on again: everything works as before.
    vi.stubEnv("CONCORD_LOCAL_PASSWORDS", "on");
    expect((await login(db, { username: "ann", password: TEST_PASSWORD, ip: IP })).ok).toBe(true);
    expect(resetLinkUser(db, link.token)).toMatchObject({ username: "ann" });
  });

  it("the users page makes a user without a Concord password only when a first sign-in takes it over", async () => {
    await makeUser(db, "boss", ["admin"]);
    const { post } = await signedIn(db, "boss");
    const create = async (fields: Record<string, string>) =>
      bodyOf(
        await usersAction({
          request: post("/admin/users", { intent: "create", roles: "annotator", ...fields }),
          params: {},
          context: {},
        }),
      );
    const mode = async () => {
      const out = (await usersLoader({ request: post("/admin/users", {}), params: {}, context: {} })) as {
        signIn: { create: string };
      };
      return out.signIn.create;
    };
    // Passwords on: an initial password is needed.
    expect(await mode()).toBe("password");
    expect((await create({ username: "p1" })).body.errors).toMatchObject({ password: expect.stringContaining("10") });
    // Off, and sign-ins not linked by username: no one could sign in as a user made here, so none is made.
    vi.stubEnv("CONCORD_LOCAL_PASSWORDS", "off");
    expect(await mode()).toBe("closed");
    expect((await create({ username: "p2", password: "a long enough passphrase" })).body.errors).toMatchObject({
      _form: expect.stringContaining("first sign-in"),
    });
    expect(db.select().from(users).where(eq(users.username, "p2")).get()).toBeUndefined();
    // Off and linked by username: the user is made with no password, and the first sign-in takes it over.
    vi.stubEnv("CONCORD_OIDC_LINK_BY_USERNAME", "1");
    expect(await mode()).toBe("sign-in");
    expect((await create({ username: "dr.nadia" })).body.message).toBe("Created dr.nadia.");
    const made = db.select().from(users).where(eq(users.username, "dr.nadia")).get()!;
    expect(await login(db, { username: "dr.nadia", password: "!sso", ip: IP })).toMatchObject({ ok: false });
    expect(await complete(await throughProvider("s-1001"))).toMatchObject({
      ok: true,
      created: false,
      userId: made.id,
    });
  });

  it("a configuration that would let nobody in, or is half written, stops the start with one line", () => {
    expect(signInConfigProblem({ CONCORD_LOCAL_PASSWORDS: "off" })).toMatch(/needs single sign-on/);
    expect(signInConfigProblem({ CONCORD_OIDC_ISSUER: "https://idp.example.org" })).toMatch(
      /half configured: set CONCORD_OIDC_CLIENT_ID, CONCORD_OIDC_CLIENT_SECRET, CONCORD_OIDC_REDIRECT_URI/,
    );
    const full = provider.env(CALLBACK);
    expect(signInConfigProblem({ ...full, CONCORD_LOCAL_PASSWORDS: "off" })).toBeNull();
    expect(signInConfigProblem({ ...full, CONCORD_OIDC_ISSUER: "http://idp.example.org" })).toMatch(/use https/);
    expect(signInConfigProblem({ ...full, CONCORD_OIDC_REDIRECT_URI: "https://c.example.org/cb" })).toMatch(
      /\/login\/oidc\/callback/,
    );
    expect(signInConfigProblem({ ...full, CONCORD_OIDC_ROLE_MAP: "staff=boss" })).toMatch(/VALUE=ROLE/);
    expect(signInConfigProblem({ CONCORD_LOCAL_PASSWORDS: "maybe" })).toMatch(/use on or off/);
  });
});
