/**
 * Keyboard shortcuts of the workspaces and of their lists. Single keys act only outside text fields, so that typing
 * never triggers them.
 */
import { useNavigate } from "@remix-run/react";
import { useEffect, useRef, type RefObject } from "react";

/** True when the key event comes from a field where letters and digits are typed. */
export function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return Boolean(
    el?.closest("input[type=text], input[type=search], input[type=number], textarea, select, [contenteditable]"),
  );
}

/**
 * A workspace's keys. Ctrl+Enter (⌘+Enter) submits from anywhere. Other keys without a modifier, outside text
 * fields, go to `onKey` in lower case; it returns whether it used the key, and then the key's default is prevented.
 * With `leaveFieldTo`, Esc in a text field moves the focus there, so that the single keys work again.
 */
export function useWorkspaceKeys(
  submit: () => void,
  onKey: (key: string, e: KeyboardEvent) => boolean,
  opts: { leaveFieldTo?: RefObject<HTMLElement> } = {},
) {
  // The handlers of the latest render, so that the listener is added once.
  const latest = useRef({ submit, onKey, leaveFieldTo: opts.leaveFieldTo });
  latest.current = { submit, onKey, leaveFieldTo: opts.leaveFieldTo };
  useEffect(() => {
    const listener = (e: KeyboardEvent) => {
      const { submit, onKey, leaveFieldTo } = latest.current;
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        submit();
        return;
      }
      if (leaveFieldTo && e.key === "Escape" && isTyping(e.target)) {
        leaveFieldTo.current?.focus();
        return;
      }
      if (isTyping(e.target) || e.altKey || e.ctrlKey || e.metaKey) return;
      if (onKey(e.key.toLowerCase(), e)) e.preventDefault();
    };
    window.addEventListener("keydown", listener);
    return () => window.removeEventListener("keydown", listener);
  }, []);
}

/** A list page's key for its "next" button (`key` in lower case): goes to `to`, unless the focus is in a form field. */
export function useNextKey(key: string, to: string | null) {
  const navigate = useNavigate();
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).closest("input, textarea, select")) return;
      if (e.key.toLowerCase() === key && to !== null) navigate(to);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [key, to, navigate]);
}
