/**
 * Calls over node:http(s) with keep-alive agents (docs/rubric-grading.md, "Scale";
 * docs/evaluation.md#decoding-and-retries). Every runner — `run`, `mc-run`, `grade-*` — makes thousands of small
 * calls; measured on the benchmark's stub, Node's built-in fetch (undici) costs about 0.24 ms of CPU per call against
 * about 0.06 ms for node:http, which decides whether 128 concurrent calls keep up with a 50 ms endpoint. Two shapes:
 * `postOnPool`, the chat client's own path (one process-wide pool, no fetch objects at all), and
 * `createKeepAliveFetch`, a `fetch` with its own pool for the `openai` client where it is still used (uploads). Only
 * what they use is implemented: a method, headers, a string or byte body, an abort signal, a response read whole.
 */
import http from "node:http";
import https from "node:https";

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

function abortError(): Error {
  const e = new Error("This operation was aborted");
  e.name = "AbortError";
  return e;
}

export type { FetchLike };

function createAgents(maxSockets: number) {
  return {
    "http:": new http.Agent({ keepAlive: true, maxSockets }),
    "https:": new https.Agent({ keepAlive: true, maxSockets }),
  };
}

let sharedAgents: ReturnType<typeof createAgents> | null = null;

/** An answer read whole: status, headers (a repeated header joined with ", "), body text. */
export interface PostAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** The request ran past its time-out (the whole exchange, from sending to the last byte of the answer). */
export class PostTimeoutError extends Error {
  constructor() {
    super("The request timed out.");
    this.name = "PostTimeoutError";
  }
}

/**
 * The chat client's own path (client.ts): one POST of a string body on the shared keep-alive pool, the answer read
 * whole, with no Request, Response or Headers objects on the way (they were most of the remaining CPU per call at
 * 128 calls in flight). Rejects with an AbortError when `signal` aborts, PostTimeoutError past `timeoutMs`, and the
 * socket's own error otherwise.
 */
export function postOnPool(
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<PostAnswer> {
  sharedAgents ??= createAgents(256);
  const agents = sharedAgents;
  return new Promise<PostAnswer>((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const target = requestTarget(url);
    let failure: Error | null = null;
    // Headers as a flat list, written as given (no per-header bookkeeping); node:http then adds no Host of its own.
    const list: string[] = ["host", url.host];
    for (const name in headers) list.push(name, headers[name]!);
    list.push("content-length", String(Buffer.byteLength(body)));
    const request = target.lib.request(
      {
        protocol: url.protocol,
        hostname: target.hostname,
        port: target.port,
        path: target.path,
        auth: target.auth,
        method: "POST",
        headers: list as unknown as http.OutgoingHttpHeaders,
        agent: agents[url.protocol as "http:" | "https:"],
      },
      (response) => {
        // The body's bytes kept as they come and decoded once at the end.
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", fail);
        response.on("end", () => {
          done();
          const out: Record<string, string> = {};
          const raw = response.headers;
          for (const k in raw) {
            const v = raw[k];
            if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
          }
          const text = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
          resolve({ status: response.statusCode ?? 500, headers: out, text });
        });
      },
    );
    const timer = setTimeout(() => request.destroy((failure = new PostTimeoutError())), timeoutMs);
    const onAbort = () => request.destroy((failure = abortError()));
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    function fail(e: Error) {
      done();
      reject(failure ?? e);
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    request.on("error", fail);
    request.end(body);
  });
}

/** A URL's request target, worked out once per URL object (an endpoint posts every call to the same one). */
const targets = new WeakMap<
  URL,
  { lib: typeof http | typeof https; hostname: string; port: string; path: string; auth: string | undefined }
>();
function requestTarget(url: URL) {
  let target = targets.get(url);
  if (target === undefined) {
    target = {
      lib: url.protocol === "https:" ? https : http,
      // An IPv6 literal without its brackets, as node:http takes it.
      hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      auth: url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined,
    };
    targets.set(url, target);
  }
  return target;
}

export function createKeepAliveFetch(maxSockets = 256): FetchLike {
  const agents = createAgents(maxSockets);
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(abortError());
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, key) => (headers[key] = value));
      const body = init.body;
      if (body !== undefined && body !== null && typeof body !== "string" && !(body instanceof Uint8Array)) {
        // Multipart uploads and streams go through the built-in fetch.
        return resolve(fetch(input, init));
      }
      const data =
        body === undefined || body === null ? undefined : typeof body === "string" ? Buffer.from(body) : body;
      if (data) headers["content-length"] = String(data.byteLength);
      const lib = url.protocol === "https:" ? https : http;
      const agent = agents[url.protocol as "http:" | "https:"];
      const request = lib.request(url, { method: init.method ?? "GET", headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (c: Buffer) => chunks.push(c));
        response.on("error", reject);
        response.on("end", () => {
          signal?.removeEventListener("abort", onAbort);
          const out = new Headers();
          for (const [k, v] of Object.entries(response.headers)) {
            if (Array.isArray(v)) for (const x of v) out.append(k, x);
            else if (v !== undefined) out.set(k, v);
          }
          const status = response.statusCode ?? 500;
          const payload = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          resolve(new Response(payload, { status, statusText: response.statusMessage, headers: out }));
        });
      });
      const onAbort = () => {
        request.destroy(abortError());
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      request.on("error", (e) => {
        signal?.removeEventListener("abort", onAbort);
        reject(signal?.aborted ? abortError() : e);
      });
      request.end(data);
    });
}
