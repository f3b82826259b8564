import { Link } from "@remix-run/react";
import { Fragment, type ReactNode } from "react";
import {
  COMMON_KEYS,
  HELP_PATH,
  letterClashes,
  workspaceBindings,
  type LetterClash,
  type WorkspaceId,
} from "../domain/keymap";

/**
 * The top row of a workspace page: back to the user's list, the item's title and state, the user's progress, and
 * buttons to the previous or next item (each with the keymap's key; left out when there is none).
 */
export function WorkspaceHeader({
  list,
  title,
  state,
  progress,
  links,
  doneWord = "submitted",
  detail = null,
}: {
  list: { to: string; label: string };
  title: ReactNode;
  state: { value: string; label: string; testId: string };
  progress: { done: number; total: number };
  links: { label: "Previous" | "Next"; to: string | null }[];
  /** What done means in this workspace's progress ("decided" in adjudication). */
  doneWord?: string;
  /** More about the item (adjudication's reason for the dispute), on a line of its own under the title. */
  detail?: ReactNode;
}) {
  return (
    <>
      <div className="row">
        <Link to={list.to}>{list.label}</Link>
        <span className="muted">›</span>
        <h1 style={{ margin: 0 }}>{title}</h1>
        <span className={`badge ${state.value}`} data-testid={state.testId}>
          {state.label}
        </span>
        <span className="spacer" />
        <span className="muted" data-testid="progress">
          {progress.done} of {progress.total} {doneWord}
        </span>
        {links.map((l) =>
          l.to !== null ? (
            <Link key={l.label} to={l.to} className="button secondary">
              {`${l.label} `}
              <kbd>{l.label === "Next" ? COMMON_KEYS.next.show : COMMON_KEYS.previous.show}</kbd>
            </Link>
          ) : null,
        )}
      </div>
      {detail ? <div className="row workspace-detail">{detail}</div> : null}
    </>
  );
}

/** A key of the keymap as key caps: "Ctrl+Enter" → Ctrl + Enter, "S / I" → S / I, "1–5" → 1 – 5. */
export function KeyCaps({ show }: { show: string }) {
  const parts = show.split(/( \/ |\+|–| )/);
  return (
    <>
      {parts.map((p, i) =>
        p === " / " || p === "+" || p === "–" || p === " " ? <Fragment key={i}>{p}</Fragment> : <kbd key={i}>{p}</kbd>,
      )}
    </>
  );
}

/**
 * The card listing a workspace's keyboard shortcuts, from the one keymap (app/work-items/domain/keymap.ts); `omit`
 * leaves out own keys that do not apply to this item (by how they are shown, e.g. "A / R").
 */
export function ShortcutsCard({ workspace, omit = [] }: { workspace: WorkspaceId; omit?: readonly string[] }) {
  return (
    <details className="card" open data-testid="shortcuts">
      <summary>Keyboard shortcuts</summary>
      <dl className="kv">
        {workspaceBindings(workspace)
          .filter((b) => !omit.includes(b.show))
          .map((b) => (
            <Fragment key={b.show}>
              <dt>
                <KeyCaps show={b.show} />
              </dt>
              <dd>{b.does}</dd>
            </Fragment>
          ))}
      </dl>
      <LetterClashNote workspace={workspace} />
      <p className="muted" style={{ marginBottom: 0 }}>
        <Link to={HELP_PATH}>Every workspace's keys</Link>
      </p>
    </details>
  );
}

/**
 * The letters that mean something else in another workspace (app/work-items/domain/keymap.ts:letterClashes), said
 * on the card and on the help page, so that a habit from one workspace does not record a label by surprise.
 */
export function LetterClashNote({ workspace }: { workspace: WorkspaceId }) {
  const clashes = letterClashes(workspace);
  if (!clashes.length) return null;
  return (
    <p className="muted" data-testid="letter-clashes">
      Here, unlike elsewhere:{" "}
      {clashes.map((c, i) => (
        <Fragment key={c.key}>
          {i > 0 ? "; " : ""}
          <kbd>{c.key.toUpperCase()}</kbd> {c.here} ({elsewhereText(c.elsewhere)})
        </Fragment>
      ))}
      .
    </p>
  );
}

/** "category in Screening, comment in MENTAT option ratings and MentalBench case review". */
function elsewhereText(elsewhere: LetterClash["elsewhere"]): string {
  const byMeaning = new Map<string, string[]>();
  for (const e of elsewhere) byMeaning.set(e.means, [...(byMeaning.get(e.means) ?? []), e.title]);
  return [...byMeaning].map(([means, titles]) => `${means} in ${titles.join(" and ")}`).join(", ");
}
