/**
 * The effects at the edge of the save-state machine (app/work-items/domain/save-state.ts; docs/architecture.md,
 * "The save-state machine"): this hook turns the page's world into the machine's events — a change, the timer, a
 * fetcher's answer, a blocked navigation, the page hidden or left — and performs the effects the machine returns.
 * It holds no rule of its own. Every post carries the version the machine holds and the active time since the
 * previous post; every answer's version reaches the machine here (from the answer's data, or from the response
 * headers of a request sent as the page is left, or — headers lost — from the engine's "every save adds 1"), so no
 * workspace route handles versions or headers itself. The route's action reads what this posts with
 * parseDraftPost (app/platform/forms.ts).
 */
import { useBlocker, useFetcher } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState } from "react";
import {
  initialSaveState,
  pendingWork,
  saveTransition,
  submitting,
  type DraftResult,
  type Errors,
  type SaveEffect,
  type SaveEvent,
  type SaveMachine,
  type SaveMode,
} from "../domain/save-state";
import { useActiveTime } from "./use-active-time";

/** fetch keepalive refuses bodies over 64 KiB; a longer draft is sent as a plain request. */
const KEEPALIVE_LIMIT = 60_000;

export interface SaveStateOptions<V, R extends DraftResult> {
  initial: V;
  /** The version the page read (0 before the first save). */
  version: number;
  updatedAt: number | null;
  csrf: string;
  /** draft: changes are saved as drafts; revision: submitted work; readOnly: work that can no longer change. */
  mode: SaveMode;
  /** How a change applies to the values; by default it is merged in. */
  apply?: (values: V, patch: Partial<V>) => V;
  /** The server's rules checked before a submission, so mistakes show at once: field errors, empty when fine. */
  check: (values: V) => Errors;
  /** The message above the fields when `check` finds problems. */
  incompleteMessage: string;
  onSubmitted: (result: Extract<R, { ok: true }>) => void;
  /**
   * Fields sent with every post besides the values and their version (adjudication: the step and the case outcome's
   * version the step is checked against).
   */
  post?: Record<string, string>;
}

export interface SaveState<V> {
  machine: SaveMachine<V>;
  values: V;
  /** The values including changes not rendered yet, for key handlers (keys typed faster than React renders). */
  latest: () => V;
  update: (patch: Partial<V>) => void;
  errors: Errors;
  message: string | null;
  submit: () => void;
  /** Submitted work: back to the values as submitted. */
  discard: () => void;
  submitting: boolean;
  /** Hands over the active time since the last post, for a form the page posts itself (docs/statistics.md). */
  takeActiveMs: () => number;
}

