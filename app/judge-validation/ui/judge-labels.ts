/** Labels and keyboard keys of the rater workspace (docs/judge-validation.md#response-features-and-the-action-rule), shared by the rater pages. */
import type { InfoRequest, PrimaryAnswer } from "~/evaluation/public";

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
