/**
 * The save cycle of the expert workspaces (option ratings, case reviews), as in the annotation workspace: drafts
 * saved shortly after each change while the work is a draft, an explicit submission (or revision), optimistic
 * concurrency through the version the page read, and messages from the server kept at the fields.
 */
import { useFetcher } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState } from "react";
import type { ExpertWorkState } from "~/core/expert-scales";

export type ExpertSaveResult =
  | { ok: true; version: number; savedAt: number; state: ExpertWorkState }
  | { ok: false; status: number; message: string; errors?: Record<string, string> };

export type SaveState =
  | { kind: "idle" }
  | { kind: "saving" }
  | { kind: "saved"; at: number }
  | { kind: "error"; message: string };

export function useExpertSave<V>(opts: {
  initial: V;
  version: number;
  updatedAt: number | null;
  state: ExpertWorkState;
  csrf: string;
  /** Client-side check before a submission: field errors (empty when fine). */
  check: (values: V) => Record<string, string>;
  onSubmitted: () => void;
}) {
  const [values, setValues] = useState<V>(opts.initial);
  const [version, setVersion] = useState(opts.version);
  const [state, setState] = useState<ExpertWorkState>(opts.state);
  const [saveState, setSaveState] = useState<SaveState>(
    opts.updatedAt ? { kind: "saved", at: opts.updatedAt } : { kind: "idle" },
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | null>(null);
  const draftFetcher = useFetcher<ExpertSaveResult>();
  const submitFetcher = useFetcher<ExpertSaveResult>();
  const dirty = useRef(false);
  // Changes to submitted work are not autosaved: they wait for "Save revision".
  const [unsaved, setUnsaved] = useState(false);

  const update = useCallback((patch: Partial<V>) => {
    setValues((v) => ({ ...v, ...patch }));
    dirty.current = true;
    setUnsaved(true);
    setErrors((e) => {
      const next = { ...e };
      for (const k of Object.keys(patch)) delete next[k];
      return next;
    });
  }, []);

  const autosave = state !== "submitted";
  useEffect(() => {
    if (!autosave || !dirty.current || draftFetcher.state !== "idle") return;
    const timer = setTimeout(() => {
      dirty.current = false;
      setSaveState({ kind: "saving" });
      draftFetcher.submit(
        { intent: "draft", version: String(version), values: JSON.stringify(values), csrf: opts.csrf },
        { method: "post" },
      );
    }, 700);
    return () => clearTimeout(timer);
  }, [values, version, autosave, draftFetcher.state]); // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(() => {
    const r = draftFetcher.data;
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
    const r = submitFetcher.data;
    if (!r || submitFetcher.state !== "idle") return;
    if (r.ok) {
      setVersion(r.version);
      setState(r.state);
      setSaveState({ kind: "saved", at: r.savedAt });
      setUnsaved(false);
      opts.onSubmitted();
    } else {
      setMessage(r.message);
      if (r.errors) setErrors(r.errors);
    }
  }, [submitFetcher.data, submitFetcher.state]); // eslint-disable-line react-hooks/exhaustive-deps

  const submit = useCallback(() => {
    if (submitFetcher.state !== "idle") return;
    const problems = opts.check(values);
    if (Object.keys(problems).length) {
      setErrors(problems);
      setMessage("Some answers are missing; see the marked fields.");
      return;
    }
    setMessage(null);
    dirty.current = false;
    submitFetcher.submit(
      { intent: "submit", version: String(version), values: JSON.stringify(values), csrf: opts.csrf },
      { method: "post" },
    );
  }, [submitFetcher, values, version, opts]);

  return {
    values,
    update,
    version,
    state,
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

/** True when the key event comes from a field where letters and digits are typed. */
export function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return Boolean(
    el?.closest("input[type=text], input[type=search], input[type=number], textarea, select, [contenteditable]"),
  );
}

export function saveStateText(s: SaveState, autosave: boolean, unsavedRevision = false): string {
  if (unsavedRevision) return "Changed: save the revision to keep it";
  if (s.kind === "saving") return "Saving…";
  if (s.kind === "saved") return `Saved ${new Date(s.at).toLocaleTimeString()}`;
  if (s.kind === "error") return "";
  return autosave ? "Drafts save automatically" : "";
}
