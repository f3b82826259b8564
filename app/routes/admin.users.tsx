import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { ROLES } from "~/accounts/roles";
import { Csrf } from "~/ui/root-data";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { oidcSettings, passwordSettings } from "~/accounts/sign-in-config";
import {
  createUser,
  usersWindow,
  PasswordSchema,
  RolesSchema,
  setActive,
  setRoles,
  UsernameSchema,
  type UserView,
} from "~/accounts/users.server";
import { ServiceError } from "~/platform/service-error";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";

export const meta: MetaFunction = () => [{ title: "Users · Concord" }];

const col = columnHelper<UserView>();

export async function loader({ request }: LoaderFunctionArgs) {
  const me = await requireRole(request, "admin");
  // One window of the users, as the URL asks (docs/architecture.md, "Pages are windows").
  const sso = oidcSettings();
  return {
    users: usersWindow(getDb(), new URL(request.url).searchParams),
    me: me.id,
    // How people sign in here, so that the create form says what a user made here can do (docs/security.md,
    // "Single sign-on").
    signIn: {
      sso: sso?.label ?? null,
      passwords: passwordSettings().on,
      linkByUsername: sso?.linkByUsername ?? false,
      rolesFromClaim: Boolean(sso?.rolesClaim),
      create: createMode(),
    },
  };
}

/** How the create form works here: with a password, without one (taken over at first sign-in), or not at all. */
function createMode(): "password" | "sign-in" | "closed" {
  if (passwordSettings().on) return "password";
  return oidcSettings()?.linkByUsername ? "sign-in" : "closed";
}

const CLOSED_CREATE =
  "Concord passwords are switched off and first sign-ins are not linked by username, so a user made here could " +
  "never sign in. People get their account at their first sign-in; grant their roles here after.";

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("create"),
    username: UsernameSchema,
    displayName: z.string().trim().max(100).optional(),
    // Required while Concord passwords are on; with them off the field is not shown (see the action).
    password: z.union([PasswordSchema, z.literal("")]).optional(),
    roles: RolesSchema,
  }),
  z.object({ intent: z.literal("roles"), userId: z.string().min(1), roles: RolesSchema }),
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
        // Who can sign in decides what a user made here needs (docs/security.md, "Single sign-on"): with Concord
        // passwords on, an initial password; with them off, none, and only when the first sign-in with the same
        // username takes the user over (otherwise no one could ever sign in as them).
        const mode = createMode();
        if (mode === "closed") return { target, errors: { _form: CLOSED_CREATE }, message: null };
        if (mode === "password" && !input.password)
          return { target, errors: { password: "Give an initial password of at least 10 characters." }, message: null };
        const u = await createUser(db, {
          ...input,
          password: mode === "password" ? (input.password as string) : null,
          actorId: me.id,
        });
        return { target, errors: {}, message: `Created ${u.username}.` };
      }
      case "roles": {
        // A change of roles ends the user's sessions; one's own session is replaced (docs/security.md, "Sessions").
        const rotated = setRoles(db, {
          userId: input.userId,
          roles: input.roles,
          actorId: me.id,
          actorSessionId: me.sessionId,
        });
        const result = {
          target,
          errors: {},
          message: input.userId === me.id ? "Roles saved." : "Roles saved; the user logs in again to use them.",
        };
        return rotated ? data(result, { headers: { "Set-Cookie": rotated.sessionCookie } }) : result;
      }
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
  const { users, me, signIn } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const feedback = (target: string) =>
    result && result.target === target ? (
      <>
        <Errors errors={result.errors} />
        {result.message ? <p className="notice ok">{result.message}</p> : null}
      </>
    ) : null;
  const columns = [
    col.accessor("username", {
      id: "username",
      header: "Username",
      cell: ({ row: { original: u } }) => <Link to={`/admin/users/${u.id}`}>{u.username}</Link>,
    }),
    col.accessor("displayName", { header: "Name" }),
    col.display({
      id: "roles",
      header: "Roles",
      cell: ({ row: { original: u } }) => (
        <>
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
        </>
      ),
    }),
    col.display({
      id: "status",
      header: "Status",
      cell: ({ row: { original: u } }) => (
        <Form method="post">
          <Csrf />
          <input type="hidden" name="userId" value={u.id} />
          <input type="hidden" name="active" value={u.active ? "0" : "1"} />
          {u.active ? <span className="badge locked">active</span> : <span className="badge">deactivated</span>}{" "}
          {u.id !== me ? (
            <button type="submit" name="intent" value="active" className="link" disabled={busy}>
              {u.active ? "Deactivate" : "Reactivate"}
            </button>
          ) : null}
        </Form>
      ),
    }),
    col.display({
      id: "sign-in",
      header: "Sign-in",
      cell: ({ row: { original: u } }) => (
        <Link to={`/admin/users/${u.id}`}>Password link, second factor, sessions</Link>
      ),
    }),
  ];
  return (
    <section>
      <h1>Users</h1>
      <p>
        Open a user for a one-time password link, their second factor and their sessions.{" "}
        <Link to="/admin/security">Sign-in settings</Link>
      </p>
      <WindowTable
        window={users}
        columns={columns}
        sortable={["username"]}
        noun="users"
        testId="users"
        filterLabel="Username starts with"
        rowProps={(u) => ({ "data-username": u.username })}
        filters={
          <>
            <select name="role" aria-label="Role" defaultValue={users.query.filters.role}>
              <option value="">Any role</option>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
            <select name="status" aria-label="Status" defaultValue={users.query.filters.status}>
              <option value="">Active or not</option>
              <option value="active">active</option>
              <option value="deactivated">deactivated</option>
            </select>
          </>
        }
      />

      <h2>Create a user</h2>
      {signIn.sso ? (
        <p className="muted">
          People who sign in with {signIn.sso} get their account at their first sign-in
          {signIn.passwords ? "" : " (Concord passwords are switched off here)"}.{" "}
          {signIn.linkByUsername
            ? "A user you create here is taken over by the first sign-in with the same username."
            : "A user you create here stays separate from their sign-in account."}
          {signIn.rolesFromClaim
            ? " Their roles follow the provider's claim at each sign-in: a change made here lasts until then."
            : ""}
        </p>
      ) : null}
      {signIn.create === "closed" ? (
        <p className="card" data-testid="create-closed">
          {CLOSED_CREATE}
        </p>
      ) : (
        <Form method="post" className="card">
          <Csrf />
          <div className="grid2">
            <div>
              <label htmlFor="new-username">Username</label>
              <input id="new-username" name="username" type="text" required autoComplete="off" />
              <label htmlFor="new-display">Display name (optional)</label>
              <input id="new-display" name="displayName" type="text" autoComplete="off" />
              {signIn.create === "password" ? (
                <>
                  <label htmlFor="new-password">Initial password (at least 10 characters)</label>
                  <input id="new-password" name="password" type="password" required autoComplete="new-password" />
                </>
              ) : (
                <p className="muted">No Concord password: they sign in with {signIn.sso}.</p>
              )}
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
      )}
    </section>
  );
}
