/**
 * Every runner's endpoint reuses connections (docs/evaluation.md#decoding-and-retries): calls made one after another,
 * and by the model and the judge endpoints, go over one kept-alive connection instead of one connection per call.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAiEndpoint, createOpenAiResultEndpoint } from "../../app/model-calls/client";

let server: Server;
let connections = 0;
let baseURL = "";
/** What the server saw of the last request: the headers node:http parsed, the method, the path, the body. */
let last: { headers: Record<string, unknown>; method: string; url: string; body: string } | null = null;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      last = { headers: req.headers, method: req.method ?? "", url: req.url ?? "", body };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] }));
    });
  });
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const request = {
  messages: [{ role: "user" as const, content: "hi" }],
  temperature: null,
  topP: null,
  maxTokens: 8,
  seed: null,
};
const options = (label: string) => ({
  baseURL,
  apiKey: "k",
  model: "m",
  timeoutMs: 5000,
  maxTokensParam: "max_tokens" as const,
  label,
});

describe("keep-alive transport", () => {
  it("sequential calls of two endpoints share one connection", async () => {
    const model = createOpenAiEndpoint(options("model"));
    const judge = createOpenAiResultEndpoint(options("judge"));
    const before = connections;
    for (let i = 0; i < 5; i++) {
      expect(await model.complete(request)).toBe("ok");
      expect((await judge.call(request)).text).toBe("ok");
    }
    expect(connections - before).toBe(1);
  });

  it("a call is the POST the openai client sends: Host, length, headers and body as given", async () => {
    const model = createOpenAiEndpoint(options("model"));
    expect(await model.complete({ ...request, messages: [{ role: "user", content: "é \u2028 ok" }] })).toBe("ok");
    const port = new URL(baseURL).port;
    expect(last).toMatchObject({ method: "POST", url: "/v1/chat/completions" });
    expect(last!.headers).toMatchObject({
      host: `127.0.0.1:${port}`,
      "content-type": "application/json",
      accept: "application/json",
      authorization: "Bearer k",
      "content-length": String(Buffer.byteLength(last!.body)),
      connection: "keep-alive",
    });
    expect(JSON.parse(last!.body)).toEqual({
      model: "m",
      messages: [{ role: "user", content: "é \u2028 ok" }],
      max_tokens: 8,
    });
  });
});
