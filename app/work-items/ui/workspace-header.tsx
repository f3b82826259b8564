import { Link } from "@remix-run/react";
import type { ReactNode } from "react";

/**
 * The top row of a workspace page: back to the user's list, the item's title and state, the user's progress, and
 * buttons to the previous or next item (each with its keyboard shortcut; left out when there is none).
 */
export function WorkspaceHeader({
  list,
  title,
  state,
  progress,
  links,
}: {
  list: { to: string; label: string };
  title: ReactNode;
  state: { value: string; label: string; testId: string };
  progress: { done: number; total: number };
  links: { label: "Previous" | "Next"; to: string | null; shortcut: string }[];
}) {
  return (
    <div className="row">
      <Link to={list.to}>{list.label}</Link>
      <span className="muted">›</span>
      <h1 style={{ margin: 0 }}>{title}</h1>
      <span className={`badge ${state.value}`} data-testid={state.testId}>
        {state.label}
      </span>
      <span className="spacer" />
      <span className="muted" data-testid="progress">
        {progress.done} of {progress.total} submitted
      </span>
      {links.map((l) =>
        l.to !== null ? (
          <Link key={l.label} to={l.to} className="button secondary">
            {`${l.label} `}
            <kbd>{l.shortcut}</kbd>
          </Link>
        ) : null,
      )}
    </div>
  );
}

/** The card listing a workspace's keyboard shortcuts; `children` are its <dt>/<dd> pairs. */
export function ShortcutsCard({ children }: { children: ReactNode }) {
  return (
    <details className="card" open>
      <summary>Keyboard shortcuts</summary>
      <dl className="kv">{children}</dl>
    </details>
  );
}
