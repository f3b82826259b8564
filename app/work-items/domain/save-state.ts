/**
 * The save-state machine of every workspace (docs/architecture.md, "The save-state machine"): a pure reducer from
 * (state, event) to (state, effects). The hook at its edge (app/work-items/ui/use-save-state.ts) turns the world
 * into events — a change, a timer, a server's answer, the page being left — and performs the effects it returns —
 * send a post, set the one timer, let a navigation go on — so every rule of when to save, what to retry and what to
 * say is here, tested transition by transition (test/unit/save-state.test.ts).
 *
 * Statuses: `idle` (nothing saved yet), `unsaved` (a change waits for its save), `saving`, `saved`, `retrying` (the
 * server was busy or unreachable; the values are kept and sent again), `conflict` (another window or tab saved first;
 * nothing more is sent until a reload), `refused` (the server refused the values; fix them and they are saved again)
 * and `revising` (submitted work changed on the page, saved only by "Save revision").
 */

/** What a workspace's action answers: every save service returns this shape (with more on success for some). */
export type DraftResult =
  | { ok: true; version: number; savedAt: number; state: string }
  | { ok: false; status: number; message: string; errors?: Record<string, string>; retryAfter?: number };

export type SaveStatus = "idle" | "unsaved" | "saving" | "saved" | "retrying" | "conflict" | "refused" | "revising";

/** draft: changes are saved as drafts; revision: submitted work, saved only on "Save revision"; readOnly: closed. */
export type SaveMode = "draft" | "revision" | "readOnly";

export type Errors = Record<string, string>;

export interface SaveMachine<V> {
  mode: SaveMode;
  status: SaveStatus;
  /** The values on the page, including changes not yet sent. */
  values: V;
  /** The values as last stored on the server (Discard goes back to them). */
  saved: V;
  /** The values of the post in flight, which become `saved` when it is stored. */
  sent: V;
  /** The version the server holds as far as this page knows; every post names it. */
  version: number;
  /** The version the post in flight named (a stored save makes it `sentVersion + 1` when the answer omits it). */
  sentVersion: number;
  savedAt: number | null;
  /** Changed since the last post was sent. */
  dirty: boolean;
  inFlight: null | "draft" | "submit" | "beacon";
  /** A submission waiting for the draft save in flight (its version would be stale otherwise). */
  submitWaiting: boolean;
  /** Retries of the current save so far. */
  attempt: number;
  /** What went wrong with saving (retrying, conflict, refused), said in the footer. */
  problem: string | null;
  /** The message above the submit button (an incomplete form, a refused submission). */
  message: string | null;
  /** Messages at the fields. */
  errors: Errors;
  /** A draft was stored from this page (the item is a draft now, whatever state it was loaded in). */
  draftSaved: boolean;
  /** A navigation inside the app waits for the pending change to be saved. */
  leaving: boolean;
}

export type SaveEvent<V> =
  | { type: "change"; values: V; fields: readonly string[] }
  | { type: "timer" }
  | { type: "answer"; intent: "draft" | "submit"; result: DraftResult }
  | { type: "pageHidden" }
  | { type: "beaconAnswer"; status: number; version: number | null; savedAt: number | null; now: number }
  | { type: "submit"; problems: Errors; incompleteMessage: string }
  | { type: "discard" }
  | { type: "leave" }
  | { type: "mode"; mode: SaveMode };

export type SaveEffect<V> =
  | { type: "send"; intent: "draft" | "submit"; values: V; version: number }
  /** The draft as the page is left (fetch keepalive), answered by a `beaconAnswer`. */
  | { type: "beacon"; values: V; version: number }
  /** Set the one timer (replacing any), which fires a `timer` event. */
  | { type: "wait"; ms: number }
  | { type: "stopTimer" }
  /** Let the blocked navigation go on / stay on the page / ask the user whether to leave. */
  | { type: "proceed" }
  | { type: "stay" }
  | { type: "askLeave"; question: string }
  | { type: "submitted"; result: Extract<DraftResult, { ok: true }> };

