/**
 * A local OpenAI-compatible chat-completions server for tests and the runner benchmark, on 127.0.0.1 and a free
 * port. Each request is recorded and answered by a handler: a completion, an HTTP error, a raw (malformed) body, a
 * delay, or a dropped connection.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

export interface StubMessage {
  role: string;
  content: string;
}

export interface StubCall {
  /** 0-based arrival order. */
  index: number;
  model: string;
  messages: StubMessage[];
  /** The whole request body. */
  body: Record<string, unknown>;
  /** The last message's content. */
  last: string;
  authorization: string | null;
}

export type StubReply =
  /** `totalTokens`: the usage the answer reports (0 unless given). */
  | { content: string | null; delayMs?: number; totalTokens?: number }
  | { status: number; body?: string; headers?: Record<string, string>; delayMs?: number }
  | { raw: string; contentType?: string; delayMs?: number }
  | { hangUp: true; delayMs?: number };

export type StubHandler = (call: StubCall) => StubReply | Promise<StubReply>;

export interface OpenAiStub {
  /** `http://127.0.0.1:<port>/v1` */
  baseURL: string;
  port: number;
  calls: StubCall[];
  setHandler(handler: StubHandler): void;
  close(): Promise<void>;
}

function completion(model: string, content: string | null, totalTokens = 0) {
  return {
    id: "chatcmpl-stub",
    object: "chat.completion",
    created: 0,
    model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: totalTokens },
  };
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startOpenAiStub(handler: StubHandler, options: { port?: number } = {}): Promise<OpenAiStub> {
  let current = handler;
  const calls: StubCall[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not found"}}');
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        res.writeHead(400, { "content-type": "application/json" }).end('{"error":{"message":"bad json"}}');
        return;
      }
      const messages = (body.messages as StubMessage[]) ?? [];
      const call: StubCall = {
        index: calls.length,
        model: String(body.model),
        messages,
        body,
        last: messages.length > 0 ? messages[messages.length - 1].content : "",
        authorization: req.headers.authorization ?? null,
      };
      calls.push(call);
      let reply: StubReply;
      try {
        reply = await current(call);
      } catch (e) {
        reply = { status: 500, body: JSON.stringify({ error: { message: String(e) } }) };
      }
      if (reply.delayMs) await wait(reply.delayMs);
      if (res.destroyed) return;
      if ("hangUp" in reply) {
        req.socket.destroy();
      } else if ("status" in reply) {
        res
          .writeHead(reply.status, { "content-type": "application/json", ...(reply.headers ?? {}) })
          .end(reply.body ?? JSON.stringify({ error: { message: `stub ${reply.status}`, type: "stub_error" } }));
      } else if ("raw" in reply) {
        res.writeHead(200, { "content-type": reply.contentType ?? "application/json" }).end(reply.raw);
      } else {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify(completion(call.model, reply.content, reply.totalTokens)));
      }
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    calls,
    setHandler(h) {
      current = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Scripted protocol answers: a section's text carries the action the model should take at that step, as
// `[[diagnose]]`, `[[clarify]]`, `[[abstain]]`, `[[empty]]` (the model answers nothing) or `[[judge-fail]]` (the
// judge answers 400); the model's answer echoes it as `ACTION=<action>`, which the judge reads back.

export type ScriptedAction = "diagnose" | "clarify" | "abstain" | "empty" | "judge-fail" | "unparsed";

/** A judge output in judge.txt's format that the reference's rule maps to the action. */
export function judgeOutputFor(action: "diagnose" | "clarify" | "abstain", code = "F32.1"): string {
  if (action === "diagnose") {
    return `PRIMARY_ANSWER: committed\nINFO_REQUEST: none\nICD_CODES: ${code}\nDIAGNOSIS_NAMES: depressive episode`;
  }
  if (action === "clarify") {
    return "PRIMARY_ANSWER: none\nINFO_REQUEST: specific\nICD_CODES: empty\nDIAGNOSIS_NAMES: empty";
  }
  return "PRIMARY_ANSWER: differential\nINFO_REQUEST: generic_only\nICD_CODES: F32.1, F41.1\nDIAGNOSIS_NAMES: x, y";
}

const TAG = /\[\[(diagnose|clarify|abstain|empty|judge-fail|unparsed)(?::(F\d\d(?:\.\d)?))?\]\]/g;

/** The last scripted tag in a text (the newest section of a user message), with its optional code. */
export function scriptedTag(text: string): { action: ScriptedAction; code?: string } | null {
  const all = [...text.matchAll(TAG)];
  if (all.length === 0) return null;
  const m = all[all.length - 1];
  return { action: m[1] as ScriptedAction, code: m[2] };
}

/** The last `case-<id> s<k>` marker of a text: tests name sections so, to tell which case and step a call is. */
export function caseMarker(text: string): string {
  const all = [...text.matchAll(/\bcase-[\w-]+ s\d+\b/g)];
  return all.length > 0 ? all[all.length - 1][0] : "?";
}

/** Answers model requests (any model but `judgeModel`) and judge requests from the scripted tags. */
export function scriptedHandler(judgeModel: string, delayMs = 0): StubHandler {
  return (call) => {
    if (call.model !== judgeModel) {
      const tag = scriptedTag(call.last);
      const about = caseMarker(call.last);
      if (!tag) return { content: `I am not sure about ${about}.`, delayMs };
      if (tag.action === "empty") return { content: "", delayMs };
      const code = tag.code ? ` CODE=${tag.code}` : "";
      return { content: `  Answer about ${about}: ACTION=${tag.action}${code} $& $1 \u2028 \u0085 end `, delayMs };
    }
    const m = /ACTION=([a-z-]+)(?: CODE=(\S+))?/.exec(call.last);
    const action = (m?.[1] ?? "abstain") as ScriptedAction;
    if (action === "judge-fail") return { status: 400, delayMs };
    if (action === "unparsed") return { content: "I cannot tell.", delayMs };
    return { content: judgeOutputFor(action as "diagnose" | "clarify" | "abstain", m?.[2]) + "\n", delayMs };
  };
}
