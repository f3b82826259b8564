/**
 * ICD-10 code picker: type a code or words, arrows to move, Enter to choose. Searches the WHO chapter V table in the
 * browser (app/icd10/icd10.ts search), so every keystroke answers at once. The server validates the chosen code again.
 */
import { forwardRef, useEffect, useId, useMemo, useState } from "react";
import { createIcd10Index, type Icd10Index, type Icd10TableRow } from "~/icd10/icd10";

let cached: Promise<Icd10Index> | null = null;
function loadIndex(): Promise<Icd10Index> {
  cached ??= fetch("/icd10.json", { credentials: "same-origin" })
    .then((r) => {
      if (!r.ok) throw new Error(`ICD-10 list: HTTP ${r.status}`);
      return r.json() as Promise<Icd10TableRow[]>;
    })
    .then((rows) => createIcd10Index(rows))
    .catch((e) => {
      cached = null;
      throw e;
    });
  return cached;
}

export const Icd10Picker = forwardRef<
  HTMLInputElement,
  { value: string; onChange: (code: string) => void; disabled?: boolean; error?: string; onDone?: () => void }
>(function Icd10Picker({ value, onChange, disabled, error, onDone }, ref) {
  const [index, setIndex] = useState<Icd10Index | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const [open, setOpen] = useState(false);
  const listId = useId();
  useEffect(() => {
    loadIndex().then(setIndex, (e) => setLoadError(String(e.message ?? e)));
  }, []);
  const results = useMemo(() => (index && query.trim() ? index.search(query, 12) : []), [index, query]);
  const chosen = index && value ? index.lookup(value) : null;

  function choose(code: string) {
    onChange(code);
    setQuery("");
    setOpen(false);
    onDone?.();
  }

  return (
    <div className="icd10-picker">
      <div className="row" aria-live="polite">
        {value ? (
          <span data-testid="chosen-code">
            <code>{value}</code>{" "}
            {chosen ? chosen.title : index ? <span className="error">not in WHO ICD-10 chapter V</span> : null}
          </span>
        ) : (
          <span className="muted">No code chosen</span>
        )}
      </div>
      <input
        ref={ref}
        id="icd10-search"
        type="search"
        role="combobox"
        aria-expanded={open && results.length > 0}
        aria-controls={listId}
        aria-activedescendant={open && results[active] ? `${listId}-${active}` : undefined}
        aria-label="Search ICD-10 code by code or words"
        placeholder="Search code or words, e.g. F32.1 or depressive"
        autoComplete="off"
        disabled={disabled}
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setActive(0);
          setOpen(true);
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
            if (results[active]) choose(results[active]!.code);
            // A typed code that is not in the list is still passed on, so the server can say why it is refused.
            else if (query.trim()) choose(query.trim().toUpperCase());
          } else if (e.key === "Escape") {
            setQuery("");
            setOpen(false);
            onDone?.();
          }
        }}
        style={{ width: "100%" }}
      />
      {loadError ? (
        <p className="field-error">The code list could not be loaded ({loadError}). Type the code and press Enter.</p>
      ) : null}
      {open && results.length > 0 ? (
        <ul className="picker-results" id={listId} role="listbox">
          {results.map((r, i) => (
            <li
              key={r.code}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === active}
              onMouseDown={(e) => {
                e.preventDefault();
                choose(r.code);
              }}
            >
              <code>{r.code}</code>
              {r.title}
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
