/**
 * Your account (docs/security.md, "Accounts"): change your password, turn the second factor on or off, see and end
 * your sessions. Every user reaches it from their name in the header; it shows only the user's own account.
 */
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data as withHeaders } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation, useSearchParams } from "@remix-run/react";
import { z } from "zod";
import { listUserSessions } from "~/accounts/auth.server";
import { clientIp, requireForm, requireUser } from "~/accounts/guard.server";
import {
  confirmSecondFactor,
  disableSecondFactor,
  mustSetUpSecondFactor,
  regenerateRecoveryCodes,
  requiredRoles,
  secondFactorState,
  startSecondFactor,
} from "~/accounts/second-factor.server";
import {
  ChangePasswordSchema,
  changeOwnPassword,
  endOwnOtherSessions,
  endOwnSession,
  passwordState,
} from "~/accounts/self-service.server";
import { PASSWORD_RULES } from "~/accounts/password-rules";
import { PASSWORDS_OFF } from "~/accounts/sign-in-config";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { ServiceError } from "~/platform/service-error";
import { Csrf } from "~/ui/root-data";
import { Field, FieldError } from "~/ui/field";

export const meta: MetaFunction = () => [{ title: "Your account · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const db = getDb();
  return {
    user: { username: user.username, displayName: user.displayName, roles: user.roles },
    sessions: listUserSessions(db, user.id).map((s) => ({ ...s, current: s.id === user.sessionId })),
    secondFactor: await secondFactorState(db, user.id),
    mustSetUp: mustSetUpSecondFactor(db, user),
    required: user.roles.some((r) => requiredRoles(db).includes(r)),
    password: passwordState(db, user.id),
  };
}

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("password"), current: z.string(), password: z.string(), confirm: z.string() }),
  z.object({ intent: z.literal("end-session"), sessionId: z.string().regex(/^[0-9a-f]{64}$/, "Unknown session.") }),
  z.object({ intent: z.literal("end-others") }),
  z.object({ intent: z.literal("totp-start") }),
  z.object({ intent: z.literal("totp-confirm"), code: z.string().trim().min(1, "Enter the code.").max(20) }),
  z.object({ intent: z.literal("totp-disable"), password: z.string().min(1, "Enter your password.").max(256) }),
  z.object({ intent: z.literal("totp-recovery"), code: z.string().trim().min(1, "Enter the code.").max(20) }),
]);

type Section = "password" | "second-factor" | "sessions";
interface Result {
  section: Section;
  errors: Record<string, string>;
  message?: string;
  recoveryCodes?: string[];
}

export async function action({ request, context }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const form = await requireForm(request, user);
  const db = getDb();
  const device = { userAgent: request.headers.get("User-Agent"), ip: clientIp((context as { ip?: string }).ip) };
  const parsed = parseIntent(form, ActionSchema);
  const sectionOf = (intent: string): Section =>
    intent === "password" ? "password" : intent.startsWith("totp") ? "second-factor" : "sessions";
  if (!parsed.ok) return { section: sectionOf(parsed.intent), errors: parsed.errors } satisfies Result;
  const input = parsed.data;
  const rotated = (cookie: string, result: Result) => withHeaders(result, { headers: { "Set-Cookie": cookie } });
  try {
    switch (input.intent) {
      case "password": {
        const fields = ChangePasswordSchema.safeParse(input);
        if (!fields.success)
          return {
            section: "password",
            errors: Object.fromEntries(fields.error.issues.map((i) => [String(i.path[0] ?? "form"), i.message])),
          } satisfies Result;
        const r = await changeOwnPassword(db, {
          userId: user.id,
          sessionId: user.sessionId,
          current: input.current,
          password: input.password,
          ip: device.ip,
          device,
        });
        if (!r.ok) return { section: "password", errors: r.errors as Record<string, string> } satisfies Result;
        return rotated(r.sessionCookie, {
          section: "password",
          errors: {},
          message:
            r.ended > 0
              ? `Your password is changed. ${r.ended} other session${r.ended === 1 ? " was" : "s were"} ended.`
              : "Your password is changed.",
        });
      }
      case "end-session":
        endOwnSession(db, { userId: user.id, currentSessionId: user.sessionId, sessionId: input.sessionId });
        return { section: "sessions", errors: {}, message: "The session is ended." } satisfies Result;
      case "end-others": {
        const n = endOwnOtherSessions(db, { userId: user.id, currentSessionId: user.sessionId });
        return {
          section: "sessions",
          errors: {},
          message: n === 0 ? "No other session was open." : `${n} other session${n === 1 ? " was" : "s were"} ended.`,
        } satisfies Result;
      }
      case "totp-start":
        startSecondFactor(db, user.id);
        return { section: "second-factor", errors: {} } satisfies Result;
      case "totp-confirm": {
        const r = confirmSecondFactor(db, { userId: user.id, sessionId: user.sessionId, code: input.code, device });
        if (!r.ok) return { section: "second-factor", errors: { code: r.error } } satisfies Result;
        return rotated(r.sessionCookie, {
          section: "second-factor",
          errors: {},
          message: "The second factor is on. Your other sessions were ended.",
          recoveryCodes: r.recoveryCodes,
        });
      }
      case "totp-disable": {
        const r = await disableSecondFactor(db, {
          userId: user.id,
          sessionId: user.sessionId,
          password: input.password,
          roles: user.roles,
          device,
        });
        if (!r.ok) return { section: "second-factor", errors: { password: r.error } } satisfies Result;
        return rotated(r.sessionCookie, { section: "second-factor", errors: {}, message: "The second factor is off." });
      }
      case "totp-recovery": {
        const r = regenerateRecoveryCodes(db, { userId: user.id, code: input.code });
        if (!r.ok) return { section: "second-factor", errors: { code: r.error } } satisfies Result;
        return {
          section: "second-factor",
          errors: {},
          message: "New recovery codes: the old ones no longer work.",
          recoveryCodes: r.recoveryCodes,
        } satisfies Result;
      }
    }
  } catch (e) {
    if (e instanceof ServiceError)
      return { section: sectionOf(input.intent), errors: { form: e.message } } satisfies Result;
    throw e;
  }
}

