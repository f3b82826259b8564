/**
 * A local OpenAI-compatible server for the rubric-grading tests and benchmark, on 127.0.0.1 and a free port:
 * chat completions (answered by a handler, with a finish reason and a refusal field when asked) and a Batch API
 * (`POST /v1/files`, `POST /v1/batches`, `GET /v1/batches/:id`, `GET /v1/files/:id/content`) that runs each batch
 * through the same handler, optionally dropping or failing some lines.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

export interface ChatCall {
  index: number;
  body: Record<string, unknown>;
  messages: { role: string; content: string }[];
  /** "sync" or the batch id. */
  via: string;
}

export type ChatReply =
  | { content: string | null; finishReason?: string; refusal?: string; delayMs?: number }
  | { status: number; code?: string; param?: string; delayMs?: number };

export type ChatHandler = (call: ChatCall) => ChatReply | Promise<ChatReply>;

export interface BatchBehaviour {
  /** Status polls answered "in_progress" before "completed". */
  pollsBeforeDone: number;
  /** custom_id → leave the line out of the output / answer it with an error object. */
  drop?: (customId: string, prompt: string) => boolean;
  fail?: (customId: string, prompt: string) => boolean;
  /** Rewrites the output file's lines (a provider's damaged or repeated lines). */
  output?: (lines: string[]) => string[];
  /** The batch ends with this status and no output file (e.g. "expired"). */
  endWithout?: "expired" | "failed" | "cancelled";
}

export interface GradingStub {
  baseURL: string;
  calls: ChatCall[];
  batches: { id: string; requests: number; polls: number }[];
  setHandler(h: ChatHandler): void;
  setBatchBehaviour(b: BatchBehaviour): void;
  close(): Promise<void>;
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function completion(model: string, reply: Extract<ChatReply, { content: unknown }>) {
  return {
    id: "chatcmpl-stub",
    object: "chat.completion",
    created: 0,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: reply.content,
          ...(reply.refusal !== undefined ? { refusal: reply.refusal } : {}),
        },
        finish_reason: reply.finishReason ?? "stop",
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/** The file part of a multipart/form-data body. */
function multipartFile(body: Buffer, contentType: string): string {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  if (!boundary) throw new Error("no boundary");
  const text = body.toString("utf8");
  for (const part of text.split(`--${boundary[1] ?? boundary[2]}`)) {
    if (!/filename=/.test(part)) continue;
    const start = part.indexOf("\r\n\r\n");
    return part.slice(start + 4, part.endsWith("\r\n") ? -2 : undefined);
  }
  throw new Error("no file part");
}

export async function startGradingStub(handler: ChatHandler): Promise<GradingStub> {
  let current = handler;
  let behaviour: BatchBehaviour = { pollsBeforeDone: 1 };
  const calls: ChatCall[] = [];
  const files = new Map<string, string>();
  const batches: {
    id: string;
    requests: number;
    polls: number;
    input: string;
    output?: string;
    error?: string;
    ended?: string;
  }[] = [];
  const sockets = new Set<Socket>();
  const json = (res: ServerResponse, status: number, value: unknown) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));

