/**
 * ICD-10 code picker: type a code or words, arrows to move, Enter to choose, Esc to leave. Searches the WHO chapter V
 * table and the synonym table in the browser (app/icd10/icd10-search.ts, docs/icd10.md#search), so every keystroke
 * answers at once. Choosing a category that has subcategories asks for confirmation and lists them
 * (docs/icd10.md#choosing-a-category). The server validates the chosen code again.
 */
import { forwardRef, useEffect, useId, useMemo, useState } from "react";
import { createIcd10Index, type Icd10Entry, type Icd10Index, type Icd10TableRow } from "~/icd10/icd10";
import { createIcd10Search, type Icd10Hit, type Icd10Search, type Icd10Synonym } from "~/icd10/icd10-search";

interface Loaded {
  index: Icd10Index;
  search: Icd10Search;
}

let cached: Promise<Loaded> | null = null;
function loadIndex(): Promise<Loaded> {
  cached ??= fetch("/icd10.json", { credentials: "same-origin" })
    .then((r) => {
      if (!r.ok) throw new Error(`ICD-10 list: HTTP ${r.status}`);
      return r.json() as Promise<{ rows: Icd10TableRow[]; synonyms: Icd10Synonym[] } | Icd10TableRow[]>;
    })
    .then((body) => {
      // A browser may still hold the older answer (the table alone) in its cache.
      const { rows, synonyms } = Array.isArray(body) ? { rows: body, synonyms: [] } : body;
      const index = createIcd10Index(rows);
      return { index, search: createIcd10Search(index, synonyms) };
    })
    .catch((e) => {
      cached = null;
      throw e;
    });
  return cached;
}

const asHit = (entry: Icd10Entry): Icd10Hit => ({ entry, kind: "code-prefix", synonym: null, subcategories: 0 });

export const Icd10Picker = forwardRef<
  HTMLInputElement,
  { value: string; onChange: (code: string) => void; disabled?: boolean; error?: string; onDone?: () => void }
>(function Icd10Picker({ value, onChange, disabled, error, onDone }, ref) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const [open, setOpen] = useState(false);
  /** A category with subcategories chosen once: Enter again records it, or pick one of its subcategories. */
  const [pending, setPending] = useState<Icd10Hit | null>(null);
  const listId = useId();
  const noticeId = useId();
  useEffect(() => {
    loadIndex().then(setLoaded, (e) => setLoadError(String(e.message ?? e)));
  }, []);
  const found = useMemo(() => (loaded && query.trim() ? loaded.search.search(query, 12) : []), [loaded, query]);
  const results = useMemo(
    () => (pending && loaded ? [pending, ...loaded.search.subcategoriesOf(pending.entry.code).map(asHit)] : found),
    [pending, loaded, found],
  );
  const chosen = loaded && value ? loaded.index.lookup(value) : null;
  const noMatches = open && loaded !== null && query.trim() !== "" && !pending && found.length === 0;

  function record(code: string) {
    onChange(code);
    setQuery("");
    setOpen(false);
    setPending(null);
    onDone?.();
  }

  function choose(hit: Icd10Hit) {
    if (hit.entry.level === "category" && hit.subcategories > 0 && pending?.entry.code !== hit.entry.code) {
      setPending(hit);
      setActive(0);
      setOpen(true);
      return;
    }
    record(hit.entry.code);
  }

  return (
    <div className="icd10-picker">
      <div className="row" aria-live="polite">
        {value ? (
          <span data-testid="chosen-code">
            <code>{value}</code>{" "}
            {chosen ? chosen.title : loaded ? <span className="error">not in WHO ICD-10 chapter V</span> : null}
          </span>
        ) : (
          <span className="muted">No code chosen</span>
        )}
      </div>
      {/* Locked or read-only work: the chosen code only, no search box that looks usable. */}
      {disabled ? null : (
        <input
          ref={ref}
          id="icd10-search"
          type="search"
          role="combobox"
          aria-expanded={open && results.length > 0}
          aria-controls={listId}
          aria-describedby={pending || noMatches ? noticeId : undefined}
          aria-activedescendant={open && results[active] ? `${listId}-${active}` : undefined}
          aria-label="Search ICD-10 code by code or words"
          placeholder="Search code or words, e.g. F32.1, depression, PTSD"
          autoComplete="off"
          disabled={disabled}
          value={query}
          onChange={(e) => {
            setQuery(e.target.value);
            setActive(0);
            setOpen(true);
            setPending(null);
          }}
          onKeyDown={(e) => {
            if (e.key === "ArrowDown") {
              e.preventDefault();
              setActive((a) => Math.min(a + 1, Math.max(results.length - 1, 0)));
            } else if (e.key === "ArrowUp") {
              e.preventDefault();
              setActive((a) => Math.max(a - 1, 0));
            } else if (e.key === "Enter" && !e.ctrlKey && !e.metaKey) {
              e.preventDefault();
              if (results[active]) choose(results[active]!);
              // A typed code that is not in the list is still passed on, so the server can say why it is refused.
              else if (query.trim()) record(query.trim().toUpperCase());
            } else if (e.key === "Escape") {
              if (pending) {
                // First Esc goes back to the results (not clearing the search field); the next one leaves.
                e.preventDefault();
                e.stopPropagation();
                setPending(null);
                setActive(0);
                return;
              }
              setQuery("");
              setOpen(false);
              onDone?.();
            }
          }}
          style={{ width: "100%" }}
        />
      )}
      {loadError ? (
        <p className="field-error">The code list could not be loaded ({loadError}). Type the code and press Enter.</p>
      ) : null}
      {pending ? (
        <div className="picker-confirm" id={noticeId} role="status" data-testid="icd10-confirm">
          <p>
            <code>{pending.entry.code}</code> {pending.entry.title} is a category with {pending.subcategories}{" "}
            subcategories. Press <kbd>Enter</kbd> again to record the category itself, or choose a subcategory below (
            <kbd>Esc</kbd> goes back).
          </p>
          <button type="button" onClick={() => record(pending.entry.code)}>
            Record {pending.entry.code} anyway
          </button>
        </div>
      ) : null}
      {noMatches ? (
        <p className="picker-empty muted" id={noticeId} role="status" data-testid="icd10-no-matches">
          No ICD-10 code matches “{query.trim()}”. Try a code (F32), a word from the title (depressive) or a common name
          or abbreviation (PTSD, OCD).
        </p>
      ) : null}
      {open && results.length > 0 ? (
        <ul className="picker-results" id={listId} role="listbox">
          {results.map((r, i) => (
            <li
              key={r.entry.code}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === active}
              data-level={r.entry.level}
              onMouseDown={(e) => {
                e.preventDefault();
                choose(r);
              }}
            >
              <code>{r.entry.code}</code>
              {r.entry.title}
              {r.synonym || (r.subcategories > 0 && !pending) ? (
                <span className="picker-note">
                  {r.synonym ? `“${r.synonym}”` : null}
                  {r.synonym && r.subcategories > 0 && !pending ? " · " : null}
                  {r.subcategories > 0 && !pending ? `${r.subcategories} subcategories` : null}
                </span>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
});
