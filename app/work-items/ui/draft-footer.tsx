import { saveStateText, type SaveState } from "./use-draft";

/**
 * The foot of a workspace's form (components/use-draft): the form's message, the submit button (or, for work that
 * can no longer change, why not), and what is true of the draft: saved · saving · unsaved · retrying · conflict ·
 * failed (docs/architecture.md, "Saving under load"). Submitted work being changed is an explicit revising state with
 * *Save revision* and *Discard*.
 */
export function DraftFooter({
  draft,
  submitted,
  closed = null,
}: {
  draft: {
    message: string | null;
    submit: () => void;
    submitting: boolean;
    saveState: SaveState;
    autosave: boolean;
    unsavedRevision: boolean;
    discard?: () => void;
  };
  /** Submitted work: the button saves a revision. */
  submitted: boolean;
  /** Shown instead of the button when the work can no longer change. */
  closed?: string | null;
  /** Kept for callers: the revising state is always shown now. */
  revisionHint?: boolean;
}) {
  return (
    <>
      {draft.message ? (
        <p className="notice bad" role="alert" data-testid="form-message">
          {draft.message}
        </p>
      ) : null}
      <div className="row" style={{ marginTop: "0.75rem" }}>
        {closed ? (
          <span className="notice ok">{closed}</span>
        ) : (
          <>
            <button type="button" onClick={draft.submit} disabled={draft.submitting} data-testid="submit">
              {submitted ? "Save revision" : "Submit"} <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
            </button>
            {submitted && draft.unsavedRevision && draft.discard && draft.saveState.kind !== "conflict" ? (
              <button type="button" className="secondary" onClick={draft.discard} data-testid="discard">
                Discard
              </button>
            ) : null}
          </>
        )}
        <span className="spacer" />
        <small
          className="muted"
          data-testid="save-state"
          data-state={draft.saveState.kind !== "conflict" && draft.unsavedRevision ? "revising" : draft.saveState.kind}
          aria-live="polite"
        >
          {saveStateText(draft.saveState, draft.autosave, draft.unsavedRevision)}
        </small>
      </div>
      {draft.saveState.kind === "retrying" ||
      draft.saveState.kind === "failed" ||
      draft.saveState.kind === "conflict" ? (
        <p
          className={draft.saveState.kind === "retrying" ? "notice" : "field-error"}
          role="alert"
          data-testid="save-problem"
        >
          {draft.saveState.message}
          {draft.saveState.kind === "conflict" ? (
            <>
              {" "}
              <ReloadButton />
            </>
          ) : null}
        </p>
      ) : null}
    </>
  );
}

/** Reloads the page, to see the version another window saved (the browser asks first if input would be lost). */
export function ReloadButton() {
  return (
    <button type="button" className="secondary" onClick={() => window.location.reload()} data-testid="reload">
      Reload
    </button>
  );
}
