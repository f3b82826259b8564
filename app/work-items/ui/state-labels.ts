import type { CaseState } from "~/annotation/annotations.server";

export const STATE_LABELS: Record<CaseState, string> = {
  not_started: "not started",
  draft: "draft",
  submitted: "submitted",
  locked: "locked",
};
