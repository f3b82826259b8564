/** Roles (docs/architecture.md#roles-and-blinding) and adjudication modes (docs/safe-psych.md#disagreement-and-adjudication): shared by the schema, the services and the pages. */
export const ROLES = ["admin", "annotator", "adjudicator", "rater"] as const;
export type Role = (typeof ROLES)[number];

export const ADJUDICATION_MODES = ["two_phase", "reveal_only", "independent_only"] as const;
export type AdjudicationMode = (typeof ADJUDICATION_MODES)[number];
