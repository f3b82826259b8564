/**
 * The screening reviewer's workspace (docs/screening.md), as a definition for the one workspace shell
 * (app/work-items/ui/workspace-page.tsx): the item's messages beside the vote (relevance, category, confidence,
 * notes), the vote's check (app/screening/domain/screening.ts:checkVote) and the keymap's screening row.
 */
import { useCallback, useRef } from "react";
import { checkVote, REVIEW_CONFIDENCES, type VoteValues } from "../domain/screening";
import type { ReviewEntryView, VoteResult } from "../screening-review.server";
import type { GuidelinesView } from "~/guidelines/domain/guidelines";
import { NotesField } from "~/work-items/ui/text-limit";
import { commonViewParts, type WorkspaceDefinition } from "~/work-items/ui/workspace-page";
import { VoteValuesSchema } from "../domain/vote-values";

type View = ReviewEntryView & { guidelines: GuidelinesView | null };

const ROLE_NAMES: Record<string, string> = {
  user: "User",
  assistant: "Assistant",
  system: "System",
  developer: "Developer",
  text: "Text",
};

export const voteWorkspace: WorkspaceDefinition<View, VoteValues, VoteResult> = {
  keymap: "screening",
  words: {
    list: { to: "/screening", label: "My items" },
    form: "Vote",
    incomplete: "The vote is incomplete; see the marked fields.",
    stateTestId: "vote-state",
  },
  itemKey: (view) => view.entry.id,
  title: (view) => (
    <>
      Item {view.entry.position} of {view.entry.total}{" "}
      <small className="muted">
        ({view.entry.studyName}, round {view.entry.round})
      </small>
    </>
  ),
  // Drafts are saved shortly after each change while the vote is a draft.
  ...commonViewParts<View, VoteValues>({
    path: "/screening",
    neighbours: (view) => ({ next: view.nextEntryId, previous: view.previousEntryId }),
    initial: (view) => view.values,
    mode: (view) => (!view.entry.roundOpen ? "readOnly" : view.state === "submitted" ? "revision" : "draft"),
  }),
  apply: (v, patch) => ({ ...v, ...patch, ...(patch.relevant === "no" ? { category: "" } : {}) }),
  // The values' one schema, the route's (app/screening/domain/vote-values.ts), and the server's rule, so mistakes
  // show at once; the server checks again.
  schema: VoteValuesSchema,
  check: (values, view) => checkVote(values, view.categories) as Record<string, string>,
  closed: (view) => (view.entry.roundOpen ? null : "This round has closed: every vote is in."),
  onSubmitted: (view, result, navigate) =>
    navigate(view.nextEntryId !== null && !result.roundClosed ? `/screening/${view.nextEntryId}` : "/screening"),
  useParts: function useVoteParts({ view, draft, formRef }) {
    const { values, update, errors } = draft;
    const closed = !view.entry.roundOpen;
    const categoryRef = useRef<HTMLSelectElement | null>(null);
    // Y shows the category select; it takes the focus in the commit that renders it (its ref callback), so that no
    // later key can arrive between the two (a timer here once moved the focus after the next key had been typed).
    const focusCategory = useRef(false);
    const attachCategory = useCallback((el: HTMLSelectElement | null) => {
      categoryRef.current = el;
      if (el && focusCategory.current) {
        focusCategory.current = false;
        el.focus();
      }
    }, []);
    const fieldError = (name: string) =>
      errors[name] ? (
        <p className="field-error" role="alert">
          {errors[name]}
        </p>
      ) : null;
    return {
      // Keys of the keymap's screening row: Y / N relevance, C category, 1–3 confidence.
      onKey: (key) => {
        if (key === "y") {
          // Focus the category select: now if it is shown, else as soon as it is rendered.
          if (categoryRef.current) categoryRef.current.focus();
          else focusCategory.current = true;
          update({ relevant: "yes" });
        } else if (key === "n") update({ relevant: "no" });
        else if (key === "t" && draft.latest().relevant === "yes") categoryRef.current?.focus();
        else if (/^[1-3]$/.test(key)) update({ confidence: REVIEW_CONFIDENCES[Number(key) - 1]! });
        else return false;
        return true;
      },
      main: (
        <div aria-label="Item" data-testid="item-text">
          {view.entry.messages.map((m, i) => (
            <article key={i} className="note-section" data-role={m.role}>
              {view.entry.kind === "conversation" ? (
                <h3>
                  <span className="num">{i + 1}</span> {ROLE_NAMES[m.role] ?? m.role}
                </h3>
              ) : null}
              <p>{m.content}</p>
            </article>
          ))}
        </div>
      ),
      fields: (
        <>
          <fieldset disabled={closed}>
            <legend>
              Relevant to the subset? <kbd>Y</kbd>/<kbd>N</kbd>
            </legend>
            <p className="criterion" data-testid="inclusion-criterion">
              {view.entry.inclusionCriterion ? (
                <>
                  <strong>Inclusion criterion:</strong> {view.entry.inclusionCriterion}
                </>
              ) : (
                <span className="muted">This study has no written inclusion criterion; ask its admin.</span>
              )}
            </p>
            <label className="inline">
              <input
                type="radio"
                name="relevant"
                value="yes"
                checked={values.relevant === "yes"}
                onChange={() => update({ relevant: "yes" })}
              />
              Yes
            </label>
            <label className="inline">
              <input
                type="radio"
                name="relevant"
                value="no"
                checked={values.relevant === "no"}
                onChange={() => update({ relevant: "no" })}
              />
              No
            </label>
            {fieldError("relevant")}
          </fieldset>
          {values.relevant === "yes" ? (
            <>
              <label htmlFor="category">
                Category <kbd>T</kbd>
              </label>
              <select
                id="category"
                ref={attachCategory}
                value={values.category}
                disabled={closed}
                onChange={(e) => update({ category: e.target.value })}
                onKeyDown={(e) => {
                  // Enter or Esc leaves the list, so that the single-key shortcuts work again.
                  if (e.key === "Enter" || e.key === "Escape") {
                    e.preventDefault();
                    formRef.current?.focus();
                  }
                }}
              >
                <option value="">Choose…</option>
                {view.categories.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
              {fieldError("category")}
            </>
          ) : null}
          <fieldset disabled={closed}>
            <legend>
              Confidence <kbd>1</kbd>–<kbd>3</kbd>
            </legend>
            {REVIEW_CONFIDENCES.map((c, i) => (
              <label key={c} className="inline">
                <input
                  type="radio"
                  name="confidence"
                  value={c}
                  checked={values.confidence === c}
                  onChange={() => update({ confidence: c })}
                />
                {c} <small className="muted">({i + 1})</small>
              </label>
            ))}
            {fieldError("confidence")}
          </fieldset>
          <NotesField
            value={values.notes}
            error={errors.notes}
            onChange={(v) => update({ notes: v })}
            disabled={closed}
          />
        </>
      ),
    };
  },
};
