import { saveStateText } from "../domain/save-state";
import { formatTime } from "../../ui/time-format";
import type { SaveState } from "./use-save-state";

/**
 * The foot of a workspace's form: the form's message, the submit button (or, for work that can no longer change, why
 * not), and what the save-state machine says (app/work-items/domain/save-state.ts; docs/architecture.md, "The
 * save-state machine"): saved · saving · unsaved · retrying · conflict · refused, and revising for submitted work
 * changed on the page, with *Save revision* and *Discard*. `data-state` on `save-state` is the machine's status.
 */
export function DraftFooter({
  draft,
  closed = null,
  submitLabel = "Submit",
}: {
  draft: SaveState<object>;
  /** The submit button's words for work not yet submitted ("Decide"). */
  submitLabel?: string;
  /** Shown instead of the button when the work can no longer change. */
  closed?: string | null;
}) {
  const { machine } = draft;
  const submitted = machine.mode === "revision";
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
              {submitted ? "Save revision" : submitLabel} <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
            </button>
            {machine.status === "revising" ? (
              <button type="button" className="secondary" onClick={draft.discard} data-testid="discard">
                Discard
              </button>
            ) : null}
          </>
        )}
        <span className="spacer" />
        <SaveStateLine draft={draft} />
      </div>
      <SaveProblem draft={draft} />
    </>
  );
}

/** What is true of the draft, one line (`data-state`: the machine's status). */
export function SaveStateLine({ draft }: { draft: SaveState<object> }) {
  return (
    <small className="muted" data-testid="save-state" data-state={draft.machine.status} aria-live="polite">
      {/* Only ever shown after a save made in the browser, so the reader's locale and zone are known here. */}
      {saveStateText(draft.machine, (at) => formatTime(at, "seconds"))}
    </small>
  );
}

/** Why the work is not saved (retrying, refused, conflict), with *Reload* for a conflict. */
export function SaveProblem({ draft, prefix = "" }: { draft: SaveState<object>; prefix?: string }) {
  const { status, problem } = draft.machine;
  if (status !== "retrying" && status !== "refused" && status !== "conflict") return null;
  return (
    <p className={status === "retrying" ? "notice" : "field-error"} role="alert" data-testid="save-problem">
      {prefix}
      {problem}
      {status === "conflict" ? (
        <>
          {" "}
          <ReloadButton />
        </>
      ) : null}
    </p>
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
