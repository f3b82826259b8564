/**
 * The minimisation review workspace (docs/preparation.md, "The review"), as a definition for the one workspace shell
 * (app/work-items/ui/workspace-page.tsx): the note with every proposal marked in place and what it becomes; beside
 * it the proposals, each accepted, edited or rejected; the text the reviewer marks as missed; the case's exclusion
 * with its reason; the keymap's preparation row.
 */
import { useCallback, useEffect, useRef, useState, type ReactNode } from "react";
import type { PrepCategory, PrepMissedSpan, PrepProposal, PrepSection } from "../../../db/vocabulary";
import type { GuidelinesView } from "~/guidelines/domain/guidelines";
import { LimitedText } from "~/work-items/ui/text-limit";
import type { WorkspaceDefinition } from "~/work-items/ui/workspace-page";
import { CATEGORIES, CATEGORY_LABELS } from "../domain/detectors";
import {
  checkReview,
  MAX_EDIT_CHARS,
  MAX_REASON_CHARS,
  MinimisationValuesSchema,
  type MinimisationValues,
} from "../domain/review";
import type { MinimisationSaveResult, ReviewNoteView } from "../review.server";

type View = ReviewNoteView & { guidelines: GuidelinesView | null };

const link = (id: number | null) => (id !== null ? `/preparation/${id}` : null);

/** What a proposal becomes under the reviewer's decision, as the note shows it. */
function shownBecomes(p: PrepProposal, values: MinimisationValues): { text: string; state: string } {
  const d = values.decisions[p.id];
  if (!d) return { text: p.replacement || "(removed)", state: "open" };
  if (d.action === "reject") return { text: "(kept)", state: "reject" };
  const text = d.action === "edit" ? (d.text ?? "") : p.replacement;
  return { text: text || "(removed)", state: d.action };
}

interface Mark {
  start: number;
  end: number;
  id: string;
  category: PrepCategory;
  becomes: string;
  state: string;
  missed: boolean;
}

/** A section's text with its marks, as text nodes and <mark> elements holding only the note's own characters. */
function SectionText({
  section,
  index,
  marks,
  current,
  onPick,
}: {
  section: PrepSection;
  index: number;
  marks: Mark[];
  current: string | null;
  onPick: (id: string) => void;
}) {
  const parts: ReactNode[] = [];
  let at = 0;
  for (const m of marks) {
    if (m.start > at) parts.push(section.content.slice(at, m.start));
    parts.push(
      <mark
        key={m.id}
        className={`prep-mark cat-${m.category} state-${m.state}${m.id === current ? " current" : ""}`}
        data-proposal={m.id}
        data-category={m.category}
        data-becomes={m.becomes}
        title={`${CATEGORY_LABELS[m.category]} → ${m.becomes}`}
        onClick={() => onPick(m.id)}
      >
        {section.content.slice(m.start, m.end)}
      </mark>,
    );
    at = m.end;
  }
  if (at < section.content.length) parts.push(section.content.slice(at));
  return (
    <p className="note-section prep-text" data-section={index}>
      {parts}
    </p>
  );
}

/** The selection inside one section's text as offsets into its content (text nodes only: the marks add none). */
function selectionInSection(): { section: number; start: number; end: number } | null {
  const sel = typeof window === "undefined" ? null : window.getSelection();
  if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
  const range = sel.getRangeAt(0);
  const container = (n: Node | null) =>
    (n instanceof Element ? n : n?.parentElement)?.closest<HTMLElement>("[data-section]") ?? null;
  const el = container(range.startContainer);
  if (!el || el !== container(range.endContainer)) return null;
  const offsetOf = (node: Node, offset: number) => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let total = 0;
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n === node) return total + offset;
      total += n.textContent?.length ?? 0;
    }
    return node === el ? total : null;
  };
  const start = offsetOf(range.startContainer, range.startOffset);
  const end = offsetOf(range.endContainer, range.endOffset);
  if (start === null || end === null || end <= start) return null;
  return { section: Number(el.dataset.section), start, end };
}

