/**
 * The save cycle of every workspace (annotation, response rating, screening vote, option rating, case review):
 * drafts saved on the server shortly after each change while the work is a draft (docs/architecture.md, "The work-item engine"), an explicit submission
 * (or revision), optimistic concurrency through the version the page read, and the server's messages kept at the
 * fields. The route's action reads what this posts with parseDraftPost (app/platform/forms.ts).
 */
import { useBlocker, useFetcher } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState } from "react";
import { useActiveTime } from "./use-active-time";
import { formatTime } from "~/ui/time-format";

/** What a workspace's action answers: every save service returns this shape (with more on success for some). */
export type DraftResult =
  | { ok: true; version: number; savedAt: number; state: string }
  | { ok: false; status: number; message: string; errors?: Record<string, string>; retryAfter?: number };

/**
 * What the footer says (docs/architecture.md, "Saving under load"): nothing to save yet · unsaved (a change waits
 * for its save) · saving · saved · retrying (the server was busy or unreachable; the draft is kept and sent again) ·
 * conflict (someone else changed the work; nothing is sent until the page is reloaded) · failed (refused; fix and
 * save again).
 */
export type SaveState =
  | { kind: "idle" }
  | { kind: "unsaved" }
  | { kind: "saving" }
  | { kind: "saved"; at: number }
  | { kind: "retrying"; message: string; attempt: number }
  | { kind: "conflict"; message: string }
  | { kind: "failed"; message: string };

const AUTOSAVE_DELAY_MS = 700;
/** Back-off between retries of a save the server could not take (busy, full, unreachable). */
const RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 10_000];
/** fetch keepalive refuses bodies over 64 KiB; a longer draft is sent as a plain request. */
const KEEPALIVE_LIMIT = 60_000;

/** Answers worth sending again unchanged: busy (503), out of space (507), unreachable (0) and server errors. */
function retryable(status: number): boolean {
  return status === 0 || status === 503 || status === 507 || status >= 500;
}

