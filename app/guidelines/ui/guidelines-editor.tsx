import { useFetcher } from "@remix-run/react";
import { useId } from "react";
import type { GuidelinesAdmin } from "~/guidelines/domain/guidelines";
import { GUIDELINES_MAX } from "~/guidelines/domain/guidelines";
import { Csrf } from "~/ui/root-data";
import { Time } from "~/ui/time";

interface Result {
  ok: boolean;
  message: string;
}

/**
 * The admin's editor of a study's guidelines (docs/guidelines.md): the version in force as reviewers see it, a
 * Markdown field whose save adds a version, and the list of versions. The save names the version the editor was
 * opened at, so an edit made meanwhile in another window is never overwritten.
 */
export function GuidelinesEditor({ guidelines }: { guidelines: GuidelinesAdmin }) {
  const fetcher = useFetcher<Result>();
  const fieldId = useId();
  const busy = fetcher.state !== "idle";
  const current = guidelines.current;
  return (
    <section aria-labelledby={`${fieldId}-h`} data-testid="guidelines-editor">
      <h2 id={`${fieldId}-h`}>Guidelines and codebook</h2>
      <p className="muted">
        Shown to everyone working on this study, in a panel of the workspace (key <kbd>?</kbd>) and on their first
        visit. Markdown; raw HTML is not rendered. Saving adds a version; every submission records the version in force.
      </p>
      <div className="grid2">
        <fetcher.Form
          method="post"
          action={`/admin/guidelines/${guidelines.scope}/${guidelines.scopeId}`}
          className="card"
        >
          <Csrf />
          <input type="hidden" name="basedOn" value={current?.version ?? 0} />
          <label htmlFor={fieldId}>
            {current ? `Text (editing version ${current.version})` : "Text (no guidelines yet)"}
          </label>
          <textarea
            id={fieldId}
            name="body"
            rows={16}
            maxLength={GUIDELINES_MAX}
            defaultValue={current?.body ?? ""}
            key={current?.version ?? 0}
          />
          <div className="row">
            <button type="submit" name="intent" value="guidelines" disabled={busy}>
              Save as a new version
            </button>
            {fetcher.data ? (
              <span role="status" className={fetcher.data.ok ? "ok" : "error"}>
                {fetcher.data.message}
              </span>
            ) : null}
          </div>
        </fetcher.Form>
        <div className="card">
          <h3>Versions</h3>
          {guidelines.versions.length ? (
            <table>
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">Saved</th>
                  <th scope="col">By</th>
                </tr>
              </thead>
              <tbody>
                {guidelines.versions.map((v) => (
                  <tr key={v.version}>
                    <td>{v.version}</td>
                    <td>
                      <Time at={v.createdAt} />
                    </td>
                    <td>{v.author ?? "study template"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p className="muted">None yet.</p>
          )}
        </div>
      </div>
      {current ? (
        <details className="card">
          <summary>Preview of version {current.version}</summary>
          <div className="guidelines-text" dangerouslySetInnerHTML={{ __html: current.html }} />
        </details>
      ) : null}
    </section>
  );
}

/** A screening study's inclusion criterion, shown to every reviewer above the relevance question. */
export function InclusionCriterionForm({ studyId, criterion }: { studyId: number; criterion: string }) {
  const fetcher = useFetcher<Result>();
  const fieldId = useId();
  return (
    <fetcher.Form method="post" action={`/admin/guidelines/screening/${studyId}`} className="card">
      <Csrf />
      <label htmlFor={fieldId}>Inclusion criterion (shown to every reviewer)</label>
      <textarea id={fieldId} name="criterion" rows={3} maxLength={4000} defaultValue={criterion} />
      <div className="row">
        <button type="submit" name="intent" value="criterion" disabled={fetcher.state !== "idle"}>
          Save the criterion
        </button>
        {fetcher.data ? (
          <span role="status" className={fetcher.data.ok ? "ok" : "error"}>
            {fetcher.data.message}
          </span>
        ) : null}
      </div>
    </fetcher.Form>
  );
}
