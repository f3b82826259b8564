/** Labels and keyboard keys of the rater workspace (SPEC §8 "Response features"), shared by the rater pages. */
import type { InfoRequest, PrimaryAnswer } from "~/evaluation/domain/judge";
import type { RatingState } from "../domain/rater-assignment";

// Re-exported while the judge-ratings service and the rater routes still take the type from here.
export type { RatingState };

export const RATING_STATE_LABELS: Record<RatingState, string> = {
  not_started: "not started",
  draft: "draft",
  submitted: "submitted",
};

/** PRIMARY_ANSWER: C / D / N. */
export const PRIMARY_ANSWER_KEYS: readonly { value: PrimaryAnswer; key: string; label: string }[] = [
  { value: "committed", key: "c", label: "committed" },
  { value: "differential", key: "d", label: "differential" },
  { value: "none", key: "n", label: "none" },
];

/** INFO_REQUEST: S / G / X. */
export const INFO_REQUEST_KEYS: readonly { value: InfoRequest; key: string; label: string }[] = [
  { value: "specific", key: "s", label: "specific" },
  { value: "generic_only", key: "g", label: "generic only" },
  { value: "none", key: "x", label: "none" },
];
