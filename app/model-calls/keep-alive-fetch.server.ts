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
import net from "node:net";

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
  if (url.protocol === "http:") return postPlain(url, headers, body, timeoutMs, signal);
  sharedAgents ??= createAgents(256);
  const agents = sharedAgents;
  return new Promise<PostAnswer>((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const target = requestTarget(url);
    let failure: Error | null = null;
    // Headers as a flat list, written as given (no per-header bookkeeping); node:http then adds no Host of its own.
    const list: string[] = [];
    for (const [name, value] of requestHeaders(url, target, headers, body)) list.push(name, value);
    const request = https.request(
      {
        protocol: url.protocol,
        hostname: target.hostname,
        port: target.port,
        path: target.path,
        method: "POST",
        headers: list as unknown as http.OutgoingHttpHeaders,
        agent: agents["https:"],
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

/**
 * What a request carries, in order: Host, the caller's headers, Basic credentials from the URL when the caller gave
 * no Authorization, the body's length, and keep-alive — what node:http writes for the same request.
 */
function requestHeaders(
  url: URL,
  target: RequestTarget,
  headers: Record<string, string>,
  body: string,
): [string, string][] {
  const out: [string, string][] = [["host", url.host]];
  let authorization = false;
  for (const name in headers) {
    out.push([name, headers[name]!]);
    if (name.toLowerCase() === "authorization") authorization = true;
  }
  if (target.auth !== undefined && !authorization)
    out.push(["authorization", `Basic ${Buffer.from(target.auth).toString("base64")}`]);
  out.push(["content-length", String(Buffer.byteLength(body))], ["connection", "keep-alive"]);
  return out;
}

/** Sockets to each plain-HTTP host at once, as the https agent's `maxSockets`; more requests wait for one. */
const PLAIN_MAX_SOCKETS = 256;
/** Longest head of an answer (status line and headers) read before the answer is taken for malformed. */
const MAX_HEAD_BYTES = 64 * 1024;

interface PlainHost {
  key: string;
  idle: net.Socket[];
  /** Sockets open or opening, idle ones included. */
  open: number;
  waiting: (() => void)[];
}
const plainHosts = new Map<string, PlainHost>();

/** What an idle socket listens to: any byte or error ends it (nothing is asked of it). */
const idleListeners = new WeakMap<net.Socket, () => void>();

/** An error as node:http raises it for a connection that ended before its answer did. */
function hangUp(): Error {
  return Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
}

/** A socket of the pool: an idle one (taken out of the idle list and referenced again), or a new connection. */
function takeSocket(pool: PlainHost, hostname: string, port: number): net.Socket {
  for (;;) {
    const s = pool.idle.pop();
    if (s === undefined) break;
    const idle = idleListeners.get(s)!;
    s.removeListener("data", idle).removeListener("error", idle);
    if (s.destroyed || s.readyState !== "open") continue;
    s.ref();
    return s;
  }
  pool.open++;
  const s = net.connect({ host: hostname, port });
  s.setNoDelay(true);
  s.once("close", () => {
    pool.open--;
    const at = pool.idle.indexOf(s);
    if (at >= 0) pool.idle.splice(at, 1);
    startWaiting(pool);
  });
  return s;
}

/** A socket whose answer ended cleanly back to the idle list, not keeping the process alive (as node:http's agent). */
function keepIdle(pool: PlainHost, s: net.Socket): void {
  const idle = () => s.destroy();
  idleListeners.set(s, idle);
  s.on("data", idle).on("error", idle);
  s.unref();
  pool.idle.push(s);
}

/** Starts waiting requests while a socket is idle or another may be opened; forgets a host with nothing left. */
function startWaiting(pool: PlainHost): void {
  while (pool.waiting.length > 0 && (pool.idle.length > 0 || pool.open < PLAIN_MAX_SOCKETS)) pool.waiting.shift()!();
  if (pool.open === 0 && pool.waiting.length === 0) plainHosts.delete(pool.key);
}

/**
 * A POST over plain HTTP/1.1 on kept-alive sockets of our own (the model endpoints a runner reaches over plain HTTP,
 * a local vLLM or the benchmark's stub): the request written in one piece, the answer's head parsed once and its body
 * framed by Content-Length, chunked transfer coding, or the end of the connection. node:http's request and response
 * objects, streams and parser callbacks were most of the runner's remaining CPU per call (docs/evaluation.md,
 * "Scale"). The same outcomes as the https path: the answer read whole, AbortError, PostTimeoutError, or the
 * socket's error (a connection closed before the end of the answer: ECONNRESET "socket hang up").
 */
function postPlain(
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<PostAnswer> {
  return new Promise<PostAnswer>((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const target = requestTarget(url);
    const port = Number(target.port || 80);
    const key = `${target.hostname}:${port}`;
    let found = plainHosts.get(key);
    if (found === undefined) plainHosts.set(key, (found = { key, idle: [], open: 0, waiting: [] }));
    const pool = found;
    let head = `POST ${target.path} HTTP/1.1\r\n`;
    for (const [name, value] of requestHeaders(url, target, headers, body)) head += `${name}: ${value}\r\n`;
    const request = head + "\r\n" + body;

    let socket: net.Socket | null = null;
    let settled = false;
    const answer = new AnswerReader();
    const timer = setTimeout(() => fail(new PostTimeoutError()), timeoutMs);
    const onAbort = () => fail(abortError());
    signal?.addEventListener("abort", onAbort, { once: true });

    function settle(): void {
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    /** The socket back to the pool (an answer that ended cleanly on a reusable connection) or closed. */
    function release(keep: boolean): void {
      const s = socket!;
      socket = null;
      s.removeListener("data", onData).removeListener("error", fail).removeListener("close", onClose);
      if (keep && !s.destroyed) keepIdle(pool, s);
      else s.destroy();
      startWaiting(pool);
    }
    function fail(e: Error): void {
      if (settled) return;
      settle();
      if (socket) release(false);
      else {
        const at = pool.waiting.indexOf(start);
        if (at >= 0) pool.waiting.splice(at, 1);
      }
      reject(e);
    }
    function onData(chunk: Buffer): void {
      let done: PostAnswer | null;
      try {
        done = answer.push(chunk);
      } catch (e) {
        return fail(e as Error);
      }
      if (done === null || settled) return;
      settle();
      release(answer.reusable);
      resolve(done);
    }
    function onClose(): void {
      if (settled) return;
      const done = answer.end();
      if (done === null) return fail(hangUp());
      settle();
      release(false);
      resolve(done);
    }
    function start(): void {
      if (settled) return;
      const s = (socket = takeSocket(pool, target.hostname, port));
      s.on("data", onData).on("error", fail).on("close", onClose);
      s.write(request);
    }
    if (pool.idle.length > 0 || pool.open < PLAIN_MAX_SOCKETS) start();
    else pool.waiting.push(start);
  });
}

/**
 * An HTTP/1.1 answer read from the bytes as they arrive: `push` returns the answer once it is complete (null before),
 * `end` the answer at the end of the connection (one framed by it), or null when it is incomplete. Throws on a
 * malformed head or chunk.
 */
class AnswerReader {
  private buffered: Buffer | null = null;
  private status = 0;
  private headers: Record<string, string> | null = null;
  /** Bytes of body still expected (Content-Length); -1 for chunked; -2 until the connection ends. */
  private left = 0;
  private body: Buffer[] = [];
  private chunkLeft = 0;
  /** The CRLF after the last chunk's data has been read (or no chunk has begun). */
  private chunkEnded = true;
  private trailer = false;
  reusable = false;

  push(chunk: Buffer): PostAnswer | null {
    let data = this.buffered ? Buffer.concat([this.buffered, chunk]) : chunk;
    this.buffered = null;
    if (this.headers === null) {
      const at = data.indexOf("\r\n\r\n");
      if (at < 0) {
        if (data.length > MAX_HEAD_BYTES) throw new Error("the answer's head is too long");
        this.buffered = data;
        return null;
      }
      this.readHead(data.toString("latin1", 0, at));
      data = data.subarray(at + 4);
      if (this.status >= 100 && this.status < 200) {
        this.headers = null;
        return data.length > 0 ? this.push(data) : null;
      }
      if (this.left === 0) return this.done(data);
    }
    if (this.left === -2) {
      this.body.push(data);
      return null;
    }
    if (this.left > 0) {
      if (data.length < this.left) {
        this.body.push(data);
        this.left -= data.length;
        return null;
      }
      this.body.push(data.subarray(0, this.left));
      const rest = data.subarray(this.left);
      this.left = 0;
      return this.done(rest);
    }
    return this.chunked(data);
  }

  end(): PostAnswer | null {
    if (this.headers !== null && this.left === -2) return this.answer();
    return null;
  }

  private readHead(text: string): void {
    const lines = text.split("\r\n");
    const status = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(lines[0]!);
    if (!status) throw new Error("the answer is not HTTP/1.x");
    this.status = Number(status[2]);
    const headers: Record<string, string> = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(":");
      if (colon <= 0) throw new Error("a header line of the answer has no name");
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    }
    this.headers = headers;
    const connection = (headers["connection"] ?? "").toLowerCase();
    this.reusable = status[1] === "1" ? !connection.includes("close") : connection.includes("keep-alive");
    const coding = (headers["transfer-encoding"] ?? "").toLowerCase();
    if (this.status === 204 || this.status === 304 || (this.status >= 100 && this.status < 200)) this.left = 0;
    else if (coding !== "") {
      if (!coding.endsWith("chunked")) throw new Error("the answer's transfer coding is not chunked");
      this.left = -1;
    } else if (headers["content-length"] !== undefined) {
      const length = headers["content-length"];
      if (!/^\d+$/.test(length)) throw new Error("the answer's content-length is not a number");
      this.left = Number(length);
    } else {
      this.left = -2;
      this.reusable = false;
    }
  }

  /** Chunked transfer coding: size line, data, CRLF, … a zero size, trailer lines, an empty line. */
  private chunked(data: Buffer): PostAnswer | null {
    let pos = 0;
    for (;;) {
      if (this.chunkLeft > 0) {
        const take = Math.min(this.chunkLeft, data.length - pos);
        this.body.push(data.subarray(pos, pos + take));
        pos += take;
        this.chunkLeft -= take;
        if (this.chunkLeft > 0) return null;
        continue;
      }
      const eol = data.indexOf("\r\n", pos);
      if (eol < 0) {
        if (data.length - pos > MAX_HEAD_BYTES) throw new Error("a chunk line of the answer is too long");
        this.buffered = data.subarray(pos);
        return null;
      }
      const line = data.toString("latin1", pos, eol);
      pos = eol + 2;
      if (this.trailer) {
        if (line === "") return this.done(data.subarray(pos));
        continue;
      }
      if (this.chunkEnded === false) {
        // The CRLF after a chunk's data.
        if (line !== "") throw new Error("a chunk of the answer is longer than its size");
        this.chunkEnded = true;
        continue;
      }
      const size = /^([0-9a-fA-F]+)[ \t]*(?:;.*)?$/.exec(line);
      if (!size) throw new Error("a chunk size of the answer is not hexadecimal");
      const n = parseInt(size[1]!, 16);
      if (n === 0) this.trailer = true;
      else {
        this.chunkLeft = n;
        this.chunkEnded = false;
      }
    }
  }

  private done(rest: Buffer): PostAnswer {
    // Bytes past the answer: the connection is in an unknown state and is not used again.
    if (rest.length > 0) this.reusable = false;
    return this.answer();
  }

  private answer(): PostAnswer {
    const text = this.body.length === 1 ? this.body[0]!.toString("utf8") : Buffer.concat(this.body).toString("utf8");
    return { status: this.status, headers: this.headers!, text };
  }
}

interface RequestTarget {
  hostname: string;
  port: string;
  path: string;
  /** `user:password` from the URL, decoded, as node:http's `auth`. */
  auth: string | undefined;
}

/** A URL's request target, worked out once per URL object (an endpoint posts every call to the same one). */
const targets = new WeakMap<URL, RequestTarget>();
function requestTarget(url: URL): RequestTarget {
  let target = targets.get(url);
  if (target === undefined) {
    target = {
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
