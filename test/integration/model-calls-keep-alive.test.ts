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

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
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
});
