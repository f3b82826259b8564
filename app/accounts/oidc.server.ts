/**
 * Single sign-on through the institution's OpenID Connect provider (docs/security.md, "Single sign-on"), with the
 * `openid-client` library: the authorization code flow with PKCE (S256), a state and a nonce.
 *
 * - Starting: a random state, nonce and PKCE verifier are kept in a short-lived cookie signed with the app secret
 *   (httpOnly, SameSite=Lax, `Path=/login/oidc`, ten minutes); the browser goes to the provider.
 * - The callback: the cookie's signature and age are checked, then `openid-client` checks the state, exchanges the
 *   code with the verifier and the client secret, and checks the ID token (signature, issuer, audience, expiry, nonce).
 *   A code is exchanged once: the provider refuses a replayed one.
 * - The user is found by the provider's issuer and subject (`user_identities`), never by a name. A first sign-in
 *   links an existing user of that username (only with CONCORD_OIDC_LINK_BY_USERNAME=1) or creates a user, with no
 *   role or with the roles of the configured claim. With a roles claim, the roles follow it at every sign-in.
 * - A deactivated user is refused. A user with a Concord second factor goes on to its code step, as after a password.
 * - Every sign-in, refusal, link and creation is an audit event (never a token or code).
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { and, eq } from "drizzle-orm";
import * as client from "openid-client";
import { ROLES, userIdentities, userRoles, users, type Role } from "../../db/schema";
import { recordEvent } from "../audit/audit.server";
import type { Db, DbOrTx } from "../platform/db.server";
import {
  appSecret,
  createSession,
  deleteExpiredSessions,
  invalidateSessionToken,
  invalidateUserSessions,
  randomBase32,
  secureCookies,
  sessionCookie,
  type SessionDevice,
} from "./auth.server";
import { NO_PASSWORD } from "./password.server";
import { challengeCookie, createChallenge } from "./second-factor.server";
import { oidcSettings, type OidcSettings } from "./sign-in-config";

export const OIDC_COOKIE = "concord_oidc";
/** How long a sign-in may take at the provider before its state is forgotten. */
export const OIDC_STATE_MINUTES = 10;

// The provider's metadata, fetched once per issuer and process (a failed fetch is retried at the next sign-in).
const discovered = new Map<string, Promise<client.Configuration>>();

function discover(s: OidcSettings): Promise<client.Configuration> {
  const key = `${s.issuer}\n${s.clientId}`;
  let found = discovered.get(key);
  if (!found) {
    const url = new URL(s.issuer);
    // Plain http only for a provider on this machine's loopback address (sign-in-config.ts refuses any other).
    const insecure = url.protocol === "http:";
    found = client.discovery(
      url,
      s.clientId,
      undefined,
      client.ClientSecretBasic(s.clientSecret),
      insecure ? { execute: [client.allowInsecureRequests] } : undefined,
    );
    found.catch(() => discovered.delete(key));
    discovered.set(key, found);
  }
  return found;
}

/** A configuration of its own for one sign-in (so that the clock of one does not change another's). */
async function configurationFor(s: OidcSettings, skewSeconds: number): Promise<client.Configuration> {
  const shared = await discover(s);
  const config = new client.Configuration(
    shared.serverMetadata(),
    s.clientId,
    skewSeconds ? { [client.clockSkew]: skewSeconds } : undefined,
    client.ClientSecretBasic(s.clientSecret),
  );
  if (new URL(s.issuer).protocol === "http:") client.allowInsecureRequests(config);
  return config;
}

interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  redirectTo: string;
  expiresAt: number;
}

function sign(db: Db, payload: string): string {
  return createHmac("sha256", appSecret(db))
    .update("oidc:" + payload)
    .digest("base64url");
}

function cookieAttributes(): string {
  return `Path=/login/oidc; HttpOnly; SameSite=Lax${secureCookies() ? "; Secure" : ""}`;
}

