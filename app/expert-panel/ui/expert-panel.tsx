import type { ReactNode } from "react";
import { Form, Link, useSearchParams } from "@remix-run/react";
import { Csrf } from "~/ui/root-data";
import { ActionResult, ImportedNotice } from "~/ui/admin-notices";

export interface PanelRow {
  id: string;
  username: string;
  active: boolean;
  onPanel: boolean;
  submitted: number;
  drafts: number;
}

/**
 * The expert panel of a question bank or review set (admin): who is on it with their progress, a button to take
 * each off (`remove_rater`), and a form to add an active rater (`add_rater`). The page's action handles both intents.
 */
export function ExpertPanel({
  panel,
  total,
  busy,
  emptyText,
  everyoneText,
  markDeactivated = false,
}: {
  panel: PanelRow[];
  /** How many items each expert is asked to do. */
  total: number;
  busy: boolean;
  /** Shown when nobody is on the panel. */
  emptyText: string;
  /** Shown instead of the form when every active rater is on the panel. */
  everyoneText: string;
  /** Badge members whose account is deactivated. */
  markDeactivated?: boolean;
}) {
  const onPanel = panel.filter((p) => p.onPanel);
  const others = panel.filter((p) => !p.onPanel && p.active);
  return (
    <div className="grid2">
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th>Expert</th>
              <th className="num">Submitted</th>
              <th className="num">Drafts</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {onPanel.length === 0 ? (
              <tr>
                <td colSpan={4} className="muted">
                  {emptyText}
                </td>
              </tr>
            ) : (
              onPanel.map((p) => (
                <tr key={p.id} data-rater={p.username}>
                  {markDeactivated ? (
                    <td>
                      {p.username} {p.active ? null : <span className="badge">deactivated</span>}
                    </td>
                  ) : (
                    <td>{p.username}</td>
                  )}
                  <td className="num">
                    {p.submitted} / {total}
                  </td>
                  <td className="num">{p.drafts}</td>
                  <td>
                    <Form method="post">
                      <Csrf />
                      <input type="hidden" name="raterId" value={p.id} />
                      <button type="submit" name="intent" value="remove_rater" className="link" disabled={busy}>
                        remove
                      </button>
                    </Form>
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
      <Form method="post" className="card">
        <Csrf />
        <h3 style={{ marginTop: 0 }}>Add an expert</h3>
        {others.length ? (
          <>
            <select name="raterId" aria-label="Expert to add" defaultValue="">
              <option value="" disabled>
                Choose a user with the rater role…
              </option>
              {others.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.username}
                </option>
              ))}
            </select>{" "}
            <button type="submit" name="intent" value="add_rater" disabled={busy}>
              Add
            </button>
          </>
        ) : (
          <p className="muted">{everyoneText}</p>
        )}
      </Form>
    </div>
  );
}

/**
 * The head of a question bank's or review set's admin page: the way back to the list, its name with `aside` beside
 * it, what the import that led here did (`?imported=` from the list page) and what the page's last action answered.
 */
export function ExpertAdminHead({
  name,
  aside,
  result,
}: {
  name: string;
  aside: ReactNode;
  result: { ok: boolean; message: string } | undefined;
}) {
  const [search] = useSearchParams();
  return (
    <>
      <p>
        <Link to="/admin/expert-ratings">Expert ratings</Link> ›
      </p>
      <div className="row">
        <h1>{name}</h1>
        <span className="spacer" />
        {aside}
      </div>
      <ImportedNotice counts={search.get("imported")?.split("-")} />
      <ActionResult result={result} />
    </>
  );
}