  async function runBatch(b: (typeof batches)[number]) {
    const out: string[] = [];
    const err: string[] = [];
    for (const line of files.get(b.input)!.split("\n")) {
      if (!line.trim()) continue;
      const req = JSON.parse(line) as { custom_id: string; body: Record<string, unknown> };
      const messages = req.body.messages as ChatCall["messages"];
      const prompt = messages[messages.length - 1].content;
      if (behaviour.drop?.(req.custom_id, prompt)) continue;
      if (behaviour.fail?.(req.custom_id, prompt)) {
        err.push(
          JSON.stringify({
            id: "r",
            custom_id: req.custom_id,
            response: null,
            error: { code: "server_error", message: "stub" },
          }),
        );
        continue;
      }
      const call: ChatCall = {
        index: calls.length,
        body: req.body,
        messages: req.body.messages as ChatCall["messages"],
        via: b.id,
      };
      calls.push(call);
      const reply = await current(call);
      out.push(
        JSON.stringify({
          id: `resp-${calls.length}`,
          custom_id: req.custom_id,
          response:
            "status" in reply
              ? { status_code: reply.status, request_id: "x", body: { error: { message: "stub" } } }
              : { status_code: 200, request_id: "x", body: completion(String(req.body.model), reply) },
          error: null,
        }),
      );
    }
    if (behaviour.endWithout) {
      b.ended = behaviour.endWithout;
      return;
    }
    const lines = behaviour.output ? behaviour.output(out) : out;
    b.output = `file-out-${b.id}`;
    files.set(b.output, lines.join("\n") + (lines.length ? "\n" : ""));
    if (err.length) {
      b.error = `file-err-${b.id}`;
      files.set(b.error, err.join("\n") + "\n");
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks);
      const url = req.url ?? "";
      try {
        if (req.method === "POST" && url.endsWith("/chat/completions")) {
          const parsed = JSON.parse(body.toString("utf8"));
          const call: ChatCall = { index: calls.length, body: parsed, messages: parsed.messages, via: "sync" };
          calls.push(call);
          const reply = await current(call);
          if (reply.delayMs) await wait(reply.delayMs);
          if (res.destroyed) return;
          if ("status" in reply)
            return json(res, reply.status, {
              error: {
                message: `stub ${reply.status}`,
                type: "invalid_request_error",
                code: reply.code ?? null,
                param: reply.param ?? null,
              },
            });
          return json(res, 200, completion(String(parsed.model), reply));
        }
        if (req.method === "POST" && url.endsWith("/files")) {
          const id = `file-${files.size + 1}`;
          files.set(id, multipartFile(body, String(req.headers["content-type"])));
          return json(res, 200, {
            id,
            object: "file",
            bytes: body.length,
            created_at: 0,
            filename: "requests.jsonl",
            purpose: "batch",
          });
        }
        if (req.method === "POST" && url.endsWith("/batches")) {
          const parsed = JSON.parse(body.toString("utf8"));
          const input = String(parsed.input_file_id);
          if (!files.has(input)) return json(res, 404, { error: { message: "no such file" } });
          const b = {
            id: `batch-${batches.length + 1}`,
            requests: files
              .get(input)!
              .split("\n")
              .filter((l) => l.trim()).length,
            polls: 0,
            input,
          };
          batches.push(b);
          return json(res, 200, {
            id: b.id,
            object: "batch",
            status: "validating",
            input_file_id: input,
            endpoint: parsed.endpoint,
            completion_window: "24h",
            created_at: 0,
          });
        }
        const batchMatch = /\/batches\/([\w-]+)$/.exec(url);
        if (req.method === "GET" && batchMatch) {
          const b = batches.find((x) => x.id === batchMatch[1]);
          if (!b) return json(res, 404, { error: { message: "no such batch" } });
          b.polls++;
          if (b.polls > behaviour.pollsBeforeDone && !b.output && !b.ended) await runBatch(b);
          const done = b.output !== undefined || b.ended !== undefined;
          const lines = (id: string | undefined) =>
            id
              ? files
                  .get(id)!
                  .split("\n")
                  .filter((l) => l.trim()).length
              : 0;
          return json(res, 200, {
            id: b.id,
            object: "batch",
            status: b.ended ?? (done ? "completed" : "in_progress"),
            // As the Batch API reports them; while in progress, a share that grows with each poll.
            request_counts: done
              ? { total: b.requests, completed: lines(b.output), failed: lines(b.error) }
              : {
                  total: b.requests,
                  completed: Math.floor((b.requests * (b.polls - 1)) / (behaviour.pollsBeforeDone + 1)),
                  failed: 0,
                },
            input_file_id: b.input,
            output_file_id: b.output ?? null,
            error_file_id: b.error ?? null,
            endpoint: "/v1/chat/completions",
            completion_window: "24h",
            created_at: 0,
          });
        }
        const contentMatch = /\/files\/([\w-]+)\/content$/.exec(url);
        if (req.method === "GET" && contentMatch) {
          const f = files.get(contentMatch[1]);
          if (f === undefined) return json(res, 404, { error: { message: "no such file" } });
          return res.writeHead(200, { "content-type": "application/octet-stream" }).end(f);
        }
        json(res, 404, { error: { message: "not found" } });
      } catch (e) {
        json(res, 500, { error: { message: String(e) } });
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
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    calls,
    batches,
    setHandler: (h) => (current = h),
    setBatchBehaviour: (b) => (behaviour = b),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A scripted judge: a criterion whose text contains `[met]` is met, `[malformed-met]` answers truncated JSON with
 * `"criteria_met": true` (recoverable), `[garbage]` never answers a verdict; everything else is not met.
 */
export function scriptedJudge(call: ChatCall): ChatReply {
  const prompt = call.messages[call.messages.length - 1]?.content ?? "";
  const item = /# Rubric item\n(.*)\n/.exec(prompt)?.[1] ?? "";
  if (item.includes("[garbage]")) return { content: "I would rather not say." };
  if (item.includes("[malformed-met]"))
    return { content: '```json\n{"explanation": "yes it does", "criteria_met": true' };
  const met = item.includes("[met]");
  return {
    content:
      "```json\n" +
      JSON.stringify({ explanation: met ? "it does" : "it does not", criteria_met: met }, null, 2) +
      "\n```",
  };
}
