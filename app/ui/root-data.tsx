import { useRouteLoaderData } from "@remix-run/react";
import type { Role } from "../accounts/roles";

/** What the layout's loader (app/root.tsx) gives every page: the signed-in user, if any, and their CSRF token. */
export interface RootData {
  user: { username: string; displayName: string; roles: Role[]; csrf: string } | null;
  /**
   * The protocols' links of the menu for the user's roles, in the header's order (app/platform/registry.server.ts,
   * `navEntriesFor`); `activePattern` marks the link as current beyond its own address, `listOf` offers it on an
   * error page under those first path segments.
   */
  nav: { to: string; label: string; activePattern?: string; listOf?: { segments: readonly string[]; label: string } }[];
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
