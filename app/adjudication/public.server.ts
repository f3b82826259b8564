/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of adjudication's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/adjudication/ is its
 * own.
 */
import type { NavEntry } from "../platform/registry.server";

export { ADJUDICATION_TIME } from "./adjudication.server";

/** The adjudicator's link of the menu (docs/architecture.md, "Registration"). */
export const ADJUDICATION_NAV: readonly NavEntry[] = [
  {
    to: "/adjudicate",
    label: "Adjudicate",
    role: "adjudicator",
    listOf: { segments: ["adjudicate"], label: "Adjudication queue" },
  },
];
