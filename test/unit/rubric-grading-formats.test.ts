/**
 * The input and engine formats of rubric grading: HealthBench JSONL records, id lists, content hashes, Batch API
 * request and output lines (the OpenAI Batch API's documented shapes, which vLLM's run-batch shares), and how a
 * chat completion's refusal is told from a transport failure.
 */
import { describe, expect, it } from "vitest";
import { CallError, completionResult } from "../../app/model-calls/client";
import { batchRequestLine, customId, parseBatchOutputLine, parseCustomId } from "../../app/rubric-grading/domain/batch";
import { parseEvalSet, parseIdList, recordHash, setHash } from "../../app/rubric-grading/domain/eval-set";
import { splitJsonlLines } from "../../app/formats/jsonl";

const record = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    prompt_id: "a",
    prompt: [{ role: "user", content: "hi" }],
    rubrics: [{ criterion: "c", points: 3, tags: ["axis:accuracy"] }],
    example_tags: ["theme:x"],
    ...over,
  });

describe("evaluation sets", () => {
  it("reads records, keeps unknown fields out of the hash, and reports every bad line", () => {
    const ok = parseEvalSet(`\uFEFF${record()}\n\n${record({ prompt_id: "b", ideal_completions_data: null })}\n`);
    expect(ok.errors).toEqual([]);
    expect(ok.records.map((r) => r.prompt_id)).toEqual(["a", "b"]);
    expect(ok.lines).toEqual([1, 3]);
    expect(recordHash(ok.records[0])).toMatch(/^[0-9a-f]{64}$/);
    const bad = parseEvalSet(
      [
        record({ rubrics: [{ criterion: "neg", points: -2, tags: [] }] }),
        record({ prompt: [{ role: "tool", content: "x" }] }),
        record({ prompt_id: "" }),
        record(),
        record({ example_tags: ["t", "t"] }),
      ].join("\n"),
    );
    expect(bad.errors.map((e) => [e.line, e.message])).toEqual([
      [1, "rubrics need at least one item with positive points"],
      [2, "prompt.0.role: a message's role must be system, user or assistant"],
      [3, "prompt_id: prompt_id is required"],
      [5, "example_tags has a duplicate tag"],
    ]);
    expect(parseEvalSet("").errors).toEqual([{ line: 0, message: "the file has no records" }]);
    expect(parseEvalSet(`${record()}\n${record()}`).errors).toEqual([
      { line: 2, message: "duplicate prompt_id (first on line 1)" },
    ]);
  });

  it("hashes a set independently of record order", () => {
    const a = { promptId: "a", contentHash: "1" };
    const b = { promptId: "b", contentHash: "2" };
    expect(setHash([a, b])).toBe(setHash([b, a]));
    expect(setHash([a])).not.toBe(setHash([a, b]));
  });

  it("reads id lists as plain lines or JSONL", () => {
    expect(parseIdList(splitJsonlLines('x\n{"prompt_id": "y"}\n\nx\n')).ids).toEqual(["x", "y"]);
    expect(parseIdList(splitJsonlLines('{"id": 1}')).errors).toEqual([
      { line: 1, message: "the object has no prompt_id" },
    ]);
  });
});

describe("Batch API lines", () => {
  it("writes requests in the Batch API's shape", () => {
    const id = customId(12, 3, 7);
    expect(parseCustomId(id)).toEqual({ responseId: 12, criterionIndex: 3, judgeId: 7 });
    expect(parseCustomId("other")).toBeNull();
    expect(
      JSON.parse(
        batchRequestLine(id, {
          model: "m",
          messages: [{ role: "user", content: "q" }],
          temperature: 0,
          maxTokens: 2048,
          maxTokensParam: "max_tokens",
        }),
      ),
    ).toEqual({
      custom_id: "r12.c3.j7",
      method: "POST",
      url: "/v1/chat/completions",
      body: { model: "m", messages: [{ role: "user", content: "q" }], max_tokens: 2048, temperature: 0 },
    });
    expect(
      JSON.parse(
        batchRequestLine(id, {
          model: "m",
          messages: [],
          temperature: null,
          maxTokens: 5,
          maxTokensParam: "max_completion_tokens",
        }),
      ).body,
    ).toEqual({ model: "m", messages: [], max_completion_tokens: 5 });
  });

  it("reads results, errors and non-results", () => {
    const ok = {
      id: "b",
      custom_id: "r1.c0.j1",
      response: {
        status_code: 200,
        request_id: "q",
        body: {
          choices: [{ message: { content: "{}" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 9, completion_tokens: 2 },
        },
      },
      error: null,
    };
    expect(parseBatchOutputLine(JSON.stringify(ok))).toEqual({
      customId: "r1.c0.j1",
      ok: true,
      text: "{}",
      promptTokens: 9,
      completionTokens: 2,
    });
    expect(
      parseBatchOutputLine(JSON.stringify({ ...ok, response: null, error: { code: "server_error", message: "m" } })),
    ).toEqual({ customId: "r1.c0.j1", ok: false, reason: "error server_error" });
    expect(parseBatchOutputLine(JSON.stringify({ ...ok, response: { status_code: 429, body: {} } }))).toMatchObject({
      ok: false,
      reason: "HTTP 429",
    });
    expect(parseBatchOutputLine("{")).toEqual({ invalid: "not valid JSON" });
    expect(parseBatchOutputLine('{"id": 1}')).toMatchObject({ invalid: expect.stringMatching(/^custom_id: /) });
  });
});

describe("refusals and empty answers", () => {
  const answer = (message: Record<string, unknown>, finish_reason: string) => ({
    choices: [{ message, finish_reason }],
    usage: { prompt_tokens: 4, completion_tokens: 0 },
  });
  it("keeps an empty answer with an explicit refusal, and treats a bare empty answer as a failure", () => {
    expect(completionResult(answer({ content: "" }, "refusal"), "c")).toMatchObject({
      text: "",
      refusal: true,
      finishReason: "refusal",
      promptTokens: 4,
    });
    expect(completionResult(answer({ content: null, refusal: "I can't help with that." }, "stop"), "c")).toMatchObject({
      text: "",
      refusal: true,
    });
    expect(completionResult(answer({ content: "" }, "content_filter"), "c").refusal).toBe(true);
    expect(() => completionResult(answer({ content: "  " }, "stop"), "c")).toThrow(CallError);
    expect(completionResult(answer({ content: "fine" }, "length"), "c")).toMatchObject({
      text: "fine",
      refusal: false,
      finishReason: "length",
    });
  });
});
