/**
 * The chat-completions endpoint the runner talks to (docs/evaluation.md#decoding-and-retries: vLLM, Ollama, llama.cpp server, hosted APIs), spoken
 * as the `openai` client speaks it, without its retries: the runner retries itself (retry.ts) so that back-off is bounded and
 * testable. Every failure is classified for the retry loop; error messages carry status codes and error codes only,
 * never response bodies, which some servers fill with the request (the note).
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import type { ChatMessage } from "./chat-message";
import { postOnPool, PostTimeoutError, type PostAnswer } from "./keep-alive-fetch.server";

export interface ChatRequest {
  messages: ChatMessage[];
  /** Null: not sent (the server's default). */
  temperature: number | null;
  topP: number | null;
  maxTokens: number;
  seed: number | null;
  /**
   * Optional parameters this request must send as given: the server's rejection of one of them is the call's
   * failure, not a reason to leave it out (e.g. a model with stored work keeps its recorded temperature).
   */
  keep?: readonly OptionalParameter[];
}

/** The two names of the answer's length limit: `max_tokens`, or `max_completion_tokens` (newer OpenAI models). */
export type MaxTokensParam = "max_tokens" | "max_completion_tokens";

/** The request parameters a server may reject (OpenAI's reasoning models reject `temperature`), as they are sent. */
export type OptionalParameter = "temperature" | "top_p" | "seed";

export interface ChatEndpoint {
  /**
   * The answer's text (untrimmed). Throws a CallError. `usage`, when given, is called with the tokens the server
   * reported for the call (`usage.total_tokens`), when it reported them.
   */
  complete(request: ChatRequest, signal?: AbortSignal, usage?: (tokens: number) => void): Promise<string>;
}

/**
 * - `retryable`: rate limit (429), server error (5xx), 408/409, time-out, a dropped connection — back off and retry;
 * - `empty`: a well-formed answer with no text — retried, then recorded as a failed call;
 * - `malformed`: not a chat completion (no JSON, no choices) — retried, then the endpoint is declared dead;
 * - `rejected`: the server refused this request (400, 413, 422: e.g. a context too long) — recorded, not retried;
 * - `fatal`: the endpoint cannot serve any request (connection refused, unknown host, 401, 403, 404) — stop the run;
 * - `aborted`: the run is stopping.
 */
export type CallErrorKind = "retryable" | "empty" | "malformed" | "rejected" | "fatal" | "aborted";

export class CallError extends Error {
  constructor(
    readonly kind: CallErrorKind,
    message: string,
    readonly retryAfterMs: number | null = null,
    /**
     * A 400 with OpenAI's `unsupported_value` / `unsupported_parameter` code: the parameter it names (`param`), or
     * null when the server names none. Undefined for every other error.
     */
    readonly unsupportedParameter?: string | null,
  ) {
    super(message);
  }
}

const UNSUPPORTED_CODES = new Set(["unsupported_value", "unsupported_parameter"]);

const FATAL_NETWORK_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

function causeCode(error: unknown): string | null {
  for (let e: unknown = error, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return code;
    // undici reports a refused connection inside an AggregateError's errors (IPv4 and IPv6 attempts).
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) {
      const codes = errors.map(causeCode).filter((c): c is string => c !== null);
      if (codes.length > 0) return codes.find((c) => FATAL_NETWORK_CODES.has(c)) ?? codes[0];
    }
  }
  return null;
}