export const minimisationWorkspace: WorkspaceDefinition<View, MinimisationValues, MinimisationSaveResult> = {
  keymap: "preparation",
  // The values' one schema, the route's (app/preparation/domain/review.ts).
  schema: MinimisationValuesSchema,
  words: {
    list: { to: "/preparation", label: "Preparation" },
    form: "Minimisation review",
    incomplete: "The review is incomplete; see the marked fields.",
    stateTestId: "item-state",
  },
  itemKey: (view) => view.note.id,
  title: (view) => (
    <>
      Note {view.note.externalId}{" "}
      <small className="muted">
        ({view.note.projectName}, {view.note.sourceLanguage})
      </small>
    </>
  ),
  state: (view) => view.state,
  progress: (view) => view.progress,
  guidelines: (view) => view.guidelines,
  nav: (view) => ({ next: link(view.nextNoteId), previous: link(view.previousNoteId) }),
  values: (view) => ({
    initial: view.values,
    version: view.version,
    updatedAt: view.updatedAt,
    mode: view.state === "submitted" ? "revision" : "draft",
  }),
  check: (values, view) => checkReview(values, view.note),
  useParts: function useMinimisationParts({ view, draft }) {
    const { values, update, errors } = draft;
    const proposals = view.note.proposals;
    const firstOpen = proposals.find((p) => !view.values.decisions[p.id])?.id ?? proposals[0]?.id ?? null;
    const [current, setCurrent] = useState<string | null>(firstOpen);
    const [selection, setSelection] = useState<{ section: number; start: number; end: number } | null>(null);
    const [missedCategory, setMissedCategory] = useState<PrepCategory>("name");
    const [missedReplacement, setMissedReplacement] = useState("");
    const editRef = useRef<string | null>(null);

    // The selection is kept as it changes, so that a button or a key can mark it after the focus has moved.
    useEffect(() => {
      const onChange = () => {
        const s = selectionInSection();
        if (s) setSelection(s);
      };
      document.addEventListener("selectionchange", onChange);
      return () => document.removeEventListener("selectionchange", onChange);
    }, []);

    useEffect(() => {
      if (current) document.querySelector(`[data-proposal-row="${current}"]`)?.scrollIntoView({ block: "nearest" });
    }, [current]);

    const nextUndecided = useCallback(
      (after: string | null, decisions: MinimisationValues["decisions"]) => {
        const at = after ? proposals.findIndex((p) => p.id === after) : -1;
        const rest = [...proposals.slice(at + 1), ...proposals.slice(0, Math.max(at, 0))];
        return rest.find((p) => !decisions[p.id])?.id ?? null;
      },
      [proposals],
    );

    const decide = (id: string, action: "accept" | "edit" | "reject") => {
      const p = proposals.find((x) => x.id === id)!;
      const decision =
        action === "edit"
          ? { action, text: values.decisions[id]?.text ?? p.replacement }
          : ({ action } as { action: "accept" | "reject" });
      const decisions = { ...values.decisions, [id]: decision };
      update({ decisions });
      if (action === "edit") {
        editRef.current = id;
        setCurrent(id);
      } else setCurrent(nextUndecided(id, decisions) ?? id);
    };

    const attachEdit = useCallback((el: HTMLInputElement | null) => {
      if (el && editRef.current === el.dataset.editFor) {
        editRef.current = null;
        el.focus();
        el.select();
      }
    }, []);

    const markMissed = () => {
      const s = selection ?? selectionInSection();
      if (!s) return false;
      const mark: PrepMissedSpan = { ...s, category: missedCategory, replacement: missedReplacement };
      update({ missed: [...values.missed, mark].sort((a, b) => a.section - b.section || a.start - b.start) });
      setSelection(null);
      window.getSelection()?.removeAllRanges();
      return true;
    };

    const marksOf = (section: number): Mark[] =>
      [
        ...proposals
          .filter((p) => p.section === section)
          .map((p) => ({ ...p, ...shownBecomes(p, values), becomes: shownBecomes(p, values).text, missed: false })),
        ...values.missed.flatMap((m, i) =>
          m.section === section
            ? [
                {
                  ...m,
                  id: `missed-${i}`,
                  becomes: m.replacement || "(removed)",
                  state: "missed",
                  missed: true,
                },
              ]
            : [],
        ),
      ].sort((a, b) => a.start - b.start);

    const selectedText =
      selection && view.note.sections[selection.section]
        ? view.note.sections[selection.section]!.content.slice(selection.start, selection.end)
        : "";
    const decided = proposals.filter((p) => values.decisions[p.id]).length;

    return {
      onKey: (key) => {
        if ((key === "a" || key === "w" || key === "r") && current) {
          decide(current, key === "a" ? "accept" : key === "w" ? "edit" : "reject");
        } else if (key === "u") {
          setCurrent(nextUndecided(current, values.decisions) ?? current);
        } else if (key === "f") {
          markMissed();
        } else return false;
        return true;
      },
      main: (
        <article className="card prep-note" aria-label="Note" data-testid="prep-note">
          {view.note.sections.map((s, i) => (
            <section key={s.order}>
              <h3>{view.sectionTitles[i]}</h3>
              <SectionText section={s} index={i} marks={marksOf(i)} current={current} onPick={setCurrent} />
            </section>
          ))}
          <p className="muted prep-legend">
            Marked text: what the detectors propose, and after it (→) what it becomes. Select text to mark what they
            missed.
          </p>
        </article>
      ),
      fields: (
        <>
          <fieldset className="prep-exclude">
            <legend>Case</legend>
            <label>
              <input
                type="checkbox"
                name="excluded"
                checked={values.excluded}
                onChange={(e) => update({ excluded: e.target.checked })}
              />{" "}
              Exclude this case (rare or violence-related, or identifying after minimisation)
            </label>
            {values.excluded ? (
              <LimitedText
                id="exclusionReason"
                label="Reason for excluding (required)"
                what="A reason"
                value={values.exclusionReason}
                max={MAX_REASON_CHARS}
                error={errors.exclusionReason}
                onChange={(v) => update({ exclusionReason: v })}
              />
            ) : null}
          </fieldset>
          <fieldset>
            <legend>
              Proposals{" "}
              <small className="muted" data-testid="prep-decided">
                {decided} of {proposals.length} decided
              </small>
            </legend>
            {proposals.length === 0 ? <p className="muted">The detectors found nothing in this note.</p> : null}
            <ol className="prep-proposals">
              {proposals.map((p) => {
                const d = values.decisions[p.id];
                const original = view.note.sections[p.section]!.content.slice(p.start, p.end);
                const error = errors[`proposal:${p.id}`];
                return (
                  <li
                    key={p.id}
                    data-proposal-row={p.id}
                    className={`${p.id === current ? "current" : ""} cat-${p.category}`}
                    aria-invalid={error ? true : undefined}
                    onFocus={() => setCurrent(p.id)}
                  >
                    <div className="prep-row-head">
                      <span className={`prep-cat cat-${p.category}`}>{CATEGORY_LABELS[p.category]}</span>{" "}
                      <q>{original}</q> → <strong>{p.replacement || "(removed)"}</strong>
                    </div>
                    <div className="scale-group" role="radiogroup" aria-label={`Decision on “${original}”`}>
                      {(["accept", "edit", "reject"] as const).map((a) => (
                        <label key={a} className={d?.action === a ? "chosen" : ""}>
                          <input
                            type="radio"
                            name={`decision-${p.id}`}
                            value={a}
                            checked={d?.action === a}
                            onChange={() => decide(p.id, a)}
                          />
                          {a === "accept" ? "Accept" : a === "edit" ? "Edit" : "Reject"}
                        </label>
                      ))}
                    </div>
                    {d?.action === "edit" ? (
                      <label className="prep-edit">
                        Becomes{" "}
                        <input
                          type="text"
                          data-edit-for={p.id}
                          ref={attachEdit}
                          value={d.text ?? ""}
                          maxLength={MAX_EDIT_CHARS}
                          placeholder="(empty: removed)"
                          onChange={(e) =>
                            update({
                              decisions: { ...values.decisions, [p.id]: { action: "edit", text: e.target.value } },
                            })
                          }
                        />
                      </label>
                    ) : null}
                    {error ? <p className="field-error">{error}</p> : null}
                  </li>
                );
              })}
            </ol>
          </fieldset>
          <fieldset className="prep-missed">
            <legend>Missed text</legend>
            <p className="muted" data-testid="prep-selection">
              {selectedText ? (
                <>
                  Selected: <q>{selectedText}</q>
                </>
              ) : (
                "Select text in the note to mark it."
              )}
            </p>
            <div className="prep-missed-form">
              <label>
                Category{" "}
                <select
                  name="missedCategory"
                  value={missedCategory}
                  onChange={(e) => setMissedCategory(e.target.value as PrepCategory)}
                >
                  {CATEGORIES.map((c) => (
                    <option key={c} value={c}>
                      {CATEGORY_LABELS[c]}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Becomes{" "}
                <input
                  type="text"
                  name="missedReplacement"
                  value={missedReplacement}
                  maxLength={MAX_EDIT_CHARS}
                  placeholder="(empty: removed)"
                  onChange={(e) => setMissedReplacement(e.target.value)}
                />
              </label>
              <button type="button" className="secondary" disabled={!selectedText} onClick={markMissed}>
                Flag as missed <kbd>F</kbd>
              </button>
            </div>
            {values.missed.length ? (
              <ul className="prep-missed-list">
                {values.missed.map((m, i) => (
                  <li key={`${m.section}-${m.start}-${m.end}`} data-missed-row={i}>
                    <span className={`prep-cat cat-${m.category}`}>{CATEGORY_LABELS[m.category]}</span>{" "}
                    <q>{view.note.sections[m.section]?.content.slice(m.start, m.end)}</q> →{" "}
                    <strong>{m.replacement || "(removed)"}</strong>{" "}
                    <button
                      type="button"
                      className="link"
                      onClick={() => update({ missed: values.missed.filter((_, j) => j !== i) })}
                    >
                      Remove
                    </button>
                    {errors[`missed:${i}`] ? <p className="field-error">{errors[`missed:${i}`]}</p> : null}
                  </li>
                ))}
              </ul>
            ) : null}
          </fieldset>
        </>
      ),
    };
  },
};
