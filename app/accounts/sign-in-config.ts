/**
 * How people sign in, read from the server's configuration (docs/deploying.md, "Configuration"; docs/security.md,
 * "Single sign-on"): the institution's OpenID Connect provider, and whether local passwords work at all. Read once
 * at start (`signInConfigProblem`, which stops a start on a half-written configuration) and at each use, so that a
 * test can change the environment between cases.
 */
import { ROLES, type Role } from "../../db/vocabulary";

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The callback address registered at the provider, exactly (`…/login/oidc/callback`). */
  redirectUri: string;
  scopes: string;
  /** What the login page's button names: "Sign in with <label>". */
  label: string;
  /** The claim a new user's username comes from. */
  usernameClaim: string;
  /** The claim roles come from at every sign-in; null: new users have no role until an admin grants one. */
  rolesClaim: string | null;
  /** Claim value → role; null: a claim value that is a role's name is that role. */
  roleMap: Map<string, Role> | null;
  /** On a subject's first sign-in, link it to an existing user of the same username instead of creating one. */
  linkByUsername: boolean;
  /** Ask the provider to make the person sign in again every time (`prompt=login`): for shared computers. */
  alwaysLogin: boolean;
}

export interface PasswordSettings {
  /** False when CONCORD_LOCAL_PASSWORDS=off: the password form, changes and reset links refuse. */
  on: boolean;
  /** With passwords off, the one admin who may still log in with a password (docs/decisions/0017-local-passwords-off-and-break-glass.md), or null. */
  breakGlassAdmin: string | null;
}

type Env = Record<string, string | undefined>;

/** What the password pages say when local passwords are switched off (docs/security.md, "Single sign-on"). */
export const PASSWORDS_OFF = "Passwords are switched off here: you sign in with your institution's account.";

const OIDC_REQUIRED = [
  "CONCORD_OIDC_ISSUER",
  "CONCORD_OIDC_CLIENT_ID",
  "CONCORD_OIDC_CLIENT_SECRET",
  "CONCORD_OIDC_REDIRECT_URI",
] as const;

class SignInConfigError extends Error {}

function parseUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SignInConfigError(`${name}: "${value}" is not a URL.`);
  }
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback))
    throw new SignInConfigError(`${name}: use https:// (plain http only on this machine's loopback address).`);
  return url;
}

function parseRoleMap(value: string): Map<string, Role> {
  const map = new Map<string, Role>();
  for (const entry of value.split(",")) {
    if (!entry.trim()) continue;
    const at = entry.lastIndexOf("=");
    const claim = at < 0 ? "" : entry.slice(0, at).trim();
    const role = at < 0 ? "" : entry.slice(at + 1).trim();
    if (!claim || !(ROLES as readonly string[]).includes(role))
      throw new SignInConfigError(
        `CONCORD_OIDC_ROLE_MAP: "${entry.trim()}" is not VALUE=ROLE with ROLE one of ${ROLES.join(", ")}.`,
      );
    map.set(claim, role as Role);
  }
  return map;
}

/** The provider's settings, or null when single sign-on is not configured. Throws on a half-written configuration. */
export function oidcSettings(env: Env = process.env): OidcSettings | null {
  const given = OIDC_REQUIRED.filter((k) => env[k]?.trim());
  if (given.length === 0) return null;
  const missing = OIDC_REQUIRED.filter((k) => !env[k]?.trim());
  if (missing.length) throw new SignInConfigError(`Single sign-on is half configured: set ${missing.join(", ")}.`);
  parseUrl("CONCORD_OIDC_ISSUER", env.CONCORD_OIDC_ISSUER!.trim());
  const redirect = parseUrl("CONCORD_OIDC_REDIRECT_URI", env.CONCORD_OIDC_REDIRECT_URI!.trim());
  if (redirect.pathname !== "/login/oidc/callback" || redirect.search)
    throw new SignInConfigError(`CONCORD_OIDC_REDIRECT_URI must end in /login/oidc/callback (Concord's callback).`);
  const link = env.CONCORD_OIDC_LINK_BY_USERNAME?.trim() ?? "";
  if (!["", "0", "1"].includes(link)) throw new SignInConfigError(`CONCORD_OIDC_LINK_BY_USERNAME: use 0 or 1.`);
  const always = env.CONCORD_OIDC_ALWAYS_LOGIN?.trim() ?? "";
  if (!["", "0", "1"].includes(always)) throw new SignInConfigError(`CONCORD_OIDC_ALWAYS_LOGIN: use 0 or 1.`);
  const scopes = env.CONCORD_OIDC_SCOPES?.trim() || "openid profile email";
  if (!scopes.split(/\s+/).includes("openid"))
    throw new SignInConfigError(`CONCORD_OIDC_SCOPES: include "openid" (it is what makes the sign-in OpenID Connect).`);
  return {
    issuer: env.CONCORD_OIDC_ISSUER!.trim(),
    clientId: env.CONCORD_OIDC_CLIENT_ID!.trim(),
    clientSecret: env.CONCORD_OIDC_CLIENT_SECRET!,
    redirectUri: redirect.href,
    scopes,
    label: env.CONCORD_OIDC_LABEL?.trim() || "your institution's account",
    usernameClaim: env.CONCORD_OIDC_USERNAME_CLAIM?.trim() || "preferred_username",
    rolesClaim: env.CONCORD_OIDC_ROLES_CLAIM?.trim() || null,
    roleMap: env.CONCORD_OIDC_ROLE_MAP?.trim() ? parseRoleMap(env.CONCORD_OIDC_ROLE_MAP) : null,
    linkByUsername: link === "1",
    alwaysLogin: always === "1",
  };
}

export function passwordSettings(env: Env = process.env): PasswordSettings {
  const value = env.CONCORD_LOCAL_PASSWORDS?.trim().toLowerCase() ?? "";
  if (!["", "on", "off"].includes(value)) throw new SignInConfigError(`CONCORD_LOCAL_PASSWORDS: use on or off.`);
  const breakGlass = env.CONCORD_BREAK_GLASS_ADMIN?.trim().toLowerCase() || null;
  return { on: value !== "off", breakGlassAdmin: value === "off" ? breakGlass : null };
}

/** True when `username` may use a password here (to log in, change it or set it from a link). */
export function passwordAllowed(username: string, env: Env = process.env): boolean {
  const p = passwordSettings(env);
  return p.on || (p.breakGlassAdmin !== null && p.breakGlassAdmin === username.trim().toLowerCase());
}

/**
 * What is wrong with the sign-in configuration, as one line for the start-up to print, or null. Passwords off with
 * no provider configured would let nobody in but the break-glass admin: refused.
 */
export function signInConfigProblem(env: Env = process.env): string | null {
  try {
    const oidc = oidcSettings(env);
    const passwords = passwordSettings(env);
    if (!passwords.on && !oidc)
      return "CONCORD_LOCAL_PASSWORDS=off needs single sign-on configured (CONCORD_OIDC_ISSUER and the rest): otherwise nobody can sign in.";
    return null;
  } catch (e) {
    if (e instanceof SignInConfigError) return e.message;
    throw e;
  }
}
