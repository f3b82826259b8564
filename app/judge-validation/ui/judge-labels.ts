/** Labels and keyboard keys of the rater workspace (docs/judge-validation.md#response-features-and-the-action-rule), shared by the rater pages. */
import type { InfoRequest, PrimaryAnswer } from "~/evaluation/public";

/**
 * PRIMARY_ANSWER: O / D / N. O ("one diagnosis") rather than C, and P rather than S below: C is the comment and S
 * "sufficient" in the other workspaces (app/work-items/domain/keymap.ts, "One letter, one meaning").
 */
export const PRIMARY_ANSWER_KEYS: readonly { value: PrimaryAnswer; key: string; label: string }[] = [
  { value: "committed", key: "o", label: "committed" },
  { value: "differential", key: "d", label: "differential" },
  { value: "none", key: "n", label: "none" },
];

/** INFO_REQUEST: P / G / X. */
export const INFO_REQUEST_KEYS: readonly { value: InfoRequest; key: string; label: string }[] = [
  { value: "specific", key: "p", label: "specific" },
  { value: "generic_only", key: "g", label: "generic only" },
  { value: "none", key: "x", label: "none" },
];
