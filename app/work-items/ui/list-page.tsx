import { Link } from "@remix-run/react";
import { WORK_STATE_LABELS, type WorkState } from "../domain/work-item";
import { NEXT_KEY, useNextKey } from "./shortcuts";

/**
 * The top row of a user's work list: its title, and a button to the next open item with the keymap's "next" key
 * (bound here too), or, when everything is submitted, `allDone`.
 */
export function ListHeader({
  title,
  next,
  allDone,
}: {
  title: string;
  next: { to: string | null; label: string; testId: string };
  allDone: string | null;
}) {
  useNextKey(next.to);
  return (
    <div className="row">
      <h1>{title}</h1>
      <span className="spacer" />
      {next.to !== null ? (
        <Link to={next.to} className="button" data-testid={next.testId}>
          {`${next.label} `}
          <kbd>{NEXT_KEY}</kbd>
        </Link>
      ) : allDone ? (
        <span className="notice ok">{allDone}</span>
      ) : null}
    </div>
  );
}

/**
 * A list page's progress: how many of the user's items are done, as text and a bar, with the count per state
 * (`breakdown`). `doneWord` names what done means ("submitted"; "decided" in adjudication).
 */
export function ProgressCard({
  done,
  total,
  breakdown,
  doneWord = "submitted",
}: {
  done: number;
  total: number;
  breakdown: string;
  doneWord?: string;
}) {
  return (
    <div className="card" role="group" aria-label="Progress">
      <div className="row">
        <strong data-testid="progress">
          {done} of {total} {doneWord}
        </strong>
        <span className="muted" data-testid="progress-breakdown">
          {breakdown}
        </span>
      </div>
      <div
        className="progress"
        role="progressbar"
        aria-label={doneWord[0]!.toUpperCase() + doneWord.slice(1)}
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={done}
        aria-valuetext={`${done} of ${total} ${doneWord}`}
      >
        <div style={{ width: `${(100 * done) / Math.max(total, 1)}%` }} />
      </div>
    </div>
  );
}

/**
 * The progress of a list of work items, the same on every list: submitted counts locked work too, so the breakdown
 * says how many of the submitted are locked rather than listing them as a separate, contradicting count.
 */
export function WorkProgressCard({
  states,
  counts,
}: {
  /** The states of every item of the list … */
  states?: readonly WorkState[];
  /** … or how many items are in each state, when the page shows a window of the list (docs/architecture.md, "Pages are windows"). */
  counts?: Readonly<Record<WorkState, number>>;
}) {
  const n = (s: WorkState) => (counts ? counts[s] : (states ?? []).filter((x) => x === s).length);
  const done = n("submitted") + n("locked");
  const locked = n("locked");
  const total = n("not_started") + n("draft") + done;
  const breakdown =
    `${n("not_started")} not started · ${n("draft")} draft · ${done} submitted` +
    (locked ? ` (${locked === done ? "all" : locked} locked)` : "");
  return <ProgressCard done={done} total={total} breakdown={breakdown} />;
}

/** The states a work list can be filtered by (locked work counts as submitted). */
const FILTER_STATES = ["not_started", "draft", "submitted"] as const satisfies readonly WorkState[];

/**
 * The filters of a user's work list, the same on every list: which of their collections (a study, set, bank or round;
 * shown only when they have more than one) and which state, each state with its count. The names are the list
 * window's filter keys (docs/architecture.md, "Pages are windows").
 */
export function WorkListFilters<S extends string = (typeof FILTER_STATES)[number]>({
  collection,
  state,
}: {
  collection: {
    name: string;
    label: string;
    selected: string | undefined;
    options: readonly { value: string | number; label: string }[];
  };
  state: {
    selected: string | undefined;
    counts: Readonly<Record<S, number>>;
    /** The states offered, in order, and their words; by default a work item's. */
    states?: readonly S[];
    labels?: Readonly<Record<S, string>>;
  };
}) {
  const states = state.states ?? (FILTER_STATES as readonly string[] as readonly S[]);
  const labels = state.labels ?? (WORK_STATE_LABELS as Readonly<Record<string, string>>);
  return (
    <>
      {collection.options.length > 1 ? (
        <select name={collection.name} aria-label={collection.label} defaultValue={collection.selected}>
          {collection.options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      ) : null}
      <select name="state" aria-label="Filter by state" defaultValue={state.selected}>
        <option value="">All states</option>
        {states.map((s) => (
          <option key={s} value={s}>
            {labels[s]} ({state.counts[s]})
          </option>
        ))}
      </select>
    </>
  );
}
