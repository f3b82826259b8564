import type { ShouldRevalidateFunction } from "@remix-run/react";

/**
 * No loader re-runs after a successful draft autosave (docs/architecture.md#the-work-item-engine): the save answers
 * with the new version and time itself, and nothing else on the page changes, so re-reading the case would cost the
 * server a full page of queries every few seconds of typing. A failed save does not revalidate either (below); a
 * submit and navigation revalidate as usual.
 */
export const skipRevalidationAfterDraft: ShouldRevalidateFunction = ({
  formData,
  actionResult,
  defaultShouldRevalidate,
}) => {
  const ok = (actionResult as { ok?: unknown } | undefined)?.ok;
  if (formData?.get("intent") === "draft" && ok === true) return false;
  // A refused save, or one that never reached the server (clientAction answers it with status 0), changed nothing
  // there; loading the page again — the root's data too — would fail the same way offline and replace the
  // workspace, and the user's input, with an error page.
  if (ok === false) return false;
  return defaultShouldRevalidate;
};
