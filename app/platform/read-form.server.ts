/**
 * Reads a request body as a form. A body the browser's own forms never send (another content type, a multipart body
 * without its boundary or cut short) is the client's mistake, so it answers 400 rather than the 500 that an uncaught
 * parse error would give (docs/security.md, "Malformed requests").
 */
export async function readForm(request: Request): Promise<FormData> {
  try {
    return await request.formData();
  } catch {
    throw new Response("The request body is not a form this page accepts. Reload the page and try again.", {
      status: 400,
      headers: { "Content-Type": "text/plain; charset=utf-8" },
    });
  }
}
