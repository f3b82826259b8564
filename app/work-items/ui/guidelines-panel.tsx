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

/** The guidelines versions this page session has already asked about (each is asked once, not on every item). */
const asked = new Set<string>();

/**
 * Records on the server that this person has been shown this guidelines version (app/routes/guidelines.seen.ts;
 * stored per person, so any browser counts), once per page session. A plain fetch, not a Remix fetcher: the answer
 * must not reload the workspace's data. A failed request is tried again on the next page.
 */
async function recordSeen(g: Omit<GuidelinesView, "html">, csrf: string): Promise<void> {
  const key = `${g.scope}:${g.scopeId}:${g.version}`;
  if (asked.has(key)) return;
  asked.add(key);
  try {
    const body = new FormData();
    body.set("csrf", csrf);
    body.set("scope", g.scope);
    body.set("scopeId", String(g.scopeId));
    body.set("version", String(g.version));
    const response = await fetch("/guidelines/seen", { method: "POST", body, credentials: "same-origin" });
    if (!response.ok) asked.delete(key);
  } catch {
    asked.delete(key);
  }
}

/**
 * The study's guidelines and codebook in a workspace (docs/guidelines.md): a button and a panel, opened with `?`
 * and, automatically, on the person's first visit to the study's workspace — and again once after the admin
 * publishes a new version — as the server records it per person (`firstVisit`), on any browser. The panel is part of the page (not a modal), so it never blocks the form. `children` are extra
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
  // Open from the first render on a person's first visit (the loader says so), so the server's page shows it too.
  const [open, setOpen] = useState(guidelines?.firstVisit === true);
  const csrf = useRootData()?.user?.csrf ?? "";
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

  // A first visit is recorded once the page is in the browser (the loader only reads). Keyed by the version, not
  // the loader's object, which is new on every revalidation.
  const scope = guidelines?.scope;
  const scopeId = guidelines?.scopeId;
  const version = guidelines?.version;
  const first = guidelines?.firstVisit === true;
  useEffect(() => {
    if (!first || scope === undefined || scopeId === undefined || version === undefined || !csrf) return;
    void recordSeen({ scope, scopeId, version }, csrf);
  }, [first, scope, scopeId, version, csrf]);

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