export function useDraft<V extends object, R extends DraftResult = DraftResult>(opts: {
  initial: V;
  /** The version the page read (0 before the first save). */
  version: number;
  updatedAt: number | null;
  csrf: string;
  /** Whether changes are saved as drafts now; submitted work waits for "Save revision". */
  autosave: boolean;
  /** Work that can no longer change (locked, closed): changes and submissions are ignored. */
  readOnly?: boolean;
  /** How a change applies to the values; by default it is merged in. */
  apply?: (values: V, patch: Partial<V>) => V;
  /** The server's rules checked before a submission, so mistakes show at once: field errors, empty when fine. */
  check: (values: V) => Record<string, string>;
  /** The message above the fields when `check` finds problems. */
  incompleteMessage: string;
  onSubmitted: (result: Extract<R, { ok: true }>) => void;
}) {
  const { csrf, autosave, readOnly = false } = opts;
  const [values, setValues] = useState<V>(opts.initial);
  // The latest values, updated synchronously: keys typed faster than React renders must see each other's effect.
  const valuesRef = useRef<V>(opts.initial);
  // The values as last saved on the server, for Discard on submitted work.
  const savedValues = useRef<V>(opts.initial);
  const version = useRef(opts.version);
  const [saveState, setSaveStateRaw] = useState<SaveState>(
    opts.updatedAt ? { kind: "saved", at: opts.updatedAt } : { kind: "idle" },
  );
  // The state as a ref too: the navigation blocker and the page-leave handlers read it outside rendering.
  const stateRef = useRef<SaveState>(saveState);
  const setSaveState = useCallback((s: SaveState) => {
    stateRef.current = s;
    setSaveStateRaw(s);
  }, []);
  const [errors, setErrors] = useState<Record<string, string>>({});
  // A draft saved from this page: the item is a draft now, whatever state the page was loaded in.
  const [draftSaved, setDraftSaved] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const draftFetcher = useFetcher<R>();
  const submitFetcher = useFetcher<R>();
  // Changed since the last save was sent; for submitted work that means "not yet saved as a revision".
  const dirty = useRef(false);
  const inFlight = useRef(false);
  const [unsaved, setUnsaved] = useState(false);
  const [tick, setTick] = useState(0);
  const retryTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const attempt = useRef(0);
  // A navigation waits for the flush it triggered; a submission waits for a draft save in flight.
  const leaving = useRef(false);
  const submitAfterDraft = useRef(false);
  // The caller's callbacks as of the latest render, without making every effect depend on them.
  const latest = useRef(opts);
  latest.current = opts;
  // Time on task: every post carries the active time since the previous one (app/work-items/ui/use-active-time.ts).
  const activeTime = useActiveTime();

  const update = useCallback(
    (patch: Partial<V>) => {
      if (readOnly) return;
      const apply = latest.current.apply ?? ((v: V, p: Partial<V>) => ({ ...v, ...p }));
      valuesRef.current = apply(valuesRef.current, patch);
      setValues(valuesRef.current);
      dirty.current = true;
      setUnsaved(true);
      const k = stateRef.current.kind;
      if (latest.current.autosave && (k === "idle" || k === "saved" || k === "failed"))
        setSaveState({ kind: "unsaved" });
      setErrors((e) => {
        const next = { ...e };
        for (const k of Object.keys(patch)) delete next[k];
        return next;
      });
    },
    [readOnly, setSaveState],
  );

  const post = useCallback(
    (intent: "draft" | "submit") => ({
      intent,
      version: String(version.current),
      values: JSON.stringify(valuesRef.current),
      csrf,
      // Active time since the last post (docs/architecture.md, "Time on task").
      activeMs: String(activeTime.take()),
    }),
    [csrf, activeTime],
  );

  /** Sends the pending changes now (no-op when there are none, one is in flight, or a conflict stops saving). */
  const saveNow = useCallback(() => {
    if (!latest.current.autosave || readOnly || !dirty.current || inFlight.current) return;
    if (stateRef.current.kind === "conflict") return;
    if (retryTimer.current) clearTimeout(retryTimer.current);
    retryTimer.current = null;
    dirty.current = false;
    inFlight.current = true;
    setSaveState({ kind: "saving" });
    draftFetcher.submit(post("draft"), { method: "post" });
  }, [readOnly, draftFetcher, post, setSaveState]);

  // Autosave: shortly after the last change, unless a save is in flight, waiting to retry, or stopped.
  useEffect(() => {
    if (!autosave || !dirty.current || inFlight.current || retryTimer.current) return;
    const k = stateRef.current.kind;
    if (k === "conflict") return;
    const timer = setTimeout(saveNow, AUTOSAVE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [values, autosave, tick, saveNow]);

  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) => currentLocation.pathname !== nextLocation.pathname && pending(),
  );
  const blockerRef = useRef(blocker);
  blockerRef.current = blocker;

  /** Whether leaving now could lose something: changes not saved yet, a save in flight, retrying, refused. */
  function pending(): boolean {
    if (readOnly) return false;
    const k = stateRef.current.kind;
    if (!latest.current.autosave) return dirty.current;
    return dirty.current || inFlight.current || k === "retrying" || k === "conflict" || k === "failed";
  }

  useEffect(() => {
    const r = draftFetcher.data as R | undefined;
    if (!r || draftFetcher.state !== "idle" || !inFlight.current) return;
    inFlight.current = false;
    if (r.ok) {
      version.current = r.version;
      savedValues.current = valuesRef.current;
      attempt.current = 0;
      setDraftSaved(true);
      setSaveState(dirty.current ? { kind: "unsaved" } : { kind: "saved", at: r.savedAt });
      if (!dirty.current) setUnsaved(false);
      if (submitAfterDraft.current) {
        submitAfterDraft.current = false;
        submitFetcher.submit(post("submit"), { method: "post" });
      } else if (leaving.current && blockerRef.current.state === "blocked") {
        if (dirty.current) saveNow();
        else {
          leaving.current = false;
          blockerRef.current.proceed();
        }
      }
      setTick((t) => t + 1);
      return;
    }
    submitAfterDraft.current = false;
    // The values were not stored: they are still to be saved.
    dirty.current = true;
    if (r.status === 409) setSaveState({ kind: "conflict", message: r.message });
    else if (retryable(r.status)) {
      const delay = Math.max(
        (r.retryAfter ?? 0) * 1000,
        RETRY_DELAYS_MS[Math.min(attempt.current, RETRY_DELAYS_MS.length - 1)]!,
      );
      attempt.current += 1;
      setSaveState({ kind: "retrying", message: r.message, attempt: attempt.current });
      retryTimer.current = setTimeout(() => {
        retryTimer.current = null;
        saveNow();
      }, delay);
    } else {
      setSaveState({ kind: "failed", message: r.message });
      if (r.errors) setErrors(r.errors);
    }
    if (leaving.current && blockerRef.current.state === "blocked") {
      leaving.current = false;
      blockerRef.current.reset();
      setMessage("Not moved on: this page's changes are not saved yet (see below). Nothing was lost.");
    }
  }, [draftFetcher.data, draftFetcher.state]); // eslint-disable-line react-hooks/exhaustive-deps

  // A navigation inside the app (N, links, the list) first saves the pending changes, then goes on; what cannot be
  // saved (a conflict, a refusal, an unsaved revision) is left only when the user confirms.
  useEffect(() => {
    if (blocker.state !== "blocked" || leaving.current) return;
    const k = stateRef.current.kind;
    const unsavable = !latest.current.autosave || k === "conflict" || k === "failed";
    if (unsavable) {
      const question = !latest.current.autosave
        ? "You changed this submitted work but did not save the revision. Leave and discard the changes?"
        : "Your latest changes could not be saved. Leave this page and lose them?";
      if (window.confirm(question)) blocker.proceed();
      else blocker.reset();
      return;
    }
    leaving.current = true;
    if (!inFlight.current) {
      if (dirty.current) saveNow();
      else {
        leaving.current = false;
        blocker.proceed();
      }
    }
  }, [blocker, saveNow]);

  // Leaving the page itself (reload, closing the tab, a plain link): the pending changes go out at once with fetch
  // keepalive (it survives the page), and the browser asks before leaving while anything could be lost.
  useEffect(() => {
    const sendNow = () => {
      if (!latest.current.autosave || readOnly || !dirty.current || stateRef.current.kind === "conflict") return;
      if (retryTimer.current) clearTimeout(retryTimer.current);
      retryTimer.current = null;
      const body = new FormData();
      for (const [k, v] of Object.entries(post("draft"))) body.set(k, v);
      dirty.current = false;
      inFlight.current = true;
      setSaveState({ kind: "saving" });
      const size = body.get("values")!.toString().length;
      fetch(`${window.location.pathname.replace(/\/$/, "")}.data`, {
        method: "POST",
        body,
        keepalive: size < KEEPALIVE_LIMIT,
        credentials: "same-origin",
      }).then(
        (res) => {
          // Still here (the user chose to stay): take the new version from the answer's headers.
          inFlight.current = false;
          const v = Number(res.headers.get("X-Concord-Version"));
          if (res.ok && v > 0) {
            version.current = v;
            setDraftSaved(true);
            savedValues.current = valuesRef.current;
            setSaveState(
              dirty.current
                ? { kind: "unsaved" }
                : { kind: "saved", at: Number(res.headers.get("X-Concord-Saved-At")) || Date.now() },
            );
          } else {
            dirty.current = true;
            setSaveState(
              res.status === 409
                ? {
                    kind: "conflict",
                    message:
                      "This work was changed in another window or tab: nothing was overwritten, and your input stays in the form to copy before you reload.",
                  }
                : { kind: "retrying", message: "Not saved yet; trying again.", attempt: attempt.current },
            );
          }
          setTick((t) => t + 1);
        },
        () => {
          inFlight.current = false;
          dirty.current = true;
          setTick((t) => t + 1);
        },
      );
    };
    const beforeUnload = (e: BeforeUnloadEvent) => {
      sendNow();
      if (!pending()) return;
      e.preventDefault();
      e.returnValue = "";
    };
    const hidden = () => {
      if (document.visibilityState === "hidden") sendNow();
    };
    window.addEventListener("beforeunload", beforeUnload);
    window.addEventListener("pagehide", sendNow);
    document.addEventListener("visibilitychange", hidden);
    return () => {
      window.removeEventListener("beforeunload", beforeUnload);
      window.removeEventListener("pagehide", sendNow);
      document.removeEventListener("visibilitychange", hidden);
    };
  }, [readOnly, post, setSaveState]); // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(
    () => () => {
      if (retryTimer.current) clearTimeout(retryTimer.current);
    },
    [],
  );

  useEffect(() => {
    const r = submitFetcher.data as R | undefined;
    if (!r || submitFetcher.state !== "idle") return;
    if (r.ok) {
      version.current = r.version;
      savedValues.current = valuesRef.current;
      dirty.current = false;
      setSaveState({ kind: "saved", at: r.savedAt });
      setUnsaved(false);
      latest.current.onSubmitted(r as Extract<R, { ok: true }>);
    } else {
      dirty.current = true;
      // A conflict is said once, in the footer's state, and wins over field errors (they were checked against a
      // version that is no longer the latest); other refusals keep their message above the button.
      if (r.status === 409) {
        setSaveState({ kind: "conflict", message: r.message });
        setMessage(null);
        setErrors({});
      } else {
        setMessage(r.message);
        if (r.errors) setErrors(r.errors);
      }
    }
  }, [submitFetcher.data, submitFetcher.state]); // eslint-disable-line react-hooks/exhaustive-deps

  const submit = useCallback(() => {
    if (readOnly || submitFetcher.state !== "idle" || submitAfterDraft.current) return;
    const current = valuesRef.current;
    const problems = latest.current.check(current);
    if (Object.keys(problems).length) {
      setErrors(problems);
      setMessage(latest.current.incompleteMessage);
      // A revision is not autosaved, so only the server can tell whether another window changed it meanwhile: ask
      // it (it answers 409 before checking the values), so that a conflict replaces these field errors.
      if (!latest.current.autosave && stateRef.current.kind !== "conflict")
        submitFetcher.submit(post("submit"), { method: "post" });
      return;
    }
    setMessage(null);
    dirty.current = false;
    // A draft save in flight would make this submission's version stale: submit once it is answered.
    if (inFlight.current) {
      submitAfterDraft.current = true;
      return;
    }
    if (retryTimer.current) clearTimeout(retryTimer.current);
    retryTimer.current = null;
    submitFetcher.submit(post("submit"), { method: "post" });
  }, [readOnly, submitFetcher, post]);

  /** Submitted work: back to the values as submitted, dropping the changes not saved as a revision. */
  const discard = useCallback(() => {
    valuesRef.current = savedValues.current;
    setValues(savedValues.current);
    dirty.current = false;
    setUnsaved(false);
    setErrors({});
    setMessage(null);
  }, []);

  return {
    values,
    /** The values including changes not rendered yet, for key handlers. */
    valuesRef,
    update,
    saveState,
    errors,
    message,
    submit,
    discard,
    submitting: submitFetcher.state !== "idle" || submitAfterDraft.current,
    autosave,
    /** Submitted work changed on the page but not yet saved as a revision. */
    unsavedRevision: !autosave && unsaved,
    /**
     * Hands over the active time accrued since the last post, for a form the page posts itself (the adjudicator's
     * step) to carry as `activeMs` (docs/statistics.md, "Time on task").
     */
    takeActiveMs: activeTime.take,
    /** A draft was saved from this page (the state badge then says "draft"). */
    draftSaved,
  };
}

/**
 * The item's state as the page should show it now: the loader's state until a draft is saved from the page, which
 * makes a not-started item a draft (the badge beside the title follows the footer's "Saved …").
 */
export function liveWorkState<S extends string>(loaded: S, draft: { draftSaved: boolean }): S | "draft" {
  return loaded === "not_started" && draft.draftSaved ? "draft" : loaded;
}

export function saveStateText(s: SaveState, autosave: boolean, unsavedRevision = false): string {
  // A conflict outranks everything: nothing more can be saved from this page.
  if (s.kind === "conflict") return "Conflict: not saved";
  if (unsavedRevision) return "Revising: changes not saved — Save revision or Discard";
  if (s.kind === "unsaved") return "Unsaved changes…";
  if (s.kind === "saving") return "Saving…";
  // Only ever shown after a save made in the browser, so the reader's locale and zone are known here.
  if (s.kind === "saved") return `Saved ${formatTime(s.at, "seconds")}`;
  if (s.kind === "retrying") return `Not saved yet — retrying (attempt ${s.attempt})`;
  if (s.kind === "failed") return "Not saved";
  return autosave ? "Drafts save automatically" : "";
}
