/**
 * Keyboard shortcuts of the workspaces and of their lists, as the one keymap says (app/work-items/domain/keymap.ts,
 * docs/architecture.md, "Keymap"). Single keys act only outside text fields, so that typing never triggers them.
 */
import { useNavigate } from "@remix-run/react";
import { useEffect, useRef, type RefObject } from "react";
import { commonKeyOf, COMMON_KEYS, GUIDELINES_EVENT, HELP_PATH } from "../domain/keymap";

/** True when the key event comes from a field where letters and digits are typed. */
export function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return Boolean(
    el?.closest("input[type=text], input[type=search], input[type=number], textarea, select, [contenteditable]"),
  );
}

/** Where the shared keys lead from one workspace: the next and previous item (null: none), what `/` focuses. */
export interface WorkspaceNav {
  next: string | null;
  previous?: string | null;
  search?: () => void;
}

/**
 * A workspace's keys. Ctrl+Enter (⌘+Enter) submits from anywhere. The keys every workspace shares (next, previous,
 * search, guidelines, help) act as the keymap says; other keys without a modifier, outside text fields, go to
 * `onKey` in lower case; it returns whether it used the key, and then the key's default is prevented. Esc in a text
 * field leaves it in every workspace, so that the single keys work again: the focus moves to `leaveFieldTo` when
 * given (the form, so Tab goes on from there), else the field just loses it. A widget that uses Esc itself (the code
 * picker going back from a category to its results) stops the key before it reaches this listener.
 */
export function useWorkspaceKeys(
  submit: () => void,
  onKey: (key: string, e: KeyboardEvent) => boolean,
  opts: { leaveFieldTo?: RefObject<HTMLElement>; nav?: WorkspaceNav } = {},
) {
  const navigate = useNavigate();
  // The handlers of the latest render, so that the listener is added once.
  const latest = useRef({ submit, onKey, opts, navigate });
  latest.current = { submit, onKey, opts, navigate };
  useEffect(() => {
    const listener = (e: KeyboardEvent) => {
      const { submit, onKey, opts, navigate } = latest.current;
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        submit();
        return;
      }
      if (e.key === "Escape" && isTyping(e.target)) {
        const to = opts.leaveFieldTo?.current;
        if (to) to.focus();
        else (e.target as HTMLElement).blur();
        return;
      }
      if (isTyping(e.target) || e.altKey || e.ctrlKey || e.metaKey) return;
      const key = e.key.toLowerCase();
      const common = commonKeyOf(key);
      const nav = opts.nav;
      if (common === "guidelines") {
        e.preventDefault();
        openGuidelines();
        return;
      }
      if (common === "help") {
        e.preventDefault();
        navigate(HELP_PATH);
        return;
      }
      if (common === "next" || common === "previous") {
        // The key is reserved everywhere, also where there is no such item: it never records anything.
        e.preventDefault();
        const to = nav?.[common];
        if (to) navigate(to);
        return;
      }
      if (common === "search" && nav?.search) {
        e.preventDefault();
        nav.search();
        return;
      }
      if (onKey(key, e)) e.preventDefault();
    };
    window.addEventListener("keydown", listener);
    return () => window.removeEventListener("keydown", listener);
  }, []);
}

/** Asks the guidelines panel to open (the `?` key does this in every workspace). */
export function openGuidelines() {
  window.dispatchEvent(new CustomEvent(GUIDELINES_EVENT));
}

/**
 * A list page's keys: the keymap's "next" key goes to `to` (its "next" button), H to the help page, unless the focus
 * is in a form field or a modifier is held.
 */
export function useNextKey(to: string | null) {
  const navigate = useNavigate();
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).closest("input, textarea, select") || e.altKey || e.ctrlKey || e.metaKey) return;
      const key = commonKeyOf(e.key.toLowerCase());
      if (key === "next" && to !== null) navigate(to);
      else if (key === "help") navigate(HELP_PATH);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [to, navigate]);
}

/** The key cap of the keymap's "next" key, for buttons. */
export const NEXT_KEY = COMMON_KEYS.next.show;