function retryAfter(headers: Headers | undefined): number | null {
  const value = headers?.get("retry-after-ms") ?? null;
  if (value !== null && Number.isFinite(Number(value))) return Number(value);
  const seconds = headers?.get("retry-after");
  if (seconds == null) return null;
  if (/^\d+(\.\d+)?$/.test(seconds.trim())) return Number(seconds) * 1000;
  const date = Date.parse(seconds);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/** Turns anything the client threw into a CallError (exported for tests). */
export function classifyError(error: unknown, what: string): CallError {
  if (error instanceof CallError) return error;
  if (error instanceof APIUserAbortError) return new CallError("aborted", `${what}: aborted`);
  if (error instanceof APIConnectionTimeoutError) return new CallError("retryable", `${what}: timed out`);
  if (error instanceof APIConnectionError) {
    const code = causeCode(error);
    if (code && FATAL_NETWORK_CODES.has(code)) return new CallError("fatal", `${what}: cannot connect (${code})`);
    return new CallError("retryable", `${what}: connection error${code ? ` (${code})` : ""}`);
  }
  if (error instanceof APIError && typeof error.status === "number") {
    const status = error.status;
    const detail = [error.type, error.code].filter((x) => typeof x === "string" && x !== "").join(", ");
    const message = `${what}: HTTP ${status}${detail ? ` (${detail})` : ""}`;
    if (status === 429 || status === 408 || status === 409 || status >= 500) {
      return new CallError("retryable", message, retryAfter(error.headers));
    }
    if (status === 401 || status === 403 || status === 404) return new CallError("fatal", message);
    if (status === 400 && typeof error.code === "string" && UNSUPPORTED_CODES.has(error.code)) {
      const param = typeof error.param === "string" && /^[\w.[\]-]{1,64}$/.test(error.param) ? error.param : null;
      return new CallError("rejected", `${message}${param ? ` [${param}]` : ""}`, null, param);
    }
    return new CallError("rejected", message);
  }
  if (error instanceof SyntaxError) return new CallError("malformed", `${what}: the answer is not JSON`);
  if ((error as { name?: string })?.name === "AbortError") return new CallError("aborted", `${what}: aborted`);
  const code = causeCode(error);
  if (code && FATAL_NETWORK_CODES.has(code)) return new CallError("fatal", `${what}: cannot connect (${code})`);
  return new CallError("retryable", `${what}: ${(error as Error)?.name ?? "error"}${code ? ` (${code})` : ""}`);
}

/** The text of a chat completion, or a CallError if the answer is not one. */
export function completionText(response: unknown, what: string): string {
  const choices = (response as { choices?: unknown })?.choices;
  if (typeof response !== "object" || response === null || !Array.isArray(choices)) {
    throw new CallError("malformed", `${what}: the answer is not a chat completion`);
  }
  if (choices.length === 0) throw new CallError("empty", `${what}: no choices in the answer`);
  const content = (choices[0] as { message?: { content?: unknown } })?.message?.content;
  if (content !== null && content !== undefined && typeof content !== "string") {
    throw new CallError("malformed", `${what}: the answer's content is not text`);
  }
  if (typeof content !== "string" || content.trim() === "") throw new CallError("empty", `${what}: empty answer`);
  return content;
}

export interface EndpointOptions {
  baseURL: string;
  apiKey: string;
  model: string;
  /** Per-request time-out. */
  timeoutMs: number;
  /**
   * `max_tokens` (vLLM, Ollama, llama.cpp) or `max_completion_tokens` (newer OpenAI models): the name the first call
   * sends. A server that rejects it as unsupported teaches the endpoint the other name (createRawCall).
   */
  maxTokensParam: MaxTokensParam;
  /** Names the endpoint in messages: "model" or "judge". */
  label: string;
  /**
   * Called once for each optional parameter this endpoint learns the server rejects (createRawCall), before the
   * calls that sent it are sent again without it: for the caller to say so and record it.
   */
  onParameterDropped?: (parameter: OptionalParameter) => void;
  /**
   * Called once when this endpoint learns that the server rejects `maxTokensParam` as unsupported and switches to
   * the other name (createRawCall), before the calls that sent it are sent again: for the caller to say so.
   */
  onMaxTokensParamSwitched?: (from: MaxTokensParam, to: MaxTokensParam) => void;
  /**
   * A transport for the client. Default: the process's shared keep-alive pool (keep-alive-fetch.server.ts), which
   * costs a quarter of the built-in fetch's CPU per call and reuses connections at any concurrency.
   */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}

/** Qwen3's chat template thinks aloud unless told not to; the reference turns thinking off (docs/evaluation.md#decoding-and-retries). */
function extraBody(model: string): Record<string, unknown> {
  return /qwen-?3/i.test(model) ? { chat_template_kwargs: { enable_thinking: false } } : {};
}

/**
 * One chat-completions call (no retries of its own: the caller's policy retries), with its errors classified; both
 * endpoint shapes below use it. The request is the OpenAI-compatible POST {baseURL}/chat/completions the openai
 * client would send, written straight onto the keep-alive pool (keep-alive-fetch.server.ts `postOnPool`); the
 * answer is read the way the client reads it (JSON when the server says JSON, else text), and every failure is
 * raised as the client's own error (APIError.generate for a status, APIConnectionError, APIConnectionTimeoutError,
 * APIUserAbortError), so classifyError sees exactly what it saw behind the client. The client itself cost about
 * 0.3 ms of CPU per call in headers, request options and logging (docs/evaluation.md, "Scale").
 *
 * An optional parameter the server rejects (HTTP 400 `unsupported_value` / `unsupported_parameter`, as OpenAI's
 * reasoning models answer a temperature) is learned once per endpoint, that is per run, provider and model: every
 * call that sent it, the ones in flight included, is sent again without it, and no later call sends it (unless the
 * request must `keep` it). The length limit is learned the same way: a 400 `unsupported_parameter` naming the
 * `max_tokens` sent (OpenAI's newer models: "Use 'max_completion_tokens' instead") switches the endpoint to
 * `max_completion_tokens`, once, for every call (and the other way round for a server that knows only `max_tokens`);
 * a rejection of the name switched to is the call's failure. Every runner builds its requests here, so every runner
 * behaves so.
 */
function createRawCall(
  options: EndpointOptions,
): (request: ChatRequest, signal?: AbortSignal) => Promise<{ answer: unknown; dropped: OptionalParameter[] }> {
  const url = new URL(options.baseURL + (options.baseURL.endsWith("/") ? "chat/completions" : "/chat/completions"));
  const headers: Record<string, string> = {
    accept: "application/json",
    "content-type": "application/json",
    authorization: `Bearer ${options.apiKey}`,
  };
  const post = options.fetch ? postWithFetch(options.fetch) : postPooled;
  const extra = extraBody(options.model);
  // The optional parameters this endpoint's server has rejected, learned once and shared by every call of the run,
  // in flight or not (docs/reliability.md, "Model calls").
  const rejected = new Set<OptionalParameter>();
  // The name of the length limit this endpoint sends: the configured one until the server rejects it, then the other
  // for good (switched once: a rejection of both is the call's failure).
  let tokensParam: MaxTokensParam = options.maxTokensParam;
  return async (request, signal) => {
    const optional: [OptionalParameter, number | null][] = [
      ["temperature", request.temperature],
      ["top_p", request.topP],
      ["seed", request.seed],
    ];
    for (;;) {
      const body: Record<string, unknown> = {
        model: options.model,
        messages: request.messages,
        [tokensParam]: request.maxTokens,
        ...extra,
      };
      const sentTokensParam = tokensParam;
      const sent: OptionalParameter[] = [];
      const dropped: OptionalParameter[] = [];
      for (const [name, value] of optional) {
        if (value === null) continue;
        if (rejected.has(name) && !request.keep?.includes(name)) dropped.push(name);
        else {
          body[name] = value;
          sent.push(name);
        }
      }
      try {
        return {
          answer: parseAnswer(await post(url, headers, JSON.stringify(body), options.timeoutMs, signal)),
          dropped,
        };
      } catch (e) {
        const error = classifyError(e, options.label);
        if (error.unsupportedParameter === sentTokensParam && sentTokensParam === options.maxTokensParam) {
          // Sent before the switch was learned (or the call that learns it): sent again with the other name.
          if (tokensParam === options.maxTokensParam) {
            tokensParam = otherTokensParam(options.maxTokensParam);
            options.onMaxTokensParamSwitched?.(options.maxTokensParam, tokensParam);
          }
          continue;
        }
        const parameter = rejectedParameter(error, sent);
        if (parameter === null || request.keep?.includes(parameter)) throw error;
        // A call sent before the rejection was learned (or the one that learns it) is sent again without it: the
        // server's refusal of a parameter is not the call's failure.
        if (!rejected.has(parameter)) {
          rejected.add(parameter);
          options.onParameterDropped?.(parameter);
        }
      }
    }
  };
}

function otherTokensParam(name: MaxTokensParam): MaxTokensParam {
  return name === "max_tokens" ? "max_completion_tokens" : "max_tokens";
}

/**
 * The optional parameter a rejection is about: the one the server names, if it was sent; when the server names
 * none, the only optional parameter sent (with two or more it cannot be told which); else null.
 */
function rejectedParameter(error: CallError, sent: readonly OptionalParameter[]): OptionalParameter | null {
  if (error.unsupportedParameter === undefined) return null;
  if (error.unsupportedParameter === null) return sent.length === 1 ? sent[0] : null;
  return sent.find((p) => p === error.unsupportedParameter) ?? null;
}

/** What the openai client makes of an answer: its error for a failed status, JSON for a JSON body, else the text. */
function parseAnswer(answer: PostAnswer): unknown {
  if (answer.status < 200 || answer.status > 299) {
    let json: unknown;
    try {
      json = JSON.parse(answer.text);
    } catch {
      json = undefined;
    }
    throw APIError.generate(
      answer.status,
      json as object | undefined,
      json ? undefined : answer.text,
      new Headers(answer.headers),
    );
  }
  if (answer.status === 204) return null;
  const mediaType = answer.headers["content-type"]?.split(";")[0]?.trim();
  if (mediaType?.includes("application/json") || mediaType?.endsWith("+json")) {
    return answer.headers["content-length"] === "0" ? undefined : JSON.parse(answer.text);
  }
  return answer.text;
}

/** The shared pool, its failures raised as the openai client's errors. */
const postPooled: typeof postOnPool = async (url, headers, body, timeoutMs, signal) => {
  try {
    return await postOnPool(url, headers, body, timeoutMs, signal);
  } catch (e) {
    if (signal?.aborted) throw new APIUserAbortError();
    if (e instanceof PostTimeoutError) throw new APIConnectionTimeoutError();
    throw new APIConnectionError({ cause: e instanceof Error ? e : undefined });
  }
};

/** A caller's own fetch (e.g. a separate pool), behind the same shape. */
function postWithFetch(fetchFn: NonNullable<EndpointOptions["fetch"]>): typeof postOnPool {
  return async (url, headers, body, timeoutMs, signal) => {
    if (signal?.aborted) throw new APIUserAbortError();
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => ((timedOut = true), controller.abort()), timeoutMs);
    try {
      const response = await fetchFn(url, { method: "POST", headers, body, signal: controller.signal });
      const text = await response.text();
      const out: Record<string, string> = {};
      response.headers.forEach((v, k) => (out[k] = v));
      return { status: response.status, headers: out, text };
    } catch (e) {
      if (signal?.aborted) throw new APIUserAbortError();
      if (timedOut) throw new APIConnectionTimeoutError();
      throw new APIConnectionError({ cause: e instanceof Error ? e : undefined });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  };
}

export function createOpenAiEndpoint(options: EndpointOptions): ChatEndpoint {
  const call = createRawCall(options);
  return {
    async complete(request, signal, usage) {
      const { answer } = await call(request, signal);
      const text = completionText(answer, options.label);
      const total = (answer as { usage?: { total_tokens?: unknown } }).usage?.total_tokens;
      if (usage && typeof total === "number" && Number.isFinite(total)) usage(total);
      return text;
    },
  };
}

/** A chat completion with what rubric grading records beside the text (docs/rubric-grading.md, "Responses"). */
export interface ChatResult {
  /** Untrimmed; "" only for an explicit refusal. */
  text: string;
  finishReason: string | null;
  /** The provider said it refused: finish reason `refusal` / `content_filter`, or a `refusal` field. */
  refusal: boolean;
  promptTokens: number | null;
  completionTokens: number | null;
  /** Optional parameters of the request left out because the server rejects them (createRawCall). */
  dropped: readonly OptionalParameter[];
}

const REFUSAL_FINISH_REASONS = new Set(["refusal", "content_filter"]);

/**
 * Like completionText, but an empty answer that carries an explicit refusal is a result (kept and graded as
 * returned), while an empty answer without one stays an `empty` CallError (a transport failure: re-requested).
 */
export function completionResult(response: unknown, what: string): Omit<ChatResult, "dropped"> {
  const choices = (response as { choices?: unknown })?.choices;
  if (typeof response !== "object" || response === null || !Array.isArray(choices)) {
    throw new CallError("malformed", `${what}: the answer is not a chat completion`);
  }
  if (choices.length === 0) throw new CallError("empty", `${what}: no choices in the answer`);
  const choice = choices[0] as { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown };
  const content = choice?.message?.content;
  if (content !== null && content !== undefined && typeof content !== "string") {
    throw new CallError("malformed", `${what}: the answer's content is not text`);
  }
  const finishReason = typeof choice?.finish_reason === "string" ? choice.finish_reason : null;
  const refusalField = choice?.message?.refusal;
  const refusal =
    (finishReason !== null && REFUSAL_FINISH_REASONS.has(finishReason)) ||
    (typeof refusalField === "string" && refusalField !== "");
  const text = typeof content === "string" ? content : "";
  if (text.trim() === "" && !refusal) throw new CallError("empty", `${what}: empty answer`);
  const usage = (response as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } }).usage;
  return {
    text,
    finishReason,
    refusal,
    promptTokens: typeof usage?.prompt_tokens === "number" ? usage.prompt_tokens : null,
    completionTokens: typeof usage?.completion_tokens === "number" ? usage.completion_tokens : null,
  };
}

export interface ChatResultEndpoint {
  call(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult>;
}

/** The same client and error classification as createOpenAiEndpoint, answering a ChatResult. */
export function createOpenAiResultEndpoint(options: EndpointOptions): ChatResultEndpoint {
  const call = createRawCall(options);
  return {
    async call(request, signal) {
      const { answer, dropped } = await call(request, signal);
      return { ...completionResult(answer, options.label), dropped };
    },
  };
}
