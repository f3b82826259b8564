import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from "react";
import type { GuidelinesView } from "~/guidelines/domain/guidelines";
import { useRootData } from "~/ui/root-data";

/** Whether a key press belongs to a text field (typing `?` in a note must not open the panel). */
function inTextField(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag !== "INPUT") return false;
  const type = (target as HTMLInputElement).type;
  return !["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"].includes(type);
}

/**
 * Opens and closes the guidelines with `?` pressed outside a text field. Exported so a page-wide keymap can reuse
 * the same rule; the panel uses it unless `keyHandled` says the page binds `?` itself.
 */
export function useGuidelinesKey(toggle: () => void, enabled = true): void {
  useEffect(() => {
    if (!enabled) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "?" || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented || inTextField(e.target)) return;
      e.preventDefault();
      toggle();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [toggle, enabled]);
}

const seenKey = (user: string, g: GuidelinesView) => `concord:guidelines-seen:${user}:${g.scope}:${g.scopeId}`;

/**
 * The study's guidelines and codebook in a workspace (docs/guidelines.md): a button and a panel, opened with `?`
 * and, automatically, on the user's first visit to the study's workspace — and again once after the admin publishes
 * a new version. The panel is part of the page (not a modal), so it never blocks the form. `children` are extra
 * notes shown above the text (e.g. a screening study's inclusion criterion).
 */
export function GuidelinesPanel({
  guidelines,
  keyHandled = false,
  children,
}: {
  guidelines: GuidelinesView | null;
  /** True when the page's own keymap toggles the panel (then pass `open`/`onToggle` yourself). */
  keyHandled?: boolean;
  children?: ReactNode;
}) {
  const [open, setOpen] = useState(false);
  const user = useRootData()?.user?.username ?? "";
  const headingId = useId();
  const panelId = useId();
  const panelRef = useRef<HTMLElement>(null);
  const toggle = useCallback(() => setOpen((o) => !o), []);
  useGuidelinesKey(toggle, !keyHandled);

  // Esc closes the open panel from anywhere on the page; in a text field it first leaves the field (the workspace's
  // keys), and the next Esc closes the panel.
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || e.defaultPrevented || inTextField(e.target)) return;
      setOpen(false);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [open]);

  useEffect(() => {
    if (!guidelines || !user) return;
    try {
      const key = seenKey(user, guidelines);
      const seen = Number(window.localStorage.getItem(key) ?? "0");
      if (seen < guidelines.version) {
        setOpen(true);
        window.localStorage.setItem(key, String(guidelines.version));
      }
    } catch {
      // Storage refused (private mode, quota): the panel simply stays closed; `?` still opens it.
    }
  }, [guidelines, user]);

  return (
    <>
      <button
        type="button"
        className="secondary guidelines-toggle"
        aria-expanded={open}
        onClick={toggle}
        data-testid="guidelines-toggle"
      >
        Guidelines <kbd>?</kbd>
      </button>
      <section
        id={panelId}
        ref={panelRef}
        className="card guidelines-panel"
        aria-labelledby={headingId}
        hidden={!open}
        data-testid="guidelines-panel"
      >
        <div className="row">
          <h2 id={headingId} style={{ margin: 0 }}>
            Guidelines
            {guidelines ? <small className="muted"> · version {guidelines.version}</small> : null}
          </h2>
          <span className="spacer" />
          <button type="button" className="secondary" onClick={() => setOpen(false)}>
            Close
          </button>
        </div>
        {children}
        {guidelines ? (
          // Rendered on the server from Markdown with raw HTML disabled (app/guidelines/domain/guidelines.ts).
          <div className="guidelines-text" dangerouslySetInnerHTML={{ __html: guidelines.html }} />
        ) : (
          <p className="muted">The admin has not written guidelines for this study yet.</p>
        )}
      </section>
    </>
  );
}
