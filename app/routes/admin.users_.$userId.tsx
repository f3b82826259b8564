/**
 * One user's sign-in, for admins (docs/guides/admin.md, "Accounts"): a one-time link for the user to set a password
 * (instead of typing one for them), turning off a lost second factor, ending the user's sessions.
 */
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { invalidateUserSessions, listUserSessions } from "~/accounts/auth.server";
import { notFound, requireForm, requireRole } from "~/accounts/guard.server";
import { requiredRoles, resetSecondFactor } from "~/accounts/second-factor.server";
import { RESET_LINK_HOURS } from "~/accounts/password-rules";
import { identitiesOf } from "~/accounts/oidc.server";
import { createResetLink, passwordState } from "~/accounts/self-service.server";
import { getUserById } from "~/accounts/users.server";
import { recordEvent } from "~/audit/audit.server";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { ServiceError } from "~/platform/service-error";
import { Csrf } from "~/ui/root-data";

export const meta: MetaFunction = () => [{ title: "User · Concord" }];

function userOr404(userId: string | undefined) {
  const user = userId ? getUserById(getDb(), userId) : null;
  if (!user) throw notFound("No such user.");
  return user;
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const user = userOr404(params.userId);
  const db = getDb();
  return {
    user,
    sessions: listUserSessions(db, user.id).length,
    required: user.roles.some((r) => requiredRoles(db).includes(r)),
    // How the user signs in (docs/security.md, "Single sign-on"): a usable password or not, and the provider
    // accounts linked to them.
    password: passwordState(db, user.id),
    identities: identitiesOf(db, user.id),
  };
}

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("reset-link") }),
  z.object({ intent: z.literal("reset-second-factor") }),
  z.object({ intent: z.literal("end-sessions") }),
]);

export async function action({ request, params }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const user = userOr404(params.userId);
  const parsed = parseIntent(form, ActionSchema);
  if (!parsed.ok) return { error: parsed.message };
  const db = getDb();
  try {
    switch (parsed.data.intent) {
      case "reset-link": {
        const { token, expiresAt } = createResetLink(db, { userId: user.id, actorId: me.id });
        const link = new URL(`/reset-password/${token}`, request.url).toString();
        return { link, expiresAt };
      }
      case "reset-second-factor":
        if (user.id === me.id) return { error: "Turn your own second factor off on your account page." };
        resetSecondFactor(db, { userId: user.id, actorId: me.id });
        return { message: `${user.username}'s second factor is off and their sessions are ended.` };
      case "end-sessions":
        if (user.id === me.id) return { error: "End your own sessions on your account page." };
        db.transaction((tx) => {
          invalidateUserSessions(tx, user.id);
          recordEvent(tx, {
            actorId: me.id,
            entity: "user",
            entityId: user.id,
            action: "end_all_sessions",
            changes: {},
          });
        });
        return { message: `Every session of ${user.username} is ended.` };
    }
  } catch (e) {
    if (e instanceof ServiceError) return { error: e.message };
    throw e;
  }
}

export default function AdminUser() {
  const { user, sessions, required, password, identities } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  return (
    <section>
      <p>
        <Link to="/admin/users">← Users</Link>
      </p>
      <h1>
        {user.displayName} <small>({user.username})</small>
      </h1>
      <p>
        Roles: {user.roles.length ? user.roles.join(", ") : "none yet"} · {user.active ? "active" : "deactivated"} ·
        second factor {user.totpEnabledAt !== null ? "on" : required ? "required, not set up yet" : "off"} · {sessions}{" "}
        live session
        {sessions === 1 ? "" : "s"}
      </p>
      {result && "error" in result && result.error ? (
        <p className="field-error" role="alert">
          {result.error}
        </p>
      ) : null}
      {result && "message" in result && result.message ? (
        <p className="notice ok" role="status">
          {result.message}
        </p>
      ) : null}

      <h2>Single sign-on</h2>
      <div className="card">
        {identities.length ? (
          <ul>
            {identities.map((i) => (
              <li key={`${i.issuer} ${i.subject}`}>
                <code>{i.issuer}</code>, subject <code>{i.subject}</code> · linked{" "}
                {new Date(i.createdAt).toISOString().slice(0, 16).replace("T", " ")} UTC · last sign-in{" "}
                {i.lastSignInAt ? `${new Date(i.lastSignInAt).toISOString().slice(0, 16).replace("T", " ")} UTC` : "—"}
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">Not linked to an account at the institution&apos;s sign-in.</p>
        )}
      </div>

      <h2>Password</h2>
      <div className="card">
        {password === "off" ? (
          <p>
            Passwords are switched off on this server: {user.username} signs in with the institution&apos;s account.
          </p>
        ) : null}
        {password === "none" ? (
          <p className="muted">
            {user.username} has no Concord password: they sign in with the institution&apos;s account.
          </p>
        ) : null}
        {password !== "off" ? (
          <p>
            Make a one-time link and give it to {user.username} (in person, or by your institution&apos;s usual
            channel): they open it and choose their own password. It works once, for {RESET_LINK_HOURS} hours; a new
            link replaces the old one; using it ends their sessions.
          </p>
        ) : null}
        {result && "link" in result && result.link ? (
          <div className="notice ok" role="status">
            <p>
              Link for {user.username} (shown only now; valid until{" "}
              {new Date(result.expiresAt).toISOString().slice(0, 16).replace("T", " ")} UTC):
            </p>
            <p>
              <input
                type="text"
                readOnly
                value={result.link}
                aria-label="One-time password link"
                style={{ width: "100%" }}
              />
            </p>
          </div>
        ) : null}
        {password !== "off" ? (
          <Form method="post">
            <Csrf />
            <button type="submit" name="intent" value="reset-link" disabled={busy || !user.active}>
              Make a password link
            </button>
          </Form>
        ) : null}
      </div>

      <h2>Second factor and sessions</h2>
      <div className="card">
        <Form method="post" className="row">
          <Csrf />
          <button
            type="submit"
            name="intent"
            value="reset-second-factor"
            className="secondary"
            disabled={busy || user.totpEnabledAt === null}
          >
            Turn off the second factor
          </button>
          <span className="muted">For a lost phone with no recovery codes left; they set it up again.</span>
        </Form>
        <Form method="post" className="row">
          <Csrf />
          <button
            type="submit"
            name="intent"
            value="end-sessions"
            className="secondary"
            disabled={busy || sessions === 0}
          >
            End all sessions
          </button>
        </Form>
      </div>
    </section>
  );
}
