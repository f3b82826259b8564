import type { ShouldRevalidateFunction } from "@remix-run/react";

/**
 * No loader re-runs after a successful draft autosave (docs/architecture.md#the-work-item-engine): the save answers
 * with the new version and time itself, and nothing else on the page changes, so re-reading the case would cost the
 * server a full page of queries every few seconds of typing. A submit, a failed save (a conflict) and navigation
 * revalidate as usual.
 */
export const skipRevalidationAfterDraft: ShouldRevalidateFunction = ({
  formData,
  actionResult,
  defaultShouldRevalidate,
}) => {
  const ok = (actionResult as { ok?: unknown } | undefined)?.ok === true;
  if (formData?.get("intent") === "draft" && ok) return false;
  return defaultShouldRevalidate;
};
