/**
 * The second step of a login with a second factor (docs/security.md, "Second factor"): a code from the
 * authenticator app, or a recovery code. Reached only with a live login challenge (its own cookie, made by a right
 * password); it grants nothing until the code is right.
 */
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, useActionData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { clientIp, sessionTokenFrom } from "~/accounts/guard.server";
import {
  blankChallengeCookie,
  challengeOf,
  completeChallenge,
  readChallengeCookie,
} from "~/accounts/second-factor.server";
import { getDb } from "~/platform/db.server";
import { readForm } from "~/platform/read-form.server";

export const meta: MetaFunction = () => [{ title: "Enter your code · Concord" }];

function challengeToken(request: Request): string | null {
  return readChallengeCookie(request.headers.get("Cookie") ?? "");
}

export async function loader({ request }: LoaderFunctionArgs) {
  const token = challengeToken(request);
  if (!token || !challengeOf(getDb(), token))
    throw redirect("/login", { headers: { "Set-Cookie": blankChallengeCookie() } });
  return null;
}

const CodeSchema = z.object({ code: z.string().trim().min(1, "Enter the code.").max(40, "That is not a code.") });

export async function action({ request, context }: ActionFunctionArgs) {
  const token = challengeToken(request);
  if (!token) throw redirect("/login");
  const parsed = CodeSchema.safeParse(Object.fromEntries(await readForm(request)));
  if (!parsed.success) return { error: parsed.error.issues[0]!.message };
  const result = await completeChallenge(getDb(), {
    token,
    code: parsed.data.code,
    ip: clientIp((context as { ip?: string }).ip),
    device: { userAgent: request.headers.get("User-Agent") },
    previousSessionToken: sessionTokenFrom(request),
  });
  if (!result.ok && result.restart)
    throw redirect(`/login?expired=1`, { headers: { "Set-Cookie": blankChallengeCookie() } });
  if (!result.ok) return { error: result.error };
  const headers = new Headers();
  headers.append("Set-Cookie", result.sessionCookie);
  headers.append("Set-Cookie", blankChallengeCookie());
  // A recovery code was used: the account page says how many are left and offers new ones.
  const next = result.usedRecoveryCode ? `/account?recovery-left=${result.recoveryCodesLeft}` : result.redirectTo;
  return redirect(next, { headers });
}

export default function LoginCode() {
  const data = useActionData<typeof action>();
  const busy = useNavigation().state === "submitting";
  return (
    <section className="login card">
      <h1>Enter your code</h1>
      <p>Open your authenticator app and enter the six-digit code it shows for Concord.</p>
      <Form method="post" replace>
        <label htmlFor="code">Code</label>
        <input
          id="code"
          name="code"
          type="text"
          inputMode="numeric"
          autoComplete="one-time-code"
          autoFocus
          required
          aria-describedby="code-help"
          aria-invalid={data?.error ? true : undefined}
          style={{ width: "100%" }}
        />
        <p id="code-help" className="muted">
          No phone at hand? Enter one of your recovery codes instead (each works once).
        </p>
        {data?.error ? (
          <p className="field-error" role="alert">
            {data.error}
          </p>
        ) : null}
        <p>
          <button type="submit" disabled={busy}>
            {busy ? "Checking…" : "Continue"}
          </button>
        </p>
      </Form>
    </section>
  );
}