/** A time as the server renders it, the same for every reader: "2026-12-02 14:05 UTC". */
function when(ms: number | null): string {
  if (ms === null) return "—";
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** A short description of a browser from its User-Agent: the browser and the system, or the raw string. */
function browserOf(ua: string | null): string {
  if (!ua) return "Unknown browser";
  const browser = /Edg\//.test(ua)
    ? "Edge"
    : /Firefox\//.test(ua)
      ? "Firefox"
      : /Chrom(e|ium)\//.test(ua)
        ? "Chrome"
        : /Safari\//.test(ua)
          ? "Safari"
          : null;
  const system = /Windows/.test(ua)
    ? "Windows"
    : /Android/.test(ua)
      ? "Android"
      : /iPhone|iPad/.test(ua)
        ? "iOS"
        : /Mac OS X/.test(ua)
          ? "macOS"
          : /Linux/.test(ua)
            ? "Linux"
            : null;
  return browser || system ? [browser ?? "A browser", system].filter(Boolean).join(" on ") : ua.slice(0, 60);
}

export default function Account() {
  const { user, sessions, secondFactor, mustSetUp, required, password } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>() as Result | undefined;
  const busy = useNavigation().state !== "idle";
  const [params] = useSearchParams();
  const errorsFor = (section: Section) => (result?.section === section ? result.errors : {});
  const messageFor = (section: Section) =>
    result?.section === section && result.message ? (
      <p className="notice ok" role="status">
        {result.message}
      </p>
    ) : null;
  const pw = errorsFor("password");
  const sf = errorsFor("second-factor");
  const ss = errorsFor("sessions");
  const recoveryLeft = params.get("recovery-left");
  return (
    <section className="account">
      <h1>Your account</h1>
      <p>
        <strong>{user.displayName}</strong> ({user.username}) · roles:{" "}
        {user.roles.length ? user.roles.join(", ") : "none yet (an admin must grant you a role)"}
      </p>
      {mustSetUp ? (
        <p className="notice warn" role="alert">
          Your role requires a second factor. Turn it on below before you continue to your work.
        </p>
      ) : null}
      {recoveryLeft !== null ? (
        <p className="notice warn" role="status">
          You logged in with a recovery code. {recoveryLeft} unused recovery code{recoveryLeft === "1" ? "" : "s"} left
          {Number(recoveryLeft) <= 3 ? ": make new ones below." : "."}
        </p>
      ) : null}

      <h2 id="password">Password</h2>
      {password !== "usable" ? (
        <p className="card muted">
          {password === "off"
            ? PASSWORDS_OFF
            : "You sign in with your institution's account; you have no Concord password."}
        </p>
      ) : null}
      {password === "usable" ? (
        <Form method="post" className="card" aria-labelledby="password">
          <Csrf />
          <p className="muted">A new password must be: {PASSWORD_RULES.join("; ")}.</p>
          <Field
            id="current"
            label="Current password"
            error={pw.current}
            name="current"
            type="password"
            autoComplete="current-password"
            required
          />
          <Field
            id="new-password"
            label="New password"
            error={pw.password}
            errorId="password-error"
            name="password"
            type="password"
            autoComplete="new-password"
            required
            minLength={10}
          />
          <Field
            id="confirm"
            label="New password again"
            error={pw.confirm}
            name="confirm"
            type="password"
            autoComplete="new-password"
            required
          />
          <FieldError text={pw.form} id="password-form-error" />
          {messageFor("password")}
          <p className="muted">Changing it ends your other sessions.</p>
          <button type="submit" name="intent" value="password" disabled={busy}>
            Change password
          </button>
        </Form>
      ) : null}

      <h2 id="second-factor">Second factor</h2>
      <div className="card" aria-labelledby="second-factor">
        {result?.recoveryCodes ? (
          <div className="notice ok" role="status">
            <p>
              <strong>Your recovery codes.</strong> Keep them somewhere safe (printed, or in a password manager). Each
              lets you log in once without your phone. They are shown only now.
            </p>
            <ul className="recovery-codes" aria-label="Recovery codes">
              {result.recoveryCodes.map((c) => (
                <li key={c}>
                  <code>{c}</code>
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        {messageFor("second-factor")}
        <FieldError text={sf.form} id="sf-form-error" />
        {secondFactor.enabled ? (
          <>
            <p>
              On since {when(secondFactor.enabledAt)}. Logging in asks for a code from your authenticator app.{" "}
              {secondFactor.recoveryCodesLeft} unused recovery code{secondFactor.recoveryCodesLeft === 1 ? "" : "s"}.
            </p>
            <Form method="post" className="row">
              <Csrf />
              <Field
                id="recovery-code"
                label="Code from your app"
                error={sf.code}
                name="code"
                type="text"
                inputMode="numeric"
                autoComplete="one-time-code"
                after={
                  <button type="submit" name="intent" value="totp-recovery" className="secondary" disabled={busy}>
                    Make new recovery codes
                  </button>
                }
              />
            </Form>
            {required ? (
              <p className="muted">Your role requires the second factor, so it cannot be turned off here.</p>
            ) : (
              <Form method="post" className="row">
                <Csrf />
                <Field
                  id="disable-password"
                  label="Your password"
                  error={sf.password}
                  errorId="disable-error"
                  name="password"
                  type="password"
                  autoComplete="current-password"
                  after={
                    <button type="submit" name="intent" value="totp-disable" className="secondary" disabled={busy}>
                      Turn off
                    </button>
                  }
                />
              </Form>
            )}
          </>
        ) : secondFactor.pending ? (
          <>
            <p>
              Scan this code with an authenticator app (for example the one your institution recommends), or type the
              key into it. Then enter the six-digit code it shows.
            </p>
            <div
              className="qr"
              role="img"
              aria-label="QR code of your second-factor key"
              dangerouslySetInnerHTML={{ __html: secondFactor.pending.qrSvg }}
            />
            <p>
              Key: <code className="totp-secret">{secondFactor.pending.secret.replace(/(.{4})/g, "$1 ").trim()}</code>
            </p>
            <Form method="post" className="row">
              <Csrf />
              <Field
                id="confirm-code"
                label="Code from your app"
                error={sf.code}
                name="code"
                type="text"
                inputMode="numeric"
                autoComplete="one-time-code"
                required
                after={
                  <button type="submit" name="intent" value="totp-confirm" disabled={busy}>
                    Turn on
                  </button>
                }
              />
            </Form>
          </>
        ) : (
          <>
            <p>
              Off. With it on, logging in also asks for a code from an authenticator app on your phone, so a stolen
              password alone does not open your account.
            </p>
            <Form method="post">
              <Csrf />
              <button type="submit" name="intent" value="totp-start" disabled={busy}>
                Set up a second factor
              </button>
            </Form>
          </>
        )}
      </div>

      <h2 id="sessions">Sessions</h2>
      <div className="card" aria-labelledby="sessions">
        <p className="muted">
          Where you are logged in. A session ends when its browser is closed, after 12 hours without use, and 24 hours
          after logging in.
        </p>
        {messageFor("sessions")}
        <FieldError text={ss.form ?? ss.sessionId} id="sessions-error" />
        <table>
          <thead>
            <tr>
              <th scope="col">Browser</th>
              <th scope="col">Address</th>
              <th scope="col">Logged in</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="visually-hidden">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr key={s.id} data-current={s.current ? "1" : undefined}>
                <td>
                  {browserOf(s.userAgent)}
                  {s.current ? <span className="badge"> this session</span> : null}
                </td>
                <td>{s.ip ?? "—"}</td>
                <td>{when(s.createdAt)}</td>
                <td>{when(s.lastUsedAt)}</td>
                <td>
                  {s.current ? null : (
                    <Form method="post">
                      <Csrf />
                      <input type="hidden" name="sessionId" value={s.id} />
                      <button type="submit" name="intent" value="end-session" className="link" disabled={busy}>
                        End
                      </button>
                    </Form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {sessions.length > 1 ? (
          <Form method="post">
            <Csrf />
            <button type="submit" name="intent" value="end-others" className="secondary" disabled={busy}>
              End all other sessions
            </button>
          </Form>
        ) : null}
      </div>
    </section>
  );
}
