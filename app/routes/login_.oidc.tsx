/**
 * `/login/oidc`: starts a sign-in at the institution's OpenID Connect provider (docs/security.md, "Single sign-on").
 * The state, nonce and PKCE verifier go into a short-lived signed cookie; the browser goes to the provider.
 */
import type { LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { startOidcSignIn } from "~/accounts/oidc.server";
import { safeRedirect } from "~/accounts/safe-redirect";
import { oidcSettings } from "~/accounts/sign-in-config";
import { getDb } from "~/platform/db.server";

export async function loader({ request }: LoaderFunctionArgs) {
  if (!oidcSettings()) throw new Response("Single sign-on is not configured on this server.", { status: 404 });
  const redirectTo = safeRedirect(new URL(request.url).searchParams.get("redirectTo"));
  try {
    const { url, cookie } = await startOidcSignIn(getDb(), { redirectTo });
    return redirect(url, { headers: { "Set-Cookie": cookie, "Cache-Control": "no-store" } });
  } catch (e) {
    console.warn(`Single sign-on: the provider could not be reached: ${e instanceof Error ? e.message : String(e)}`);
    throw new Response(
      "Your institution's sign-in service cannot be reached just now. Try again in a few minutes; if it keeps " +
        "failing, tell your Concord admin.",
      { status: 502 },
    );
  }
}