export interface Step<V> {
  state: SaveMachine<V>;
  effects: SaveEffect<V>[];
}

export const AUTOSAVE_DELAY_MS = 700;
/** Back-off between retries of a save the server could not take (busy, full, unreachable). */
export const RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 10_000] as const;

export const CONFLICT_MESSAGE =
  "This work was changed in another window or tab: nothing was overwritten, and your input stays in the form to copy before you reload.";
export const NOT_MOVED_MESSAGE = "Not moved on: this page's changes are not saved yet (see below). Nothing was lost.";
export const LEAVE_REVISION_QUESTION =
  "You changed this submitted work but did not save the revision. Leave and discard the changes?";
export const LEAVE_UNSAVED_QUESTION = "Your latest changes could not be saved. Leave this page and lose them?";

/** Answers worth sending again unchanged: busy (503), out of space (507), unreachable (0) and server errors. */
export function retryable(status: number): boolean {
  return status === 0 || status >= 500;
}

/** The wait before retry number `attempt` (0-based): the back-off, at least the server's Retry-After. */
export function retryDelay(attempt: number, retryAfterSeconds = 0): number {
  return Math.max(retryAfterSeconds * 1000, RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)]!);
}

export function initialSaveState<V>(opts: {
  values: V;
  version: number;
  updatedAt: number | null;
  mode: SaveMode;
}): SaveMachine<V> {
  return {
    mode: opts.mode,
    status: opts.updatedAt ? "saved" : "idle",
    values: opts.values,
    saved: opts.values,
    sent: opts.values,
    version: opts.version,
    sentVersion: opts.version,
    savedAt: opts.updatedAt,
    dirty: false,
    inFlight: null,
    submitWaiting: false,
    attempt: 0,
    problem: null,
    message: null,
    errors: {},
    draftSaved: false,
    leaving: false,
  };
}

/** Whether leaving now could lose something: changes not saved yet, a save in flight, retrying, refused, conflict. */
export function pendingWork(s: SaveMachine<unknown>): boolean {
  if (s.mode === "readOnly") return false;
  if (s.mode === "revision") return s.dirty;
  return s.dirty || s.inFlight !== null || s.status === "retrying" || s.status === "conflict" || s.status === "refused";
}

/** Whether a submission is on its way (the button is disabled meanwhile). */
export function submitting(s: SaveMachine<unknown>): boolean {
  return s.inFlight === "submit" || s.submitWaiting;
}

/** What the footer says. A conflict outranks everything: nothing more can be saved from this page. */
export function saveStateText(
  s: SaveMachine<unknown>,
  formatSavedAt: (at: number) => string = (at) => new Date(at).toLocaleTimeString(),
): string {
  switch (s.status) {
    case "conflict":
      return "Conflict: not saved";
    case "revising":
      return "Revising: changes not saved — Save revision or Discard";
    case "unsaved":
      return "Unsaved changes…";
    case "saving":
      return "Saving…";
    case "saved":
      return `Saved ${formatSavedAt(s.savedAt ?? 0)}`;
    case "retrying":
      return `Not saved yet — retrying (attempt ${s.attempt})`;
    case "refused":
      return "Not saved";
    case "idle":
      return s.mode === "draft" ? "Drafts save automatically" : "";
  }
}

function without(errors: Errors, fields: readonly string[]): Errors {
  if (!fields.some((f) => f in errors)) return errors;
  const next = { ...errors };
  for (const f of fields) delete next[f];
  return next;
}

/** Sends the pending draft now. */
function sendDraft<V>(s: SaveMachine<V>, effects: SaveEffect<V>[] = []): Step<V> {
  return {
    state: { ...s, dirty: false, inFlight: "draft", sent: s.values, sentVersion: s.version, status: "saving" },
    effects: [
      ...effects,
      { type: "stopTimer" },
      { type: "send", intent: "draft", values: s.values, version: s.version },
    ],
  };
}

