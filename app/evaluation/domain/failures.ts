/** The failure filters of an evaluation's case list (docs/evaluation.md, "A case, step by step"). Pure. */
export const FAILURE_FILTERS = [
  "premature_diagnosis",
  "premature_abstention",
  "over_abstention",
  "wrong_code",
  "seed_disagreement",
] as const;
export type FailureFilter = (typeof FAILURE_FILTERS)[number];

export const FAILURE_LABELS: Record<FailureFilter, string> = {
  premature_diagnosis: "Premature diagnosis",
  premature_abstention: "Premature abstention",
  over_abstention: "Over-abstention",
  wrong_code: "Wrong code",
  seed_disagreement: "Disagreement between seeds",
};

/** Most trajectories the case page shows side by side. */
export const MAX_SIDE_BY_SIDE = 4;
