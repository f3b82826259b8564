/**
 * `/login/oidc/callback`: where the provider sends the browser back (docs/security.md, "Single sign-on"). The
 * sign-in is checked (state, code with PKCE, ID token with nonce), the user found by issuer and subject, and the
 * session made, or the second factor's code step opened. A refusal is shown here, with a way to start again.
 */
import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data, redirect } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { clientIp, sessionTokenFrom } from "~/accounts/guard.server";
import { blankOidcCookie, completeOidcSignIn } from "~/accounts/oidc.server";
import { getDb } from "~/platform/db.server";

export const meta: MetaFunction = () => [{ title: "Signing in · Concord" }];

// The callback's address holds a code: it is not sent on as a Referer.
export const headers = () => ({ "Referrer-Policy": "no-referrer", "Cache-Control": "no-store" });

export async function loader({ request, context }: LoaderFunctionArgs) {
  const result = await completeOidcSignIn(getDb(), {
    callbackUrl: new URL(request.url),
    cookieHeader: request.headers.get("Cookie") ?? "",
    ip: clientIp((context as { ip?: string }).ip),
    device: { userAgent: request.headers.get("User-Agent") },
    previousSessionToken: sessionTokenFrom(request),
  });
  const headers = new Headers();
  headers.append("Set-Cookie", blankOidcCookie());
  if (result.ok === "second-factor") {
    headers.append("Set-Cookie", result.challengeCookie);
    return redirect("/login/code", { headers });
  }
  if (result.ok) {
    headers.append("Set-Cookie", result.sessionCookie);
    return redirect(result.redirectTo, { headers });
  }
  return data({ error: result.error }, { status: 403, headers });
}

export default function OidcCallback() {
  const { error } = useLoaderData<typeof loader>();
  return (
    <section className="login card">
      <h1>Sign-in refused</h1>
      <p role="alert">{error}</p>
      <p>
        <Link to="/login">Back to the login page</Link>
      </p>
    </section>
  );
}