export function blankOidcCookie(): string {
  return `${OIDC_COOKIE}=; Max-Age=0; ${cookieAttributes()}`;
}

function readPending(db: Db, cookieHeader: string, now: number): PendingSignIn | null {
  for (const part of cookieHeader.split(";")) {
    const at = part.indexOf("=");
    if (at < 0 || part.slice(0, at).trim() !== OIDC_COOKIE) continue;
    const [payload, mac] = part
      .slice(at + 1)
      .trim()
      .split(".");
    if (!payload || !mac) return null;
    const want = Buffer.from(sign(db, payload));
    const got = Buffer.from(mac);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return null;
    try {
      const p = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as PendingSignIn;
      return typeof p.expiresAt === "number" && p.expiresAt > now ? p : null;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * Starts a sign-in at the provider: the address to send the browser to, and the cookie that keeps the state, nonce
 * and PKCE verifier until the callback.
 */
export async function startOidcSignIn(
  db: Db,
  input: { redirectTo: string; now?: number },
): Promise<{ url: string; cookie: string }> {
  const s = oidcSettings();
  if (!s) throw new Error("Single sign-on is not configured.");
  const config = await discover(s);
  const now = input.now ?? Date.now();
  const pending: PendingSignIn = {
    state: client.randomState(),
    nonce: client.randomNonce(),
    verifier: client.randomPKCECodeVerifier(),
    redirectTo: input.redirectTo,
    expiresAt: now + OIDC_STATE_MINUTES * 60_000,
  };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: s.redirectUri,
    scope: s.scopes,
    response_type: "code",
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: "S256",
    // Shared ward computers: the provider asks again even while it holds a session (docs/security.md).
    ...(s.alwaysLogin ? { prompt: "login" } : {}),
  });
  const payload = Buffer.from(JSON.stringify(pending)).toString("base64url");
  const cookie = `${OIDC_COOKIE}=${payload}.${sign(db, payload)}; Max-Age=${OIDC_STATE_MINUTES * 60}; ${cookieAttributes()}`;
  return { url: url.href, cookie };
}

export type OidcResult =
  | { ok: true; sessionCookie: string; redirectTo: string; userId: string; created: boolean }
  /** The user has a Concord second factor: its code step comes next (docs/security.md, "Second factor"). */
  | { ok: "second-factor"; challengeCookie: string; userId: string }
  | { ok: false; error: string };

/** The provider accounts linked to a user, for the admin's user page (the subject is an id, not a secret). */
export function identitiesOf(
  db: DbOrTx,
  userId: string,
): { issuer: string; subject: string; createdAt: number; lastSignInAt: number | null }[] {
  return db
    .select({
      issuer: userIdentities.issuer,
      subject: userIdentities.subject,
      createdAt: userIdentities.createdAt,
      lastSignInAt: userIdentities.lastSignInAt,
    })
    .from(userIdentities)
    .where(eq(userIdentities.userId, userId))
    .all();
}

/** The roles a claim's value names: a string or a list of strings, through the role map when there is one. */
export function rolesFromClaim(value: unknown, map: Map<string, Role> | null): Role[] {
  const values = Array.isArray(value) ? value : typeof value === "string" ? value.split(/[\s,]+/) : [];
  const roles = new Set<Role>();
  for (const v of values) {
    if (typeof v !== "string") continue;
    const role = map ? map.get(v) : (ROLES as readonly string[]).includes(v) ? (v as Role) : undefined;
    if (role) roles.add(role);
  }
  return ROLES.filter((r) => roles.has(r));
}

/** A username for a new user from the configured claim (or the e-mail's local part), free in Concord. */
function newUsername(tx: DbOrTx, claims: Record<string, unknown>, s: OidcSettings): string {
  const raw = [claims[s.usernameClaim], typeof claims.email === "string" ? claims.email.split("@")[0] : undefined]
    .filter((v): v is string => typeof v === "string")
    .map((v) =>
      v
        .toLowerCase()
        .replace(/[^a-z0-9._-]+/g, "-")
        .replace(/^-+|-+$/g, "")
        .slice(0, 56),
    )
    .find((v) => v.length >= 2);
  const base = raw ?? "user-" + createHash("sha256").update(String(claims.sub)).digest("hex").slice(0, 8);
  for (let n = 1; ; n++) {
    const name = n === 1 ? base : `${base}-${n}`;
    if (!tx.select({ id: users.id }).from(users).where(eq(users.username, name)).get()) return name;
  }
}

function displayNameOf(claims: Record<string, unknown>, fallback: string): string {
  const parts = [claims.given_name, claims.family_name].filter((v) => typeof v === "string" && v.trim());
  const name = typeof claims.name === "string" && claims.name.trim() ? claims.name : parts.join(" ");
  return (name.trim() || fallback).slice(0, 100);
}

function rolesOf(tx: DbOrTx, userId: string): Role[] {
  const rows = tx.select({ role: userRoles.role }).from(userRoles).where(eq(userRoles.userId, userId)).all();
  return ROLES.filter((r) => rows.some((x) => x.role === r));
}

function audit(tx: DbOrTx, actorId: string | null, userId: string, action: string, changes: object) {
  recordEvent(tx, { actorId, entity: "user", entityId: userId, action, changes });
}

/** The library's reason for a refusal, for the server's log: names and messages, never a token, code or value. */
function reasonForLog(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const parts = [`${e.name}${"code" in e ? ` ${String(e.code)}` : ""}: ${e.message}`];
  if ("error" in e && typeof e.error === "string") parts.push(`error=${e.error}`);
  if (e.cause instanceof Error) parts.push(e.cause.message);
  return parts.join("; ");
}

/** Why a callback failed, in words for the person signing in; the library's reason goes to the server's log. */
function describeFailure(e: unknown): string {
  if (e instanceof client.AuthorizationResponseError)
    return `The sign-in was not completed at the provider (${e.error}). Start again.`;
  if (e instanceof client.ResponseBodyError && e.error === "invalid_grant")
    return "This sign-in response was already used or has expired. Start again.";
  return "The sign-in could not be checked. Start again; if it keeps failing, tell your Concord admin.";
}

/**
 * Completes a sign-in from the provider's callback: checks it, finds or makes the user, and makes the session (or
 * the second factor's code step). `now` (ms) is this server's clock, which a test may set apart from the provider's.
 */
export async function completeOidcSignIn(
  db: Db,
  input: {
    callbackUrl: URL;
    cookieHeader: string;
    ip: string;
    device?: SessionDevice;
    previousSessionToken?: string | null;
    now?: number;
    log?: (line: string) => void;
  },
): Promise<OidcResult> {
  const s = oidcSettings();
  if (!s) return { ok: false, error: "Single sign-on is not configured on this server." };
  const now = input.now ?? Date.now();
  const pending = readPending(db, input.cookieHeader, now);
  if (!pending)
    return {
      ok: false,
      error: "This sign-in took too long or was started in another browser. Start again.",
    };
  // The callback's parameters on the registered address (behind a proxy the request's own URL is the proxy's).
  const current = new URL(s.redirectUri);
  current.search = input.callbackUrl.search;
  let claims: Record<string, unknown>;
  try {
    const config = await configurationFor(s, Math.round((now - Date.now()) / 1000));
    const tokens = await client.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    claims = { ...tokens.claims()! };
    // Many providers put the profile claims only in UserInfo: fetched when a claim Concord reads is missing, with
    // the ID token's subject required to match (its issuer and subject are never taken from UserInfo).
    const wanted = [s.usernameClaim, s.rolesClaim, "name", "email"].filter((c): c is string => !!c);
    if (wanted.some((c) => !(c in claims)) && config.serverMetadata().userinfo_endpoint && tokens.access_token) {
      const info = await client.fetchUserInfo(config, tokens.access_token, String(claims.sub));
      claims = { ...info, ...claims };
    }
  } catch (e) {
    (input.log ?? console.warn)(`Single sign-on refused a callback: ${reasonForLog(e).slice(0, 300)}`);
    return { ok: false, error: describeFailure(e) };
  }
  const issuer = String(claims.iss);
  const subject = String(claims.sub);
  const claimedRoles = s.rolesClaim ? rolesFromClaim(claims[s.rolesClaim], s.roleMap) : null;
  return db.transaction((tx): OidcResult => {
    let created = false;
    let identity = tx
      .select()
      .from(userIdentities)
      .where(and(eq(userIdentities.issuer, issuer), eq(userIdentities.subject, subject)))
      .get();
    if (!identity) {
      const wanted = typeof claims[s.usernameClaim] === "string" ? String(claims[s.usernameClaim]).toLowerCase() : "";
      const existing =
        s.linkByUsername && wanted
          ? tx.select({ id: users.id }).from(users).where(eq(users.username, wanted)).get()
          : undefined;
      const linkedAlready =
        existing &&
        tx
          .select({ subject: userIdentities.subject })
          .from(userIdentities)
          .where(and(eq(userIdentities.userId, existing.id), eq(userIdentities.issuer, issuer)))
          .get();
      let userId: string;
      if (existing && !linkedAlready) {
        userId = existing.id;
        audit(tx, userId, userId, "link_identity", { issuer, by: "username" });
      } else {
        const username = newUsername(tx, claims, s);
        userId = randomBase32(10);
        tx.insert(users)
          .values({
            id: userId,
            username,
            displayName: displayNameOf(claims, username),
            passwordHash: NO_PASSWORD,
            createdAt: now,
          })
          .run();
        const roles = claimedRoles ?? [];
        for (const role of roles) tx.insert(userRoles).values({ userId, role }).run();
        audit(tx, null, userId, "create", { username, roles, via: "single_sign_on", issuer });
        created = true;
      }
      identity = { issuer, subject, userId, createdAt: now, lastSignInAt: null };
      tx.insert(userIdentities).values(identity).run();
    }
    const userId = identity.userId;
    const row = tx.select().from(users).where(eq(users.id, userId)).get()!;
    if (!row.active) {
      audit(tx, userId, userId, "sign_in_refused", { issuer, reason: "deactivated" });
      return { ok: false, error: "Your Concord account is deactivated. Ask a Concord admin if this is a mistake." };
    }
    // Roles from the provider's claim follow it at every sign-in; a change ends the user's other sessions.
    if (claimedRoles && !created) {
      const before = rolesOf(tx, userId);
      if (before.join() !== claimedRoles.join()) {
        tx.delete(userRoles).where(eq(userRoles.userId, userId)).run();
        for (const role of claimedRoles) tx.insert(userRoles).values({ userId, role }).run();
        invalidateUserSessions(tx, userId);
        audit(tx, null, userId, "set_roles", { roles: [before, claimedRoles], via: "single_sign_on" });
      }
    }
    tx.update(userIdentities)
      .set({ lastSignInAt: now })
      .where(and(eq(userIdentities.issuer, issuer), eq(userIdentities.subject, subject)))
      .run();
    const secondFactor = row.totpEnabledAt !== null && row.totpSecret !== null;
    audit(tx, userId, userId, "sign_in", {
      method: "single_sign_on",
      issuer,
      ...(secondFactor ? { then: "second_factor" } : {}),
    });
    if (secondFactor) {
      const token = createChallenge(tx, userId, pending.redirectTo, now);
      return { ok: "second-factor", challengeCookie: challengeCookie(token), userId };
    }
    if (input.previousSessionToken) invalidateSessionToken(tx, input.previousSessionToken);
    deleteExpiredSessions(tx);
    const { token } = createSession(tx, userId, now, { userAgent: input.device?.userAgent, ip: input.ip });
    return { ok: true, sessionCookie: sessionCookie(token), redirectTo: pending.redirectTo, userId, created };
  });
}
