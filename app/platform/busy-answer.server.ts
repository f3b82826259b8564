import { isBusy } from "./db.server";
import { BUSY_RETRY_AFTER_S } from "./storage-errors.server";
import type { BusyAnswer } from "./busy-answer";

/**
 * Every request, not only a workspace save, answers 503 with Retry-After when another process (a command-line import,
 * a backup) holds the database's write lock past the web server's short busy timeout: the request wrote nothing (its
 * transaction never began, or was rolled back), so it is the server's temporary refusal, not an error of Concord's
 * (docs/reliability.md, "Busy answers").
 */
export const BUSY_REQUEST_MESSAGE =
  "The database is busy with another task (an import or a backup), so nothing of this request was saved or " +
  "changed. Try again in a moment.";

/**
 * The answer a busy request throws: the routes' error boundary shows its message (app/ui/busy-page.tsx) and, for a
 * refused action, offers to send the same form again; the status and header stay.
 */
function busyResponse(during: BusyAnswer["during"]): Response {
  const body: BusyAnswer = { busy: true, during, message: BUSY_REQUEST_MESSAGE, retryAfter: BUSY_RETRY_AFTER_S };
  return new Response(JSON.stringify(body), {
    status: 503,
    statusText: "Service Unavailable",
    headers: { "Retry-After": String(BUSY_RETRY_AFTER_S), "Content-Type": "application/json; charset=utf-8" },
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a loader's or action's arguments, whatever the route
type Handler = (args: any) => unknown;

/** A loader or action whose SQLITE_BUSY (however wrapped) becomes the 503 answer above; any other error is its own. */
function answeringBusy<H extends Handler>(handler: H, during: BusyAnswer["during"]): H {
  const wrapped = async (args: unknown) => {
    try {
      return await handler(args);
    } catch (error) {
      if (isBusy(error)) throw busyResponse(during);
      throw error;
    }
  };
  return wrapped as H;
}

interface ServerRoute {
  module: { loader?: Handler; action?: Handler };
}

/**
 * The server build's routes with every loader and action wrapped by `answeringBusy`. server.js applies it to the
 * whole build before serving it, so a new route cannot forget it.
 */
export function answerBusyOnEveryRoute<R extends Record<string, ServerRoute>>(routes: R): R {
  const out: Record<string, ServerRoute> = {};
  for (const [id, route] of Object.entries(routes)) {
    const module = { ...route.module };
    if (typeof module.loader === "function") module.loader = answeringBusy(module.loader, "loader");
    if (typeof module.action === "function") module.action = answeringBusy(module.action, "action");
    out[id] = { ...route, module };
  }
  return out as R;
}

/** The Retry-After every 503 answer carries (a route's thrown answer loses its headers in Remix's page render). */
export function withRetryAfter(status: number, headers: Headers): void {
  if (status === 503 && !headers.has("Retry-After")) headers.set("Retry-After", String(BUSY_RETRY_AFTER_S));
}
