/**
 * The screening rule's four numbers (docs/screening.md), as the new-study form and the settings form ask for them:
 * reviewers per round, inclusion votes, the control threshold and the controls per round, each a labelled number
 * input with the limits the server checks again.
 */
import { Fragment, type ReactNode } from "react";

export interface RuleValues {
  reviewersPerRound: number;
  inclusionVotes: number;
  controlThreshold: number;
  controlsPerRound: number;
}

/** The number inputs' limits, by field (the server's schema has the same). */
const LIMITS: Record<keyof RuleValues, { min: number; max?: number; step?: string }> = {
  reviewersPerRound: { min: 2, max: 20 },
  inclusionVotes: { min: 1, max: 20 },
  controlThreshold: { min: 0, max: 0.99, step: "0.001" },
  controlsPerRound: { min: 1 },
};

/**
 * One labelled number input per field of `labels`, in its order; `idPrefix` makes the ids unique on the page, and
 * `after` renders what follows each input (its field error).
 */
export function RuleFields({
  values,
  labels,
  idPrefix = "",
  after,
}: {
  values: RuleValues;
  labels: Partial<Record<keyof RuleValues, { id?: string; label: string }>>;
  idPrefix?: string;
  after?: (name: keyof RuleValues) => ReactNode;
}) {
  return (
    <>
      {(Object.entries(labels) as [keyof RuleValues, { id?: string; label: string }][]).map(([name, l]) => {
        const id = idPrefix + (l.id ?? name);
        return (
          <Fragment key={name}>
            <label htmlFor={id}>{l.label}</label>
            <input id={id} name={name} type="number" {...LIMITS[name]} defaultValue={values[name]} />
            {after?.(name)}
          </Fragment>
        );
      })}
    </>
  );
}