function sendSubmit<V>(s: SaveMachine<V>): Step<V> {
  return {
    state: { ...s, inFlight: "submit", submitWaiting: false, sent: s.values, sentVersion: s.version },
    effects: [{ type: "stopTimer" }, { type: "send", intent: "submit", values: s.values, version: s.version }],
  };
}

/** A draft that was not stored: conflict, retry later, or refused; a navigation waiting for it stays. */
function draftNotStored<V>(
  s: SaveMachine<V>,
  status: number,
  message: string,
  retryAfter = 0,
  errors?: Errors,
): Step<V> {
  const base: SaveMachine<V> = { ...s, inFlight: null, dirty: true, submitWaiting: false, leaving: false };
  const effects: SaveEffect<V>[] = [];
  let next: SaveMachine<V>;
  if (status === 409) next = { ...base, status: "conflict", problem: message };
  else if (retryable(status)) {
    next = { ...base, status: "retrying", problem: message, attempt: s.attempt + 1 };
    effects.push({ type: "wait", ms: retryDelay(s.attempt, retryAfter) });
  } else next = { ...base, status: "refused", problem: message, errors: errors ?? s.errors };
  if (s.leaving) {
    effects.push({ type: "stay" });
    next = { ...next, message: NOT_MOVED_MESSAGE };
  }
  return { state: next, effects };
}

/** A draft that was stored at `version`: go on with what came next (a submission, more changes, leaving). */
function draftStored<V>(s: SaveMachine<V>, version: number, savedAt: number): Step<V> {
  const stored: SaveMachine<V> = {
    ...s,
    inFlight: null,
    version,
    saved: s.sent,
    savedAt,
    attempt: 0,
    problem: null,
    draftSaved: true,
    status: s.dirty ? "unsaved" : "saved",
  };
  if (s.submitWaiting) return sendSubmit(stored);
  if (s.dirty) {
    if (s.leaving) return sendDraft(stored);
    return { state: stored, effects: [{ type: "wait", ms: AUTOSAVE_DELAY_MS }] };
  }
  if (s.leaving) return { state: { ...stored, leaving: false }, effects: [{ type: "proceed" }] };
  return { state: stored, effects: [] };
}

