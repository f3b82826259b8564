/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of rubric-grading's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/rubric-grading/ is its
 * own.
 */
import type { NavEntry } from "../platform/registry.server";

export { GRADING_SET_PARENT } from "./sets.server";

/** The admin's link of the menu (docs/architecture.md, "Registration"). */
export const GRADING_NAV: readonly NavEntry[] = [{ to: "/admin/grading", label: "Grading", role: "admin" }];
