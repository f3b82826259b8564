/**
 * The one way a route answers with a file (docs/reliability.md, "Downloads"): the whole body is made before the
 * answer starts — in memory, or as a complete file written through the output layer
 * (app/platform/output-files.server.ts) — and sent with its Content-Length, so a download is complete or an error,
 * never a 200 with a short body. A full disk (ENOSPC, SQLite's "database or disk is full") answers 507 with a plain
 * message that says what happened and to tell the server's administrator; a file the server may not write (permission
 * denied, a read-only file system) 500 with the same kind of message. Any other error is left to the error boundary.
 */
import { isOutOfSpace } from "./storage-errors.server";
import { outputCause } from "./output-files.server";

/** A made file: text, bytes, or a stream of a completed file with its length in bytes. */
export type DownloadBody = string | Uint8Array | { stream: ReadableStream<Uint8Array>; length: number };

export interface DownloadOptions {
  filename: string;
  contentType: string;
  /** Shown in the browser (an image) rather than saved; default false (an attachment). */
  inline?: boolean;
  /** Default "private, no-store". */
  cacheControl?: string;
}

const SERVER_WRITE_ERRORS = new Set(["EACCES", "EPERM", "EROFS", "EIO", "EDQUOT"]);

/** The plain answer to a download that could not be made because of the server's storage, or null for other errors. */
export function downloadFailure(filename: string, error: unknown): Response | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (isOutOfSpace(error))
    return plain(
      507,
      `The server's disk is full, so ${filename} could not be made and nothing was downloaded. ` +
        "Tell the administrator of the server; once space has been freed, download it again.",
    );
  if (typeof code === "string" && SERVER_WRITE_ERRORS.has(code))
    return plain(
      500,
      `The server could not write its temporary files (${outputCause(error)}), so ${filename} could not be made and ` +
        "nothing was downloaded. Tell the administrator of the server.",
    );
  return null;
}

function plain(status: number, message: string): Response {
  return new Response(message + "\n", {
    status,
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}

/**
 * A body whose file name (and type) is known only once it is made; `options.filename` names the file in an error
 * message and `options.contentType` is the default type.
 */
export interface NamedBody {
  filename: string;
  contentType?: string;
  body: DownloadBody;
}

/**
 * Makes the body with `produce` and answers with it as a download; `produce` may also return a Response of its own
 * (a refusal redirected to the page that asked), which is answered as it is.
 */
export async function downloadResponse(
  options: DownloadOptions,
  produce: () => DownloadBody | NamedBody | Response | Promise<DownloadBody | NamedBody | Response>,
): Promise<Response> {
  let made: DownloadBody | NamedBody | Response;
  try {
    made = await produce();
  } catch (error) {
    const failure = downloadFailure(options.filename, error);
    if (failure) return failure;
    throw error;
  }
  if (made instanceof Response) return made;
  const named = typeof made === "object" && "filename" in made ? made : null;
  const filename = named ? named.filename : options.filename;
  const body = named ? named.body : (made as DownloadBody);
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body instanceof Uint8Array ? body : null;
  const length = bytes ? bytes.byteLength : (body as { length: number }).length;
  const payload = (bytes ?? (body as { stream: ReadableStream<Uint8Array> }).stream) as BodyInit;
  const disposition = options.inline ? "inline" : "attachment";
  return new Response(payload, {
    headers: {
      "Content-Type": named?.contentType ?? options.contentType,
      "Content-Disposition": `${disposition}; filename="${filename.replace(/["\\\r\n]/g, "_")}"`,
      "Content-Length": String(length),
      "Cache-Control": options.cacheControl ?? "private, no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}
