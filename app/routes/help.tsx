import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link } from "@remix-run/react";
import { Fragment } from "react";
import { requireUser } from "~/accounts/guard.server";
import { COMMON_KEYS, WORKSPACE_KEYMAPS, workspaceBindings, type WorkspaceId } from "~/work-items/domain/keymap";
import { KeyCaps, LetterClashNote } from "~/work-items/ui/workspace-header";
import { GUIDES, guidePath } from "~/help/domain/guides";

export const meta: MetaFunction = () => [{ title: "Help · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireUser(request);
  return null;
}

/**
 * The help page: the user guides (docs/guides/, shown at /help/guides/<id>), then the one keymap
 * (app/work-items/domain/keymap.ts), the shared keys first, then every workspace's.
 */
export default function Help() {
  const shared = Object.values(COMMON_KEYS);
  return (
    <section>
      <h1>Help</h1>
      <div className="card">
        <h2 style={{ marginTop: 0 }}>User guides</h2>
        <ul data-testid="guides">
          {GUIDES.map((g) => (
            <li key={g.id}>
              <Link to={guidePath(g.id)}>{g.title}</Link>
            </li>
          ))}
        </ul>
      </div>
      <h2>Keyboard shortcuts</h2>
      <p>
        Every workspace answers to the same keys for moving between items, submitting, searching, the guidelines and
        this page; each workspace adds keys that record its labels. Single keys act only outside text fields (press{" "}
        <kbd>Esc</kbd> to leave one). No key records a label in one workspace and moves to another item in another.
      </p>
      <div className="card">
        <h3 style={{ marginTop: 0 }}>In every workspace</h3>
        <dl className="kv" data-testid="keys-common">
          {shared.map((b) => (
            <Fragment key={b.show}>
              <dt>
                <KeyCaps show={b.show} />
              </dt>
              <dd>{b.does}</dd>
            </Fragment>
          ))}
        </dl>
        <p className="muted">
          On a list page, <kbd>{COMMON_KEYS.next.show}</kbd> opens the next item to work on.
        </p>
      </div>
      {(Object.keys(WORKSPACE_KEYMAPS) as WorkspaceId[]).map((id) => (
        <div className="card" key={id} data-workspace={id}>
          <h3 style={{ marginTop: 0 }}>{WORKSPACE_KEYMAPS[id].title}</h3>
          <dl className="kv">
            {workspaceBindings(id).map((b) => (
              <Fragment key={b.show}>
                <dt>
                  <KeyCaps show={b.show} />
                </dt>
                <dd>{b.does}</dd>
              </Fragment>
            ))}
          </dl>
          <LetterClashNote workspace={id} />
        </div>
      ))}
    </section>
  );
}
