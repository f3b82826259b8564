/**
 * The expert's and the admin's links of the menu for MENTAT and case review together (docs/architecture.md,
 * "Registration"): one list of an expert's work across both.
 */
import type { NavEntry } from "../platform/registry.server";

export const EXPERT_PANEL_NAV: readonly NavEntry[] = [
  {
    to: "/expert-ratings",
    label: "Expert ratings",
    role: "rater",
    listOf: { segments: ["expert-ratings", "mentat", "case-review"], label: "Expert ratings" },
  },
  { to: "/admin/expert-ratings", label: "Experts", role: "admin" },
];
