/**
 * A server that rejects an optional parameter (docs/reliability.md, "Model calls"): OpenAI's reasoning models answer
 * a temperature with HTTP 400 `unsupported_value` naming it. The client learns it once per endpoint and sends every
 * call that carried it again without it, the calls already in flight included; a request that must keep it fails.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CallError, createOpenAiEndpoint, createOpenAiResultEndpoint } from "../../app/model-calls/client";
import { startOpenAiStub, type OpenAiStub } from "../support/openai-stub";

let stub: OpenAiStub | null = null;
afterEach(async () => {
  await stub?.close();
  stub = null;
});

const rejectTemperature = () =>
  startOpenAiStub((call) =>
    "temperature" in call.body
      ? {
          status: 400,
          delayMs: 30,
          body: JSON.stringify({
            error: {
              message: "Unsupported value: 'temperature' does not support 0 with this model.",
              type: "invalid_request_error",
              param: "temperature",
              code: "unsupported_value",
            },
          }),
        }
      : { content: `answer ${call.index}` },
  );

const request = (i: number) => ({
  messages: [{ role: "user" as const, content: `question ${i}` }],
  temperature: 0,
  topP: null,
  maxTokens: 8,
  seed: 7,
});

const options = (baseURL: string) => ({
  baseURL,
  apiKey: "k",
  model: "o-model",
  timeoutMs: 5000,
  maxTokensParam: "max_completion_tokens" as const,
  label: "model",
});

describe("an optional parameter the server rejects", () => {
  it("is learned once and every call in flight is sent again without it", async () => {
    stub = await rejectTemperature();
    const dropped: string[] = [];
    const endpoint = createOpenAiEndpoint({ ...options(stub.baseURL), onParameterDropped: (p) => dropped.push(p) });
    // 16 calls in flight when the first 400 arrives: every one of them is answered, none fails.
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => endpoint.complete(request(i))));
    expect(answers.every((a) => a.startsWith("answer "))).toBe(true);
    expect(dropped).toEqual(["temperature"]);
    const withTemperature = stub.calls.filter((c) => "temperature" in c.body).length;
    expect(withTemperature).toBe(16);
    // The seed (not rejected) is still sent; later calls never send the temperature again.
    expect(stub.calls.filter((c) => !("temperature" in c.body)).every((c) => c.body.seed === 7)).toBe(true);
    const before = stub.calls.length;
    expect(await endpoint.complete(request(99))).toMatch(/^answer /);
    expect(stub.calls.length - before).toBe(1);
    expect("temperature" in stub.calls[before].body).toBe(false);
  });

  it("says which parameters a result was made without, and fails a request that must keep it", async () => {
    stub = await rejectTemperature();
    const endpoint = createOpenAiResultEndpoint(options(stub.baseURL));
    const kept = await endpoint.call({ ...request(0), keep: ["temperature"] }).catch((e: unknown) => e);
    expect(kept).toBeInstanceOf(CallError);
    expect((kept as CallError).kind).toBe("rejected");
    expect((kept as CallError).message).toBe(
      "model: HTTP 400 (invalid_request_error, unsupported_value) [temperature]",
    );
    const result = await endpoint.call(request(1));
    expect(result.dropped).toEqual(["temperature"]);
    expect(result.text).toMatch(/^answer /);
  });

  it("is not guessed when the server names none and two optional parameters were sent", async () => {
    stub = await startOpenAiStub((call) =>
      "temperature" in call.body
        ? {
            status: 400,
            body: JSON.stringify({ error: { message: "x", type: "invalid_request_error", code: "unsupported_value" } }),
          }
        : { content: "ok" },
    );
    const endpoint = createOpenAiEndpoint(options(stub.baseURL));
    const error = await endpoint.complete(request(0)).catch((e: unknown) => e);
    expect((error as CallError).kind).toBe("rejected");
    // With the temperature the only optional parameter sent, it is the one.
    expect(await endpoint.complete({ ...request(1), seed: null })).toBe("ok");
  });
});

describe('a length limit the server rejects (docs/reliability.md, "Model calls")', () => {
  // OpenAI's newer models answer `max_tokens` so: the endpoint learns `max_completion_tokens` once.
  const rejectMaxTokens = () =>
    startOpenAiStub((call) =>
      "max_tokens" in call.body
        ? {
            status: 400,
            delayMs: 30,
            body: JSON.stringify({
              error: {
                message:
                  "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                type: "invalid_request_error",
                param: "max_tokens",
                code: "unsupported_parameter",
              },
            }),
          }
        : { content: `answer ${call.index} ${String(call.body.max_completion_tokens)}` },
    );

  it("is learned once: every call in flight is sent again with max_completion_tokens, and every later call too", async () => {
    stub = await rejectMaxTokens();
    const switched: string[] = [];
    const endpoint = createOpenAiResultEndpoint({
      ...options(stub.baseURL),
      maxTokensParam: "max_tokens",
      onMaxTokensParamSwitched: (from, to) => switched.push(`${from}->${to}`),
    });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => endpoint.call(request(i))));
    expect(results.every((r) => /^answer \d+ 8$/.test(r.text))).toBe(true);
    // The length limit is not an optional parameter left out: nothing is reported dropped.
    expect(results.every((r) => r.dropped.length === 0)).toBe(true);
    expect(switched).toEqual(["max_tokens->max_completion_tokens"]);
    expect(stub.calls.filter((c) => "max_tokens" in c.body)).toHaveLength(8);
    // The other parameters are still sent as they were.
    expect(stub.calls.filter((c) => !("max_tokens" in c.body)).every((c) => c.body.temperature === 0)).toBe(true);
    const before = stub.calls.length;
    expect((await endpoint.call(request(99))).text).toMatch(/^answer /);
    expect(stub.calls.length - before).toBe(1);
    expect(stub.calls[before].body.max_completion_tokens).toBe(8);
    expect("max_tokens" in stub.calls[before].body).toBe(false);
  });

  it("is switched once only: a server that rejects both names fails the call", async () => {
    stub = await startOpenAiStub((call) => {
      const param = "max_tokens" in call.body ? "max_tokens" : "max_completion_tokens";
      return {
        status: 400,
        body: JSON.stringify({
          error: { message: "x", type: "invalid_request_error", param, code: "unsupported_parameter" },
        }),
      };
    });
    const endpoint = createOpenAiEndpoint({ ...options(stub.baseURL), maxTokensParam: "max_tokens" });
    const error = await endpoint.complete(request(0)).catch((e: unknown) => e);
    expect((error as CallError).kind).toBe("rejected");
    expect((error as CallError).message).toBe(
      "model: HTTP 400 (invalid_request_error, unsupported_parameter) [max_completion_tokens]",
    );
    expect(stub.calls).toHaveLength(2);
  });
});