export function useSaveState<V extends object, R extends DraftResult = DraftResult>(
  opts: SaveStateOptions<V, R>,
): SaveState<V> {
  const [state, setState] = useState<SaveMachine<V>>(() =>
    initialSaveState({ values: opts.initial, version: opts.version, updatedAt: opts.updatedAt, mode: opts.mode }),
  );
  // The machine's state, updated synchronously: the navigation blocker, the page-leave handlers and keys typed
  // faster than React renders read it between renders.
  const machine = useRef(state);
  // The caller's options as of the latest render, read by the effects without making them depend on each render.
  const latest = useRef(opts);
  latest.current = opts;
  const draftFetcher = useFetcher<R>();
  const submitFetcher = useFetcher<R>();
  const activeTime = useActiveTime();
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) =>
      currentLocation.pathname !== nextLocation.pathname && pendingWork(machine.current),
  );
  const blockerRef = useRef(blocker);
  blockerRef.current = blocker;

  // The effects' performer, rebuilt each render with the latest fetchers; dispatch reads it through the ref.
  const perform = useRef<(effects: SaveEffect<V>[], dispatch: (e: SaveEvent<V>) => void) => void>(() => {});
  perform.current = (effects, dispatch) => {
    for (const fx of effects) {
      switch (fx.type) {
        case "send": {
          const fetcher = fx.intent === "draft" ? draftFetcher : submitFetcher;
          fetcher.submit(
            postOf(fx.intent, fx.values, fx.version, latest.current.csrf, activeTime.take(), latest.current.post),
            { method: "post" },
          );
          break;
        }
        case "beacon":
          sendBeacon(
            postOf("draft", fx.values, fx.version, latest.current.csrf, activeTime.take(), latest.current.post),
            dispatch,
          );
          break;
        case "wait":
          if (timer.current) clearTimeout(timer.current);
          timer.current = setTimeout(() => {
            timer.current = null;
            dispatch({ type: "timer" });
          }, fx.ms);
          break;
        case "stopTimer":
          if (timer.current) clearTimeout(timer.current);
          timer.current = null;
          break;
        case "proceed":
          if (blockerRef.current.state === "blocked") blockerRef.current.proceed();
          break;
        case "stay":
          if (blockerRef.current.state === "blocked") blockerRef.current.reset();
          break;
        case "askLeave":
          if (blockerRef.current.state !== "blocked") break;
          if (window.confirm(fx.question)) blockerRef.current.proceed();
          else blockerRef.current.reset();
          break;
        case "submitted":
          latest.current.onSubmitted(fx.result as Extract<R, { ok: true }>);
          break;
      }
    }
  };

  const dispatch = useCallback((e: SaveEvent<V>) => {
    const step = saveTransition(machine.current, e);
    machine.current = step.state;
    setState(step.state);
    perform.current(step.effects, dispatch);
  }, []);

  // The work's mode follows the page (submitted work becomes a revision, a closed round read-only).
  const { mode } = opts;
  useEffect(() => dispatch({ type: "mode", mode }), [mode, dispatch]);

  // Each fetcher's answer, once.
  const answered = useRef<{ draft?: unknown; submit?: unknown }>({});
  useEffect(() => {
    const r = draftFetcher.data;
    if (draftFetcher.state !== "idle" || r === undefined || answered.current.draft === r) return;
    answered.current.draft = r;
    dispatch({ type: "answer", intent: "draft", result: r });
  }, [draftFetcher.state, draftFetcher.data, dispatch]);
  useEffect(() => {
    const r = submitFetcher.data;
    if (submitFetcher.state !== "idle" || r === undefined || answered.current.submit === r) return;
    answered.current.submit = r;
    dispatch({ type: "answer", intent: "submit", result: r });
  }, [submitFetcher.state, submitFetcher.data, dispatch]);

  // A navigation inside the app (J, links, the list) first saves the pending change, then goes on.
  useEffect(() => {
    if (blocker.state === "blocked") dispatch({ type: "leave" });
  }, [blocker.state, dispatch]);

  // Leaving the page itself (reload, closing the tab, hiding it): the pending change goes out at once with fetch
  // keepalive, and the browser asks before leaving while anything could be lost.
  useEffect(() => {
    const hidden = () => dispatch({ type: "pageHidden" });
    const beforeUnload = (e: BeforeUnloadEvent) => {
      hidden();
      if (!pendingWork(machine.current)) return;
      e.preventDefault();
      e.returnValue = "";
    };
    const visibility = () => {
      if (document.visibilityState === "hidden") hidden();
    };
    window.addEventListener("beforeunload", beforeUnload);
    window.addEventListener("pagehide", hidden);
    document.addEventListener("visibilitychange", visibility);
    return () => {
      window.removeEventListener("beforeunload", beforeUnload);
      window.removeEventListener("pagehide", hidden);
      document.removeEventListener("visibilitychange", visibility);
    };
  }, [dispatch]);

  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );

  const update = useCallback(
    (patch: Partial<V>) => {
      const apply = latest.current.apply ?? ((v: V, p: Partial<V>) => ({ ...v, ...p }));
      dispatch({ type: "change", values: apply(machine.current.values, patch), fields: Object.keys(patch) });
    },
    [dispatch],
  );
  const submit = useCallback(() => {
    const { check, incompleteMessage } = latest.current;
    dispatch({ type: "submit", problems: check(machine.current.values), incompleteMessage });
  }, [dispatch]);
  const discard = useCallback(() => dispatch({ type: "discard" }), [dispatch]);
  const current = useCallback(() => machine.current.values, []);

  return {
    machine: state,
    values: state.values,
    latest: current,
    update,
    errors: state.errors,
    message: state.message,
    submit,
    discard,
    submitting: submitting(state),
    takeActiveMs: activeTime.take,
  };
}

function postOf(
  intent: "draft" | "submit",
  values: unknown,
  version: number,
  csrf: string,
  activeMs: number,
  extra: Record<string, string> = {},
) {
  // Active time since the last post (docs/architecture.md, "Time on task").
  return {
    ...extra,
    intent,
    version: String(version),
    values: JSON.stringify(values),
    csrf,
    activeMs: String(activeMs),
  };
}

/** The draft as the page is left: one request that outlives the page; its answer's headers carry the new version. */
function sendBeacon<V>(post: Record<string, string>, dispatch: (e: SaveEvent<V>) => void) {
  const body = new FormData();
  for (const [k, v] of Object.entries(post)) body.set(k, v);
  fetch(`${window.location.pathname.replace(/\/$/, "")}.data`, {
    method: "POST",
    body,
    keepalive: post.values!.length < KEEPALIVE_LIMIT,
    credentials: "same-origin",
  }).then(
    (res) => {
      const version = Number(res.headers.get("X-Concord-Version"));
      const savedAt = Number(res.headers.get("X-Concord-Saved-At"));
      dispatch({
        type: "beaconAnswer",
        status: res.status,
        version: version > 0 ? version : null,
        savedAt: savedAt > 0 ? savedAt : null,
        now: Date.now(),
      });
    },
    () => dispatch({ type: "beaconAnswer", status: 0, version: null, savedAt: null, now: Date.now() }),
  );
}
