/**
 * URLs that moved when each protocol got its own prefix (docs/architecture.md, "URLs"). Old bookmarks and links in
 * e-mails keep working: the catch-all route answers them with a permanent redirect to the new address.
 */
const MOVED: readonly [from: string, to: string][] = [
  ["/ratings/mentat", "/mentat"],
  ["/ratings/cases", "/case-review"],
  ["/ratings", "/expert-ratings"],
  ["/rate", "/judge-validation"],
  ["/review", "/screening"],
  ["/admin/expert/mentat", "/admin/mentat"],
  ["/admin/expert/cases", "/admin/case-review"],
  ["/admin/expert", "/admin/expert-ratings"],
  ["/admin/judge", "/admin/judge-validation"],
];

/** The new address of a moved path (query kept), or null when the path did not move. */
export function movedUrl(pathname: string, search = ""): string | null {
  for (const [from, to] of MOVED)
    if (pathname === from || pathname.startsWith(`${from}/`)) return to + pathname.slice(from.length) + search;
  return null;
}
