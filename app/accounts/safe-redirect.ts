/**
 * Only same-site paths: the login page must not send people elsewhere. Control characters and backslashes are
 * refused outright (browsers drop tabs and read "\\" as "/", turning "/\t/evil" into "//evil"), then the path is
 * resolved against a placeholder origin that must not change.
 */
export function safeRedirect(to: FormDataEntryValue | string | null): string {
  const s = typeof to === "string" ? to : "";
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point of this test
  if (!s.startsWith("/") || /[\u0000-\u001f\u007f\\]/.test(s)) return "/";
  try {
    const url = new URL(s, "http://concord.invalid");
    if (url.origin !== "http://concord.invalid") return "/";
    // Dot segments are removed after the check above ("/%2e%2e//evil" becomes "//evil"), and a path that starts with
    // two slashes names another host when a browser reads it as a Location; an encoded slash or backslash is no
    // Concord path either (docs/security.md, "Open redirect").
    if (!isSingleSlashPath(url.pathname)) return "/";
    return url.pathname + url.search + url.hash;
  } catch {
    return "/";
  }
}

function isSingleSlashPath(pathname: string): boolean {
  return pathname.startsWith("/") && !pathname.startsWith("//") && !/%2f|%5c/i.test(pathname);
}
