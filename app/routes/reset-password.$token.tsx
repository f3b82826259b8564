/**
 * Setting a new password from a one-time link an admin made (docs/security.md, "Password resets"). Public: the link's
 * token is the only key. Used once; every session of the user ends; then the user logs in with the new password.
 */
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { PASSWORD_RULES } from "~/accounts/password-rules";
import { resetLinkUser, redeemResetLink } from "~/accounts/self-service.server";
import { passwordSettings, PASSWORDS_OFF } from "~/accounts/sign-in-config";
import { getDb } from "~/platform/db.server";
import { readForm } from "~/platform/read-form.server";

export const meta: MetaFunction = () => [{ title: "Set your password · Concord" }];

// The token is a secret: it is not sent on as a Referer from this page.
export const headers = () => ({ "Referrer-Policy": "no-referrer" });

export async function loader({ params }: LoaderFunctionArgs) {
  const user = resetLinkUser(getDb(), params.token ?? "");
  // Local passwords switched off: links refuse (docs/security.md, "Single sign-on"), except the break-glass admin's.
  return { user, passwordsOff: !passwordSettings().on };
}

const ResetSchema = z
  .object({ password: z.string().max(256, "Use at most 256 characters."), confirm: z.string().max(256) })
  .refine((v) => v.password === v.confirm, { path: ["confirm"], message: "The two passwords differ." });

export async function action({ request, params }: ActionFunctionArgs) {
  const parsed = ResetSchema.safeParse(Object.fromEntries(await readForm(request)));
  if (!parsed.success)
    return {
      errors: Object.fromEntries(parsed.error.issues.map((i) => [String(i.path[0] ?? "form"), i.message])) as Record<
        string,
        string
      >,
    };
  const r = await redeemResetLink(getDb(), { token: params.token ?? "", password: parsed.data.password });
  if (!r.ok) return { errors: r.errors as Record<string, string> };
  return redirect(`/login?reset=1`);
}

export default function ResetPassword() {
  const { user, passwordsOff } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state === "submitting";
  const errors = result?.errors ?? {};
  if (!user)
    return (
      <section className="login card">
        <h1>This link no longer works</h1>
        {passwordsOff ? (
          <p>{PASSWORDS_OFF}</p>
        ) : (
          <p>It has expired, has been used, or was replaced by a newer one. Ask an admin for a new link.</p>
        )}
      </section>
    );
  return (
    <section className="login card">
      <h1>Set your password</h1>
      <p>
        For <strong>{user.displayName}</strong> ({user.username}). A password must be: {PASSWORD_RULES.join("; ")}.
      </p>
      <Form method="post" replace>
        <label htmlFor="password">New password</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="new-password"
          required
          minLength={10}
          autoFocus
          aria-invalid={errors.password ? true : undefined}
          aria-describedby={errors.password ? "password-error" : undefined}
          style={{ width: "100%" }}
        />
        {errors.password ? (
          <p className="field-error" id="password-error" role="alert">
            {errors.password}
          </p>
        ) : null}
        <label htmlFor="confirm">New password again</label>
        <input
          id="confirm"
          name="confirm"
          type="password"
          autoComplete="new-password"
          required
          aria-invalid={errors.confirm ? true : undefined}
          aria-describedby={errors.confirm ? "confirm-error" : undefined}
          style={{ width: "100%" }}
        />
        {errors.confirm ? (
          <p className="field-error" id="confirm-error" role="alert">
            {errors.confirm}
          </p>
        ) : null}
        {errors.form ? (
          <p className="field-error" role="alert">
            {errors.form}
          </p>
        ) : null}
        <p>
          <button type="submit" disabled={busy}>
            {busy ? "Saving…" : "Set password"}
          </button>
        </p>
      </Form>
    </section>
  );
}
