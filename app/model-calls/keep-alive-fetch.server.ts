/**
 * A `fetch` for the `openai` client over node:http(s) with a keep-alive agent (docs/rubric-grading.md, "Scale";
 * docs/evaluation.md#decoding-and-retries). Every runner — `run`, `mc-run`, `grade-*` — makes thousands of small calls; measured on the benchmark's stub, Node's built-in fetch
 * (undici) costs about 0.24 ms of CPU per call against about 0.06 ms for node:http, which decides whether 64
 * concurrent calls keep up with a 50 ms endpoint. Only what the client uses is implemented: a method, headers, a
 * string or byte body, an abort signal, and a response read whole.
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

let shared: FetchLike | null = null;

/** One keep-alive pool for the whole process, so the model and the judge endpoints reuse connections too. */
export function sharedKeepAliveFetch(): FetchLike {
  shared ??= createKeepAliveFetch();
  return shared;
}

export function createKeepAliveFetch(maxSockets = 256): FetchLike {
  const agents = {
    "http:": new http.Agent({ keepAlive: true, maxSockets }),
    "https:": new https.Agent({ keepAlive: true, maxSockets }),
  };
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
