import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation, useSearchParams } from "@remix-run/react";
import { z } from "zod";
import { clientIp, getUser, sessionTokenFrom } from "~/accounts/guard.server";
import { safeRedirect } from "~/accounts/safe-redirect";
import { getDb } from "~/platform/db.server";
import { readForm } from "~/platform/read-form.server";
import { login } from "~/accounts/users.server";
import { oidcSettings, passwordSettings } from "~/accounts/sign-in-config";

export const meta: MetaFunction = () => [{ title: "Log in · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  if (await getUser(request)) return redirect(safeRedirect(new URL(request.url).searchParams.get("redirectTo")));
  // How this server signs people in (docs/security.md, "Single sign-on"): the provider's button, the password form,
  // or both. With passwords off, the form is shown only on request, for the break-glass admin.
  const sso = oidcSettings();
  const passwords = passwordSettings();
  return {
    sso: sso ? { label: sso.label } : null,
    passwords: passwords.on,
    breakGlass: passwords.breakGlassAdmin !== null,
  };
}

const LoginSchema = z.object({
  username: z.string().trim().min(1, "Enter your username.").max(64),
  password: z.string().min(1, "Enter your password.").max(256),
  redirectTo: z.string().optional(),
});

export async function action({ request, context }: ActionFunctionArgs) {
  const parsed = LoginSchema.safeParse(Object.fromEntries(await readForm(request)));
  if (!parsed.success) return { error: parsed.error.issues[0]!.message };
  const redirectTo = safeRedirect(parsed.data.redirectTo ?? null);
  const result = await login(getDb(), {
    username: parsed.data.username,
    password: parsed.data.password,
    ip: clientIp((context as { ip?: string }).ip),
    // A session this browser already holds ends with the new login (docs/security.md, "Sessions").
    previousSessionToken: sessionTokenFrom(request),
    userAgent: request.headers.get("User-Agent"),
    redirectTo,
  });
  // A second factor: the code step, on its own page (docs/security.md, "Second factor").
  if (!result.ok && "challengeCookie" in result && result.challengeCookie)
    return redirect("/login/code", { headers: { "Set-Cookie": result.challengeCookie } });
  if (!result.ok) return { error: result.error };
  return redirect(redirectTo, { headers: { "Set-Cookie": result.sessionCookie } });
}

export default function Login() {
  const data = useActionData<typeof action>();
  const { sso, passwords, breakGlass } = useLoaderData<typeof loader>();
  const [params] = useSearchParams();
  const busy = useNavigation().state === "submitting";
  const redirectTo = params.get("redirectTo") ?? "/";
  const showForm = passwords || (breakGlass && params.get("break-glass") === "1");
  return (
    <section className="login card">
      <h1>Log in to Concord</h1>
      {params.get("reset") === "1" ? (
        <p className="notice ok" role="status">
          Your new password is set. Log in with it.
        </p>
      ) : null}
      {sso ? (
        <p>
          <a className="button sso" href={`/login/oidc?redirectTo=${encodeURIComponent(redirectTo)}`}>
            Sign in with {sso.label}
          </a>
        </p>
      ) : null}
      {sso && showForm ? (
        <p className="muted">
          {passwords
            ? "Or log in with a Concord password:"
            : "Emergency admin login: only the break-glass admin's password works here."}
        </p>
      ) : null}
      {!showForm ? (
        <p className="muted">
          Concord passwords are switched off on this server.
          {breakGlass ? (
            <>
              {" "}
              <a href="/login?break-glass=1">Emergency admin login</a>
            </>
          ) : null}
        </p>
      ) : null}
      {showForm ? (
        <Form method="post" replace>
          <input type="hidden" name="redirectTo" value={redirectTo} />
          <label htmlFor="username">Username</label>
          <input
            id="username"
            name="username"
            type="text"
            autoComplete="username"
            autoFocus
            required
            style={{ width: "100%" }}
          />
          <label htmlFor="password">Password</label>
          <input
            id="password"
            name="password"
            type="password"
            autoComplete="current-password"
            required
            style={{ width: "100%" }}
          />
          {data?.error ? (
            <p className="field-error" role="alert">
              {data.error}
            </p>
          ) : null}
          <p>
            <button type="submit" disabled={busy}>
              {busy ? "Logging in…" : "Log in"}
            </button>
          </p>
        </Form>
      ) : null}
    </section>
  );
}
