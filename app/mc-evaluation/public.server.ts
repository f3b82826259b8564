/**
 * What the composition root (app/protocols.server.ts) may use of multiple-choice evaluation's services
 * (docs/architecture.md, "Public modules").
 */
import type { NavEntry } from "../platform/registry.server";

/** The admin's link of the menu (docs/architecture.md, "Registration"). */
export const MC_EVALUATION_NAV: readonly NavEntry[] = [
  { to: "/admin/mc-evaluation", label: "Model evaluation", role: "admin" },
];
