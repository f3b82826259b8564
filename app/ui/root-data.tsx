import { useRouteLoaderData } from "@remix-run/react";
import type { Role } from "../accounts/roles";

/** What the layout's loader (app/root.tsx) gives every page: the signed-in user, if any, and their CSRF token. */
export interface RootData {
  user: { username: string; displayName: string; roles: Role[]; csrf: string } | null;
}

/** The layout's data, from any component under it. */
export function useRootData(): RootData | undefined {
  return useRouteLoaderData("root") as RootData | undefined;
}

/** The hidden CSRF field every form carries. */
export function Csrf() {
  const data = useRootData();
  return <input type="hidden" name="csrf" value={data?.user?.csrf ?? ""} />;
}
