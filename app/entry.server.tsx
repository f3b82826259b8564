import { PassThrough } from "node:stream";
import type { AppLoadContext, EntryContext } from "@remix-run/node";
import { createReadableStreamFromReadable } from "@remix-run/node";
import { RemixServer } from "@remix-run/react";
import { isbot } from "isbot";
import { renderToPipeableStream } from "react-dom/server";
import { NonceContext } from "./nonce";
import { withRetryAfter } from "./platform/busy-answer.server";

// The composition root first: the start-up reads what the protocols registered.
import "./protocols.server";
export { startup } from "./platform/startup.server";
export { answerBusyOnEveryRoute } from "./platform/busy-answer.server";
export { allowedHosts, hostAllowed } from "./platform/allowed-hosts";

const ABORT_DELAY = 5_000;

export default function handleRequest(
  request: Request,
  responseStatusCode: number,
  responseHeaders: Headers,
  remixContext: EntryContext,
  loadContext: AppLoadContext,
) {
  const nonce = (loadContext as { nonce?: string }).nonce;
  const callback = isbot(request.headers.get("user-agent") || "") ? "onAllReady" : "onShellReady";
  return new Promise((resolve, reject) => {
    let shellRendered = false;
    const { pipe, abort } = renderToPipeableStream(
      <NonceContext.Provider value={nonce}>
        <RemixServer context={remixContext} url={request.url} abortDelay={ABORT_DELAY} nonce={nonce} />
      </NonceContext.Provider>,
      {
        nonce,
        [callback]() {
          shellRendered = true;
          const body = new PassThrough();
          responseHeaders.set("Content-Type", "text/html; charset=utf-8");
          // Pages show clinical text: never cache them anywhere.
          responseHeaders.set("Cache-Control", "no-store");
          // A page refused because the database's write lock is held elsewhere (docs/reliability.md, "Busy answers").
          withRetryAfter(responseStatusCode, responseHeaders);
          resolve(
            new Response(createReadableStreamFromReadable(body), {
              headers: responseHeaders,
              status: responseStatusCode,
            }),
          );
          pipe(body);
        },
        onShellError(error: unknown) {
          reject(error);
        },
        onError(error: unknown) {
          responseStatusCode = 500;
          if (shellRendered) console.error(error);
        },
      },
    );
    setTimeout(abort, ABORT_DELAY);
  });
}

export function handleDataRequest(response: Response) {
  response.headers.set("Cache-Control", "no-store");
  withRetryAfter(response.status, response.headers);
  return response;
}
