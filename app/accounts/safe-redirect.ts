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
    return url.pathname + url.search + url.hash;
  } catch {
    return "/";
  }
}
