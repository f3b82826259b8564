/**
 * Sign-in settings for admins (docs/guides/admin.md, "Accounts"): the roles whose users must use a second factor.
 */
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { ROLES } from "~/accounts/roles";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { requiredRoles, setRequiredRoles } from "~/accounts/second-factor.server";
import { listUsers } from "~/accounts/users.server";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { Csrf } from "~/ui/root-data";

export const meta: MetaFunction = () => [{ title: "Sign-in settings · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const required = requiredRoles(db);
  const users = listUsers(db).filter((u) => u.active);
  // Who the rule concerns and has not set it up yet: they are sent to their account page at their next page.
  const pending = users
    .filter((u) => u.totpEnabledAt === null && u.roles.some((r) => required.includes(r)))
    .map((u) => u.username);
  return {
    required,
    pending,
    withSecondFactor: users.filter((u) => u.totpEnabledAt !== null).length,
    users: users.length,
  };
}

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("require"), roles: z.array(z.enum(ROLES)).default([]) }),
]);

export async function action({ request }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const parsed = parseIntent(form, ActionSchema, { arrays: ["roles"] });
  if (!parsed.ok) return { error: parsed.message };
  setRequiredRoles(getDb(), { roles: parsed.data.roles, actorId: me.id });
  return { message: "Saved." };
}

export default function Security() {
  const { required, pending, withSecondFactor, users } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  return (
    <section>
      <p>
        <Link to="/admin/users">← Users</Link>
      </p>
      <h1>Sign-in settings</h1>
      <h2>Second factor</h2>
      <p>
        {withSecondFactor} of {users} active users have a second factor. Users of the roles ticked here must set one up:
        every page sends them to their account page until they do (what they were saving still saves).
      </p>
      <Form method="post" className="card">
        <Csrf />
        <fieldset>
          <legend>Require a second factor for</legend>
          {ROLES.map((r) => (
            <label key={r} className="inline">
              <input type="checkbox" name="roles" value={r} defaultChecked={required.includes(r)} /> {r}
            </label>
          ))}
        </fieldset>
        {result && "error" in result ? (
          <p className="field-error" role="alert">
            {result.error}
          </p>
        ) : null}
        {result && "message" in result ? (
          <p className="notice ok" role="status">
            {result.message}
          </p>
        ) : null}
        <button type="submit" name="intent" value="require" disabled={busy}>
          Save
        </button>
      </Form>
      {pending.length ? (
        <p>
          Not set up yet ({pending.length}): {pending.join(", ")}.
        </p>
      ) : null}
    </section>
  );
}
