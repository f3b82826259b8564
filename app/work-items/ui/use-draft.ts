/**
 * The save cycle of every workspace (annotation, response rating, screening vote, option rating, case review):
 * drafts saved on the server shortly after each change while the work is a draft (docs/architecture.md, "The work-item engine"), an explicit submission
 * (or revision), optimistic concurrency through the version the page read, and the server's messages kept at the
 * fields. The route's action reads what this posts with parseDraftPost (app/platform/forms.ts).
 */
import { useFetcher } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState } from "react";
import { useActiveTime } from "./use-active-time";

/** What a workspace's action answers: every save service returns this shape (with more on success for some). */
export type DraftResult =
  | { ok: true; version: number; savedAt: number; state: string }
  | { ok: false; status: number; message: string; errors?: Record<string, string> };

export type SaveState =
  | { kind: "idle" }
  | { kind: "saving" }
  | { kind: "saved"; at: number }
  | { kind: "error"; message: string };

const AUTOSAVE_DELAY_MS = 700;

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
  const [version, setVersion] = useState(opts.version);
  const [saveState, setSaveState] = useState<SaveState>(
    opts.updatedAt ? { kind: "saved", at: opts.updatedAt } : { kind: "idle" },
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | null>(null);
  const draftFetcher = useFetcher<R>();
  const submitFetcher = useFetcher<R>();
  const dirty = useRef(false);
  // Changed since the last save; for submitted work that means "not yet saved as a revision".
  const [unsaved, setUnsaved] = useState(false);
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
      setErrors((e) => {
        const next = { ...e };
        for (const k of Object.keys(patch)) delete next[k];
        return next;
      });
    },
    [readOnly],
  );

  useEffect(() => {
    if (!autosave || !dirty.current || draftFetcher.state !== "idle") return;
    const timer = setTimeout(() => {
      dirty.current = false;
      setSaveState({ kind: "saving" });
      draftFetcher.submit(
        {
          intent: "draft",
          version: String(version),
          values: JSON.stringify(values),
          csrf,
          activeMs: String(activeTime.take()),
        },
        { method: "post" },
      );
    }, AUTOSAVE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [values, version, autosave, draftFetcher.state]); // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(() => {
    const r = draftFetcher.data as R | undefined;
    if (!r || draftFetcher.state !== "idle") return;
    if (r.ok) {
      setVersion(r.version);
      setSaveState({ kind: "saved", at: r.savedAt });
    } else {
      dirty.current = false;
      setSaveState({ kind: "error", message: r.message });
    }
  }, [draftFetcher.data, draftFetcher.state]);

  useEffect(() => {
    const r = submitFetcher.data as R | undefined;
    if (!r || submitFetcher.state !== "idle") return;
    if (r.ok) {
      setVersion(r.version);
      setSaveState({ kind: "saved", at: r.savedAt });
      setUnsaved(false);
      latest.current.onSubmitted(r as Extract<R, { ok: true }>);
    } else {
      setMessage(r.message);
      if (r.errors) setErrors(r.errors);
    }
  }, [submitFetcher.data, submitFetcher.state]);

  const submit = useCallback(() => {
    if (readOnly || submitFetcher.state !== "idle") return;
    const current = valuesRef.current;
    const problems = latest.current.check(current);
    if (Object.keys(problems).length) {
      setErrors(problems);
      setMessage(latest.current.incompleteMessage);
      return;
    }
    setMessage(null);
    dirty.current = false;
    submitFetcher.submit(
      {
        intent: "submit",
        version: String(version),
        values: JSON.stringify(current),
        csrf,
        activeMs: String(activeTime.take()),
      },
      { method: "post" },
    );
  }, [readOnly, submitFetcher, version, csrf, activeTime]);

  return {
    values,
    /** The values including changes not rendered yet, for key handlers. */
    valuesRef,
    update,
    saveState,
    errors,
    message,
    submit,
    submitting: submitFetcher.state !== "idle",
    autosave,
    /** Submitted work changed on the page but not yet saved as a revision. */
    unsavedRevision: !autosave && unsaved,
  };
}

export function saveStateText(s: SaveState, autosave: boolean, unsavedRevision = false): string {
  if (unsavedRevision) return "Changed: save the revision to keep it";
  if (s.kind === "saving") return "Saving…";
  if (s.kind === "saved") return `Saved ${new Date(s.at).toLocaleTimeString()}`;
  if (s.kind === "error") return "";
  return autosave ? "Drafts save automatically" : "";
}
