/**
 * The OpenAI Batch API's JSONL formats (docs/rubric-grading.md, "Batch mode"), which vLLM's offline `run-batch`
 * reads and writes too: one request per line `{custom_id, method: "POST", url: "/v1/chat/completions", body}`, one
 * result per line `{id, custom_id, response: {status_code, body} | null, error: {code, message} | null}`.
 */
import { z } from "zod";
import type { Message } from "./eval-set";

export interface ChatBody {
  model: string;
  messages: Message[];
  temperature: number | null;
  maxTokens: number;
  maxTokensParam: "max_tokens" | "max_completion_tokens";
}

/**
 * custom_id of a judge call: the stored response, the criterion's position in its rubric and the judge, so an
 * output line finds its verdict row without any other state. Format `r<response>.c<criterion>.j<judge>`.
 */
export function customId(responseId: number, criterionIndex: number, judgeId: number): string {
  return `r${responseId}.c${criterionIndex}.j${judgeId}`;
}

export function parseCustomId(id: string): { responseId: number; criterionIndex: number; judgeId: number } | null {
  const m = /^r(\d+)\.c(\d+)\.j(\d+)$/.exec(id);
  return m ? { responseId: Number(m[1]), criterionIndex: Number(m[2]), judgeId: Number(m[3]) } : null;
}

export function batchRequestLine(id: string, body: ChatBody): string {
  const request: Record<string, unknown> = {
    model: body.model,
    messages: body.messages,
    [body.maxTokensParam]: body.maxTokens,
  };
  if (body.temperature !== null) request.temperature = body.temperature;
  return JSON.stringify({ custom_id: id, method: "POST", url: "/v1/chat/completions", body: request });
}

const UsageSchema = z
  .object({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish() })
  .passthrough()
  .nullish();

const OutputLineSchema = z
  .object({
    custom_id: z.string(),
    response: z
      .object({
        status_code: z.number(),
        body: z
          .object({
            choices: z
              .array(
                z
                  .object({
                    message: z.object({ content: z.string().nullish() }).passthrough().nullish(),
                    finish_reason: z.string().nullish(),
                  })
                  .passthrough(),
              )
              .optional(),
            usage: UsageSchema,
          })
          .passthrough()
          .nullish(),
      })
      .passthrough()
      .nullish(),
    error: z.object({ code: z.string().nullish(), message: z.string().nullish() }).passthrough().nullish(),
  })
  .passthrough();

export type BatchResult =
  | { customId: string; ok: true; text: string; promptTokens: number | null; completionTokens: number | null }
  | { customId: string; ok: false; reason: string };

/** One output line; null for a line that is not a batch result at all (reported by the caller as FILE:LINE). */
export function parseBatchOutputLine(line: string): BatchResult | { invalid: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { invalid: "not valid JSON" };
  }
  const parsed = OutputLineSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { invalid: `${issue.path.join(".") || "line"}: ${issue.message}` };
  }
  const r = parsed.data;
  if (r.error) return { customId: r.custom_id, ok: false, reason: `error ${r.error.code ?? ""}`.trim() };
  if (!r.response) return { customId: r.custom_id, ok: false, reason: "no response" };
  if (r.response.status_code !== 200)
    return { customId: r.custom_id, ok: false, reason: `HTTP ${r.response.status_code}` };
  const content = r.response.body?.choices?.[0]?.message?.content;
  if (typeof content !== "string" || content.trim() === "")
    return { customId: r.custom_id, ok: false, reason: "empty answer" };
  return {
    customId: r.custom_id,
    ok: true,
    text: content,
    promptTokens: r.response.body?.usage?.prompt_tokens ?? null,
    completionTokens: r.response.body?.usage?.completion_tokens ?? null,
  };
}
