import { saveStateText, type SaveState } from "./use-draft";

/**
 * The foot of a workspace's form (components/use-draft): the form's message, the submit button (or, for work that
 * can no longer change, why not), and whether the draft is saved.
 */
export function DraftFooter({
  draft,
  submitted,
  closed = null,
  revisionHint = false,
}: {
  draft: {
    message: string | null;
    submit: () => void;
    submitting: boolean;
    saveState: SaveState;
    autosave: boolean;
    unsavedRevision: boolean;
  };
  /** Submitted work: the button saves a revision. */
  submitted: boolean;
  /** Shown instead of the button when the work can no longer change. */
  closed?: string | null;
  /** Say so when submitted work has changed but is not saved as a revision yet. */
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
          <button type="button" onClick={draft.submit} disabled={draft.submitting} data-testid="submit">
            {submitted ? "Save revision" : "Submit"} <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
          </button>
        )}
        <span className="spacer" />
        <small className="muted" data-testid="save-state" aria-live="polite">
          {saveStateText(draft.saveState, draft.autosave, revisionHint && draft.unsavedRevision)}
        </small>
      </div>
      {draft.saveState.kind === "error" ? (
        <p className="field-error" role="alert">
          Not saved: {draft.saveState.message}
        </p>
      ) : null}
    </>
  );
}
