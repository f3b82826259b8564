/**
 * The chat client's plain-HTTP transport (app/model-calls/keep-alive-fetch.server.ts `postOnPool` over `http:`,
 * docs/evaluation.md, "Scale"): answers framed every way HTTP/1.1 frames them, cut into pieces anywhere, read whole;
 * kept-alive sockets reused; a connection that ends early, a time-out and an abort each rejected as node:http would.
 */
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { postOnPool, PostTimeoutError } from "../../app/model-calls/keep-alive-fetch.server";

let server: Server | null = null;
const connections: Socket[] = [];

/** A raw TCP server: `answer` gets each request's bytes (head and body) and writes what it likes. */
async function rawServer(answer: (socket: Socket, request: string) => void): Promise<URL> {
  server = createServer((socket) => {
    connections.push(socket);
    let pending = "";
    socket.on("data", (d) => {
      pending += d.toString("latin1");
      const end = pending.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(pending.slice(0, end))?.[1] ?? 0);
      if (pending.length < end + 4 + length) return;
      const request = pending.slice(0, end + 4 + length);
      pending = pending.slice(end + 4 + length);
      answer(socket, request);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`);
}

afterEach(async () => {
  for (const c of connections.splice(0)) c.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

/** Writes `text` in pieces of `size` bytes, a tick apart, so the reader meets every boundary. */
async function inPieces(socket: Socket, text: string, size: number) {
  const bytes = Buffer.from(text, "utf8");
  for (let i = 0; i < bytes.length; i += size) {
    socket.write(bytes.subarray(i, i + size));
    await new Promise((r) => setTimeout(r, 1));
  }
}

const JSON_BODY = JSON.stringify({ choices: [{ message: { content: "é — ok" } }] });

describe("plain-HTTP transport", () => {
  it("sends one request with Host, the headers, the length and the body", async () => {
    let seen = "";
    const url = await rawServer((s, request) => {
      seen = request;
      s.write(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(JSON_BODY)}\r\n\r\n${JSON_BODY}`,
      );
    });
    const body = JSON.stringify({ messages: ["é"] });
    const answer = await postOnPool(url, { authorization: "Bearer k", accept: "application/json" }, body, 5000);
    expect(answer).toEqual({
      status: 200,
      headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(JSON_BODY)) },
      text: JSON_BODY,
    });
    expect(Buffer.from(seen, "latin1").toString("utf8")).toBe(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer k\r\naccept: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: keep-alive\r\n\r\n${body}`,
    );
  });

  it.each([1, 2, 3, 7, 64])(
    "reads Content-Length, chunked and close-framed answers cut every %i bytes",
    async (size) => {
      const chunked = [
        '7;ext=1\r\n{"a": "\r\n',
        `${Buffer.byteLength('é — ok"}').toString(16)}\r\n`,
        'é — ok"}',
        "\r\n0\r\nx-trailer: 1\r\n\r\n",
      ].join("");
      const answers = [
        `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: ${Buffer.byteLength(JSON_BODY)}\r\nX-A: 1\r\nX-A: 2\r\n\r\n${JSON_BODY}`,
        `HTTP/1.1 429 Too Many Requests\r\ntransfer-encoding: chunked\r\nretry-after: 2\r\n\r\n${chunked}`,
        `HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n${JSON_BODY}`,
      ];
      let k = 0;
      const url = await rawServer((s) => {
        const text = answers[k++]!;
        void inPieces(s, text, size).then(() => (text.includes("connection: close") ? s.end() : undefined));
      });
      const first = await postOnPool(url, {}, "{}", 5000);
      expect(first.status).toBe(200);
      expect(first.headers["x-a"]).toBe("1, 2");
      expect(first.text).toBe(JSON_BODY);
      const second = await postOnPool(url, {}, "{}", 5000);
      expect(second).toMatchObject({ status: 429, text: '{"a": "é — ok"}' });
      expect(second.headers["retry-after"]).toBe("2");
      const third = await postOnPool(url, {}, "{}", 5000);
      expect(third).toMatchObject({ status: 200, text: JSON_BODY });
      // The first two answers were kept alive on one connection; the third closed it.
      expect(connections.length).toBe(1);
    },
  );

  it("reuses a kept-alive socket for calls one after another, and opens one per call in flight", async () => {
    const url = await rawServer((s) => setTimeout(() => s.write(`HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok`), 20));
    for (let i = 0; i < 3; i++) expect((await postOnPool(url, {}, "{}", 5000)).text).toBe("ok");
    expect(connections.length).toBe(1);
    const all = await Promise.all(Array.from({ length: 4 }, () => postOnPool(url, {}, "{}", 5000)));
    expect(all.map((a) => a.text)).toEqual(["ok", "ok", "ok", "ok"]);
    expect(connections.length).toBe(4);
  });

  it("a connection closed before the end of its answer rejects with ECONNRESET; the next call connects again", async () => {
    let k = 0;
    const url = await rawServer((s) => {
      if (k++ === 0) {
        s.write(`HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc`);
        setTimeout(() => s.destroy(), 5);
      } else s.write(`HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok`);
    });
    await expect(postOnPool(url, {}, "{}", 5000)).rejects.toMatchObject({ code: "ECONNRESET" });
    expect((await postOnPool(url, {}, "{}", 5000)).text).toBe("ok");
  });

  it("a refused connection rejects with ECONNREFUSED", async () => {
    const url = await rawServer(() => {});
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = null;
    await expect(postOnPool(url, {}, "{}", 5000)).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("a time-out and an abort end the call and its connection", async () => {
    const url = await rawServer(() => {});
    await expect(postOnPool(url, {}, "{}", 50)).rejects.toBeInstanceOf(PostTimeoutError);
    const controller = new AbortController();
    const call = postOnPool(url, {}, "{}", 5000, controller.signal);
    setTimeout(() => controller.abort(), 20);
    await expect(call).rejects.toMatchObject({ name: "AbortError" });
    await new Promise((r) => setTimeout(r, 20));
    expect(connections.every((c) => c.destroyed || c.readableEnded)).toBe(true);
  });

  it("a malformed answer is an error, not an answer", async () => {
    const url = await rawServer((s) => s.write("SSH-2.0-OpenSSH\r\n\r\n"));
    await expect(postOnPool(url, {}, "{}", 5000)).rejects.toThrow("not HTTP/1.x");
  });
});