export function saveTransition<V>(s: SaveMachine<V>, e: SaveEvent<V>): Step<V> {
  const none: Step<V> = { state: s, effects: [] };
  switch (e.type) {
    case "change": {
      if (s.mode === "readOnly") return none;
      const changed: SaveMachine<V> = { ...s, values: e.values, dirty: true, errors: without(s.errors, e.fields) };
      if (s.mode === "revision")
        return { state: { ...changed, status: s.status === "conflict" ? "conflict" : "revising" }, effects: [] };
      const status = s.status === "idle" || s.status === "saved" || s.status === "refused" ? "unsaved" : s.status;
      // Autosave shortly after the last change, unless a save is in flight, waiting to retry, or stopped.
      const waits = s.inFlight === null && status === "unsaved";
      return { state: { ...changed, status }, effects: waits ? [{ type: "wait", ms: AUTOSAVE_DELAY_MS }] : [] };
    }
    case "timer":
      if (s.mode !== "draft" || !s.dirty || s.inFlight !== null || s.status === "conflict") return none;
      return sendDraft(s);
    case "answer": {
      const r = e.result;
      if (e.intent === "draft") {
        if (s.inFlight !== "draft") return none;
        return r.ok
          ? draftStored(s, r.version, r.savedAt)
          : draftNotStored(s, r.status, r.message, r.retryAfter, r.errors);
      }
      if (s.inFlight !== "submit") return none;
      const leaving: SaveEffect<V>[] = s.leaving ? [{ type: "stay" }] : [];
      if (r.ok)
        return {
          state: {
            ...s,
            inFlight: null,
            leaving: false,
            version: r.version,
            saved: s.sent,
            savedAt: r.savedAt,
            dirty: false,
            status: "saved",
            problem: null,
            message: null,
            errors: {},
            mode: s.mode === "readOnly" ? "readOnly" : "revision",
          },
          effects: [...leaving, { type: "submitted", result: r }],
        };
      // A conflict is said once, in the footer, and wins over field errors (they were checked against a version
      // that is no longer the latest); other refusals keep their message above the button.
      const back: SaveMachine<V> = { ...s, inFlight: null, leaving: false, dirty: true };
      if (r.status === 409)
        return {
          state: { ...back, status: "conflict", problem: r.message, message: null, errors: {} },
          effects: leaving,
        };
      return { state: { ...back, message: r.message, errors: r.errors ?? s.errors }, effects: leaving };
    }
    case "pageHidden":
      // The page may be going away: the pending draft goes out at once, as a request that outlives the page.
      if (s.mode !== "draft" || !s.dirty || s.inFlight !== null || s.status === "conflict") return none;
      return {
        state: { ...s, dirty: false, inFlight: "beacon", sent: s.values, sentVersion: s.version, status: "saving" },
        effects: [{ type: "stopTimer" }, { type: "beacon", values: s.values, version: s.version }],
      };
    case "beaconAnswer": {
      if (s.inFlight !== "beacon") return none;
      if (e.status >= 200 && e.status < 300)
        // Every stored save adds 1 to the version (docs/architecture.md, "The work-item engine"): an answer whose
        // headers were lost on the way still leaves the page at the right version.
        return draftStored(s, e.version ?? s.sentVersion + 1, e.savedAt ?? e.now);
      return draftNotStored(s, e.status, e.status === 409 ? CONFLICT_MESSAGE : "Not saved yet; trying again.");
    }
    case "submit": {
      if (s.mode === "readOnly" || submitting(s)) return none;
      if (Object.keys(e.problems).length) {
        const shown: SaveMachine<V> = { ...s, errors: e.problems, message: e.incompleteMessage };
        // A revision is not autosaved, so only the server can tell whether another window changed it meanwhile:
        // ask it (it answers 409 before checking the values), so that a conflict replaces these field errors.
        if (s.mode === "revision" && s.status !== "conflict") return sendSubmit(shown);
        return { state: shown, effects: [] };
      }
      const ready: SaveMachine<V> = { ...s, message: null, dirty: false };
      // A draft save in flight would make this submission's version stale: submit once it is answered.
      if (s.inFlight !== null) return { state: { ...ready, submitWaiting: true }, effects: [] };
      return sendSubmit(ready);
    }
    case "discard":
      if (s.mode !== "revision") return none;
      return {
        state: {
          ...s,
          values: s.saved,
          dirty: false,
          errors: {},
          message: null,
          status: s.status === "conflict" ? "conflict" : s.savedAt !== null ? "saved" : "idle",
        },
        effects: [],
      };
    case "leave": {
      if (s.leaving) return none;
      if (!pendingWork(s)) return { state: s, effects: [{ type: "proceed" }] };
      if (s.mode === "revision")
        return { state: s, effects: [{ type: "askLeave", question: LEAVE_REVISION_QUESTION }] };
      if (s.status === "conflict" || s.status === "refused")
        return { state: s, effects: [{ type: "askLeave", question: LEAVE_UNSAVED_QUESTION }] };
      const leaving: SaveMachine<V> = { ...s, leaving: true };
      if (s.inFlight !== null) return { state: leaving, effects: [] };
      return sendDraft(leaving);
    }
    case "mode": {
      if (e.mode === s.mode) return none;
      const status = e.mode === "revision" && s.dirty && s.status !== "conflict" ? "revising" : s.status;
      return {
        state: { ...s, mode: e.mode, status: e.mode !== "revision" && status === "revising" ? "unsaved" : status },
        effects: e.mode === "readOnly" ? [{ type: "stopTimer" }] : [],
      };
    }
  }
}
