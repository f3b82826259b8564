import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { ROLES } from "~/accounts/roles";
import { Csrf } from "~/ui/root-data";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { requireForm, requireRole } from "~/accounts/guard.server";
import {
  createUser,
  listUsers,
  PasswordSchema,
  resetPassword,
  RolesSchema,
  setActive,
  setRoles,
  UsernameSchema,
} from "~/accounts/users.server";
import { ServiceError } from "~/platform/service-error";

export const meta: MetaFunction = () => [{ title: "Users · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const me = await requireRole(request, "admin");
  return { users: listUsers(getDb()), me: me.id };
}

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("create"),
    username: UsernameSchema,
    displayName: z.string().trim().max(100).optional(),
    password: PasswordSchema,
    roles: RolesSchema,
  }),
  z.object({ intent: z.literal("roles"), userId: z.string().min(1), roles: RolesSchema }),
  z.object({ intent: z.literal("password"), userId: z.string().min(1), password: PasswordSchema }),
  z.object({ intent: z.literal("active"), userId: z.string().min(1), active: z.enum(["1", "0"]) }),
]);

export async function action({ request }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const parsed = parseIntent(form, ActionSchema, { arrays: ["roles"] });
  const target = String(form.get("userId") ?? "new");
  if (!parsed.ok) return { target, errors: parsed.errors, message: null };
  const db = getDb();
  const input = parsed.data;
  try {
    switch (input.intent) {
      case "create": {
        const u = await createUser(db, { ...input, actorId: me.id });
        return { target, errors: {}, message: `Created ${u.username}.` };
      }
      case "roles":
        setRoles(db, { userId: input.userId, roles: input.roles, actorId: me.id });
        return { target, errors: {}, message: "Roles saved." };
      case "password":
        await resetPassword(db, { userId: input.userId, password: input.password, actorId: me.id });
        return { target, errors: {}, message: "Password reset; the user's sessions were ended." };
      case "active":
        setActive(db, { userId: input.userId, active: input.active === "1", actorId: me.id });
        return {
          target,
          errors: {},
          message: input.active === "1" ? "User reactivated." : "User deactivated; their work is kept.",
        };
    }
  } catch (e) {
    if (e instanceof ServiceError) return { target, errors: { [e.field ?? "_form"]: e.message }, message: null };
    throw e;
  }
}

function Errors({ errors }: { errors: Record<string, string> }) {
  const list = Object.values(errors);
  return list.length ? (
    <div className="field-error" role="alert">
      {list.map((m) => (
        <div key={m}>{m}</div>
      ))}
    </div>
  ) : null;
}

export default function Users() {
  const { users, me } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const feedback = (target: string) =>
    result && result.target === target ? (
      <>
        <Errors errors={result.errors} />
        {result.message ? <p className="notice ok">{result.message}</p> : null}
      </>
    ) : null;
  return (
    <section>
      <h1>Users</h1>
      <table>
        <thead>
          <tr>
            <th>Username</th>
            <th>Name</th>
            <th>Roles</th>
            <th>Status</th>
            <th>Password</th>
          </tr>
        </thead>
        <tbody>
          {users.map((u) => (
            <tr key={u.id} data-username={u.username}>
              <td>{u.username}</td>
              <td>{u.displayName}</td>
              <td>
                <Form method="post" className="row">
                  <Csrf />
                  <input type="hidden" name="userId" value={u.id} />
                  {ROLES.map((r) => (
                    <label key={r} className="inline">
                      <input type="checkbox" name="roles" value={r} defaultChecked={u.roles.includes(r)} /> {r}
                    </label>
                  ))}
                  <button type="submit" name="intent" value="roles" className="secondary" disabled={busy}>
                    Save roles
                  </button>
                </Form>
                {feedback(u.id)}
              </td>
              <td>
                <Form method="post">
                  <Csrf />
                  <input type="hidden" name="userId" value={u.id} />
                  <input type="hidden" name="active" value={u.active ? "0" : "1"} />
                  {u.active ? (
                    <span className="badge locked">active</span>
                  ) : (
                    <span className="badge">deactivated</span>
                  )}{" "}
                  {u.id !== me ? (
                    <button type="submit" name="intent" value="active" className="link" disabled={busy}>
                      {u.active ? "Deactivate" : "Reactivate"}
                    </button>
                  ) : null}
                </Form>
              </td>
              <td>
                <Form method="post" className="row">
                  <Csrf />
                  <input type="hidden" name="userId" value={u.id} />
                  <input
                    type="password"
                    name="password"
                    placeholder="New password"
                    autoComplete="new-password"
                    aria-label={`New password for ${u.username}`}
                  />
                  <button type="submit" name="intent" value="password" className="secondary" disabled={busy}>
                    Reset
                  </button>
                </Form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>

      <h2>Create a user</h2>
      <Form method="post" className="card">
        <Csrf />
        <div className="grid2">
          <div>
            <label htmlFor="new-username">Username</label>
            <input id="new-username" name="username" type="text" required autoComplete="off" />
            <label htmlFor="new-display">Display name (optional)</label>
            <input id="new-display" name="displayName" type="text" autoComplete="off" />
            <label htmlFor="new-password">Initial password (at least 10 characters)</label>
            <input id="new-password" name="password" type="password" required autoComplete="new-password" />
          </div>
          <fieldset>
            <legend>Roles</legend>
            {ROLES.map((r) => (
              <label key={r} className="inline">
                <input type="checkbox" name="roles" value={r} defaultChecked={r === "annotator"} /> {r}
              </label>
            ))}
          </fieldset>
        </div>
        {feedback("new")}
        <button type="submit" name="intent" value="create" disabled={busy}>
          Create user
        </button>
      </Form>
    </section>
  );
}
