/**
 * What every workspace route re-exports so a failed save never replaces the workspace with an error page
 * (docs/architecture.md, "Saving under load"):
 *
 * - `shouldRevalidate`: after an answer of 400 or more (a conflict, a busy database, a full disk), or a save that never
 *   reached the server, the page's data is not loaded again. Loading it again could answer 404 (a case decided by someone else has left the adjudicator's
 *   queue) and replace the message, and the user's own input, with an error page.
 * - `headers`: the action's Retry-After (and the new version) are sent with the answer; Remix drops a route's
 *   action headers unless it says so.
 * - `clientAction`: the server's action, but an error on the way (the server restarting, the network gone, an
 *   unexpected 500) comes back as a save result the draft hook retries, instead of reaching the error boundary.
 */
import {
  isRouteErrorResponse,
  type ClientActionFunctionArgs,
  type ShouldRevalidateFunctionArgs,
} from "@remix-run/react";
import { skipRevalidationAfterDraft } from "./should-revalidate";
import type { HeadersFunction } from "@remix-run/node";

/** The save's own headers (Retry-After on a 503, the new version on success) reach the page; the rest as usual. */
export const headers: HeadersFunction = ({ actionHeaders, parentHeaders }) => {
  const out = new Headers(parentHeaders);
  for (const name of ["Retry-After", "X-Concord-Version", "X-Concord-Saved-At"]) {
    const value = actionHeaders.get(name);
    if (value !== null) out.set(name, value);
  }
  return out;
};

export function shouldRevalidate(args: ShouldRevalidateFunctionArgs): boolean {
  if (args.actionStatus !== undefined && args.actionStatus >= 400) return false;
  // A successful autosave answers with its own version and time: nothing else on the page changed.
  return skipRevalidationAfterDraft(args);
}

/** The message of a save that did not reach the server, or that the server could not answer. */
export const UNREACHABLE_MESSAGE =
  "The server could not be reached, so this was not saved yet. Your draft is kept in this page and is saved again automatically.";

export async function clientAction({ serverAction }: ClientActionFunctionArgs) {
  try {
    return await serverAction();
  } catch (error) {
    // A redirect (a decision that sends the user on) is Remix's to follow.
    if (error instanceof Response && error.status >= 300 && error.status < 400) throw error;
    // A thrown response keeps its status (403: the session ended — not retried); anything else is retried.
    const status = isRouteErrorResponse(error) ? error.status : 0;
    const message =
      status === 403 || status === 401
        ? "Your session has ended, so this was not saved. Copy your text, log in again in another tab, then save."
        : UNREACHABLE_MESSAGE;
    // A plain value: Remix passes the status the server answered along with it (none when it was not reached).
    return { ok: false as const, status, message };
  }
}
