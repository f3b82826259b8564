import type { ActionFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { getDb } from "~/platform/db.server";
import { requireForm, requireUser } from "~/accounts/guard.server";
import { logout } from "~/accounts/users.server";

export const loader = () => redirect("/");

export async function action({ request }: ActionFunctionArgs) {
  const user = await requireUser(request);
  await requireForm(request, user);
  const cookie = await logout(getDb(), user.sessionId);
  return redirect("/login", { headers: { "Set-Cookie": cookie } });
}
