import type { ReactNode } from "react";

/** A list page's progress: how many of the user's items are submitted, as text and a bar, and optionally per state. */
export function ProgressCard({ done, total, breakdown }: { done: number; total: number; breakdown?: ReactNode }) {
  const summary = (
    <strong data-testid="progress">
      {done} of {total} submitted
    </strong>
  );
  return (
    <div className="card" aria-label="Progress">
      {breakdown ? (
        <div className="row">
          {summary}
          <span className="muted">{breakdown}</span>
        </div>
      ) : (
        summary
      )}
      <div className="progress" role="progressbar" aria-valuemin={0} aria-valuemax={total} aria-valuenow={done}>
        <div style={{ width: `${(100 * done) / total}%` }} />
      </div>
    </div>
  );
}
