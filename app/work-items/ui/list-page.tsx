import { Link } from "@remix-run/react";
import type { ReactNode } from "react";
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

/** A list page's progress: how many of the user's items are submitted, as text and a bar, and optionally per state. */
export function ProgressCard({ done, total, breakdown }: { done: number; total: number; breakdown?: ReactNode }) {
  const summary = (
    <strong data-testid="progress">
      {done} of {total} submitted
    </strong>
  );
  return (
    <div className="card" role="group" aria-label="Progress">
      {breakdown ? (
        <div className="row">
          {summary}
          <span className="muted">{breakdown}</span>
        </div>
      ) : (
        summary
      )}
      <div
        className="progress"
        role="progressbar"
        aria-label="Submitted"
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={done}
        aria-valuetext={`${done} of ${total} submitted`}
      >
        <div style={{ width: `${(100 * done) / total}%` }} />
      </div>
    </div>
  );
}
